// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * perf side-band records, as a ring buffer holds them one after another:
 * each decoded alone, with its strings inside the record, then applied to
 * the process tables, whose images must stay sorted and disjoint. Thread
 * names and mapped paths must make valid folded lines.
 */
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/procs.h"
#include "bpfprof/sideband.h"
#include "bpfprof/util.h"
#include "fuzz.h"

static bool inside(const char *s, const uint8_t *rec, size_t size)
{
	const uint8_t *p = (const uint8_t *)s;

	return p >= rec && p < rec + size && memchr(p, '\0', rec + size - p);
}

static void check_event(const struct sb_event *ev, const uint8_t *rec, size_t size)
{
	switch (ev->type) {
	case SB_MMAP:
		FUZZ_CHECK(inside(ev->mmap.filename, rec, size));
		FUZZ_CHECK(ev->mmap.build_id_size <= sizeof(ev->mmap.build_id));
		break;
	case SB_COMM:
		FUZZ_CHECK(inside(ev->comm.comm, rec, size));
		break;
	case SB_KSYMBOL:
		FUZZ_CHECK(inside(ev->ksymbol.name, rec, size));
		break;
	case SB_FORK:
	case SB_EXIT:
	case SB_LOST:
		break;
	default:
		FUZZ_CHECK(!"an event of no known type");
	}
}

static void check_image(const struct proc_image *img)
{
	size_t i;

	for (i = 0; i < img->nr_maps; i++) {
		FUZZ_CHECK(img->maps[i].start < img->maps[i].end);
		FUZZ_CHECK(!i || img->maps[i - 1].end <= img->maps[i].start);
		FUZZ_CHECK(img->maps[i].path);
	}
}

static void check_procs(const struct procs *ps)
{
	uint32_t i;
	size_t j;

	for (i = 0; i < ps->nr; i++)
		for (j = 0; j < ps->procs[i]->nr_images; j++)
			check_image(&ps->procs[i]->images[j]);
}

/* Names from the record as frames: a thread name as the root, a mapped path unnamed. */
static void fold_event(const struct sb_event *ev)
{
	struct fuzz_loc loc = { { NULL }, 0, FRAME_USER };

	if (ev->type == SB_COMM)
		fuzz_fold(ev->comm.comm, "/bin/true", &loc, 1);
	else if (ev->type == SB_MMAP)
		fuzz_fold("prog", ev->mmap.filename, &loc, 1);
	else if (ev->type == SB_KSYMBOL)
		fuzz_fold("prog", "[bpf]", &(struct fuzz_loc){ { ev->ksymbol.name }, 1, FRAME_KERNEL },
			  1);
}

int fuzz_sideband(const uint8_t *data, size_t size)
{
	struct perf_event_header hdr;
	struct procs ps;
	struct sb_event ev;
	size_t off = 0, folded = 0;
	uint8_t *whole = xmalloc(size ? size : 1);
	int err;

	/* The whole input as one record. */
	memcpy(whole, data, size);
	err = sideband_decode(whole, size, &ev);
	FUZZ_CHECK(err == 0 || err == 1 || err == -EINVAL);
	if (!err)
		check_event(&ev, whole, size);
	free(whole);

	procs_init(&ps);
	free(ps.proc_root);
	ps.proc_root = xstrdup("/nonexistent/fuzz");	/* never the real /proc */
	while (size - off >= sizeof(hdr)) {
		uint8_t *rec;
		struct proc *owner;
		struct proc_map *m;

		memcpy(&hdr, data + off, sizeof(hdr));
		if (hdr.size < sizeof(hdr) || hdr.size > size - off)
			break;
		/* A copy of exactly the record: a read past it is caught. */
		rec = xmalloc(hdr.size);
		memcpy(rec, data + off, hdr.size);
		off += hdr.size;
		err = sideband_decode(rec, hdr.size, &ev);
		FUZZ_CHECK(err == 0 || err == 1 || err == -EINVAL);
		if (err) {
			free(rec);
			continue;
		}
		check_event(&ev, rec, hdr.size);
		m = procs_apply(&ps, &ev, &owner);
		if (m) {
			FUZZ_CHECK(owner && owner->nr_images);
			FUZZ_CHECK(m->start < m->end && m->file == -1);
			if (owner)
				FUZZ_CHECK(proc_find_map(&ps, owner, owner->images[owner->nr_images - 1].gen,
							 m->start) == m);
		}
		check_procs(&ps);
		if (folded++ < 8)
			fold_event(&ev);
		free(rec);
	}
	procs_prune(&ps, UINT64_MAX);
	procs_release(&ps);
	return 0;
}
