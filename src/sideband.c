// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "bpfprof/sideband.h"
#include "bpfprof/util.h"

#define DATA_PAGES 128		/* per CPU: 512 KiB, some thousands of records */

/* What sample_id_all appends to every record, for sample_type TID|TIME. */
struct sample_id {
	uint32_t pid, tid;
	uint64_t time;
};

struct cpu_buffer {
	int fd;
	struct perf_event_mmap_page *page;
	uint8_t *data;
	size_t size;
};

/* A record copied out of its ring, to be sorted with the others. */
struct pending {
	uint64_t time;
	size_t off, size;	/* in the arena */
};

struct sideband {
	struct cpu_buffer *bufs;
	size_t nbufs;
	uint64_t lost;
	uint8_t *arena;
	size_t arena_len, arena_alloc;
	struct pending *pending;
	size_t npending, pending_alloc;
};

static int open_event(int cpu, bool build_id)
{
	struct perf_event_attr attr = {
		.type = PERF_TYPE_SOFTWARE,
		.config = PERF_COUNT_SW_DUMMY,
		.size = sizeof(attr),
		.sample_type = PERF_SAMPLE_TID | PERF_SAMPLE_TIME,
		.sample_id_all = 1,
		.mmap = 1,		/* executable mappings only: no mmap_data */
		.mmap2 = 1,
		.comm = 1,
		.comm_exec = 1,
		.task = 1,
		.ksymbol = 1,
		.build_id = build_id,
		.use_clockid = 1,
		.clockid = CLOCK_MONOTONIC,
		/* Every record wakes a watcher (sideband_watch): a quiet machine's first news. */
		.watermark = 1,
		.wakeup_watermark = 1,
	};

	return syscall(__NR_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
}

int sideband_open(struct sideband **out, const int *cpus, size_t ncpus)
{
	struct sideband *sb = xcalloc(1, sizeof(*sb));
	size_t page = getpagesize(), i;
	bool build_id = true;

	*out = sb;
	sb->bufs = xcalloc(ncpus, sizeof(*sb->bufs));
	for (i = 0; i < ncpus; i++) {
		struct cpu_buffer *b = &sb->bufs[i];
		void *map;

		b->fd = open_event(cpus[i], build_id);
		if (b->fd < 0 && errno == EINVAL && build_id) {
			/* Before Linux 5.12: device and inode instead of build IDs. */
			build_id = false;
			b->fd = open_event(cpus[i], false);
		}
		if (b->fd < 0)
			return -errno;
		sb->nbufs++;
		map = mmap(NULL, (1 + DATA_PAGES) * page, PROT_READ | PROT_WRITE, MAP_SHARED, b->fd, 0);
		if (map == MAP_FAILED)
			return -errno;
		b->page = map;
		b->data = (uint8_t *)map + page;
		b->size = DATA_PAGES * page;
	}
	return 0;
}

void sideband_free(struct sideband *sb)
{
	size_t i;

	if (!sb)
		return;
	for (i = 0; i < sb->nbufs; i++) {
		if (sb->bufs[i].page)
			munmap(sb->bufs[i].page, getpagesize() + sb->bufs[i].size);
		close(sb->bufs[i].fd);
	}
	free(sb->bufs);
	free(sb->arena);
	free(sb->pending);
	free(sb);
}

uint64_t sideband_lost(const struct sideband *sb)
{
	return sb->lost;
}

/* Copies the records of one ring into the arena; ring offsets wrap. */
static void drain_ring(struct sideband *sb, struct cpu_buffer *b)
{
	uint64_t head = __atomic_load_n(&b->page->data_head, __ATOMIC_ACQUIRE);
	uint64_t tail = b->page->data_tail;

	while (tail < head) {
		struct perf_event_header hdr;
		size_t off = tail % b->size, first, i;
		struct pending *p;

		/* The header itself may wrap. */
		for (i = 0; i < sizeof(hdr); i++)
			((uint8_t *)&hdr)[i] = b->data[(off + i) % b->size];
		if (hdr.size < sizeof(hdr) || tail + hdr.size > head)
			break;
		ALLOC_GROW(sb->arena, sb->arena_len + hdr.size, sb->arena_alloc);
		first = b->size - off < hdr.size ? b->size - off : hdr.size;
		memcpy(sb->arena + sb->arena_len, b->data + off, first);
		memcpy(sb->arena + sb->arena_len + first, b->data, hdr.size - first);
		ALLOC_GROW(sb->pending, sb->npending + 1, sb->pending_alloc);
		p = &sb->pending[sb->npending++];
		p->off = sb->arena_len;
		p->size = hdr.size;
		p->time = 0;
		if (hdr.size >= sizeof(hdr) + sizeof(struct sample_id)) {
			struct sample_id id;

			memcpy(&id, sb->arena + p->off + hdr.size - sizeof(id), sizeof(id));
			p->time = id.time;
		}
		sb->arena_len += hdr.size;
		tail += hdr.size;
	}
	__atomic_store_n(&b->page->data_tail, tail, __ATOMIC_RELEASE);
}

static int pending_cmp(const void *a, const void *b)
{
	const struct pending *x = a, *y = b;

	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->off < y->off ? -1 : x->off > y->off;	/* stable within a ring */
}

int sideband_read(struct sideband *sb, sideband_fn *fn, void *ctx)
{
	size_t i;
	int n = 0;

	sb->arena_len = 0;
	sb->npending = 0;
	for (i = 0; i < sb->nbufs; i++)
		drain_ring(sb, &sb->bufs[i]);
	if (sb->npending)	/* pending is NULL until the first record */
		qsort(sb->pending, sb->npending, sizeof(*sb->pending), pending_cmp);
	for (i = 0; i < sb->npending; i++) {
		struct sb_event ev;

		if (sideband_decode(sb->arena + sb->pending[i].off, sb->pending[i].size, &ev))
			continue;
		if (ev.type == SB_LOST)
			sb->lost += ev.lost;
		fn(ctx, &ev);
		n++;
	}
	return n;
}

int sideband_watch(struct sideband *sb, int epoll_fd)
{
	struct epoll_event ev = { .events = EPOLLIN };
	size_t i;

	for (i = 0; i < sb->nbufs; i++) {
		ev.data.fd = sb->bufs[i].fd;
		if (epoll_ctl(epoll_fd, EPOLL_CTL_ADD, sb->bufs[i].fd, &ev))
			return -errno;
	}
	return 0;
}

/* A NUL-terminated string inside [start, end), or NULL. */
static const char *string_in(const uint8_t *start, const uint8_t *end)
{
	const uint8_t *nul = memchr(start, '\0', end - start);

	return nul ? (const char *)start : NULL;
}

int sideband_decode(const void *rec, size_t size, struct sb_event *ev)
{
	const uint8_t *p = rec, *end;
	struct perf_event_header hdr;
	struct sample_id id;
	uint32_t ids[4];

	if (size < sizeof(hdr) + sizeof(id))
		return -EINVAL;
	memcpy(&hdr, p, sizeof(hdr));
	if (hdr.size != size)
		return -EINVAL;
	memcpy(&id, p + size - sizeof(id), sizeof(id));
	memset(ev, 0, sizeof(*ev));
	ev->time = id.time;
	p += sizeof(hdr);
	end = (const uint8_t *)rec + size - sizeof(id);	/* the record's own fields end here */

	switch (hdr.type) {
	case PERF_RECORD_MMAP2: {
		uint64_t u64s[3];

		/* pid, tid, addr, len, pgoff, 24 bytes of identity, prot, flags, filename */
		if (end - p < 8 + 24 + 24 + 8 + 1)
			return -EINVAL;
		ev->type = SB_MMAP;
		memcpy(ids, p, 8);
		memcpy(u64s, p + 8, 24);
		ev->pid = ids[0];
		ev->tid = ids[1];
		ev->mmap.addr = u64s[0];
		ev->mmap.len = u64s[1];
		ev->mmap.pgoff = u64s[2];
		/* A range that wraps is no mapping. */
		if (ev->mmap.len && ev->mmap.addr + ev->mmap.len <= ev->mmap.addr)
			return -EINVAL;
		p += 32;
		if (hdr.misc & PERF_RECORD_MISC_MMAP_BUILD_ID) {
			ev->mmap.build_id_size = p[0] <= 20 ? p[0] : 20;
			memcpy(ev->mmap.build_id, p + 4, 20);
		} else {
			memcpy(&ev->mmap.maj, p, 4);
			memcpy(&ev->mmap.min, p + 4, 4);
			memcpy(&ev->mmap.ino, p + 8, 8);
		}
		p += 24;
		memcpy(&ev->mmap.prot, p, 4);
		memcpy(&ev->mmap.flags, p + 4, 4);
		p += 8;
		ev->mmap.filename = string_in(p, end);
		return ev->mmap.filename ? 0 : -EINVAL;
	}
	case PERF_RECORD_COMM:
		if (end - p < 8 + 1)
			return -EINVAL;
		ev->type = SB_COMM;
		memcpy(ids, p, 8);
		ev->pid = ids[0];
		ev->tid = ids[1];
		ev->comm.exec = hdr.misc & PERF_RECORD_MISC_COMM_EXEC;
		ev->comm.comm = string_in(p + 8, end);
		return ev->comm.comm ? 0 : -EINVAL;
	case PERF_RECORD_FORK:
	case PERF_RECORD_EXIT:
		/* pid, ppid, tid, ptid, time */
		if (end - p < 16 + 8)
			return -EINVAL;
		ev->type = hdr.type == PERF_RECORD_FORK ? SB_FORK : SB_EXIT;
		memcpy(ids, p, 16);
		ev->pid = ids[0];
		ev->fork.ppid = ids[1];
		ev->tid = ids[2];
		ev->fork.ptid = ids[3];
		return 0;
	case PERF_RECORD_LOST:
		if (end - p < 16)
			return -EINVAL;
		ev->type = SB_LOST;
		memcpy(&ev->lost, p + 8, 8);
		return 0;
	case PERF_RECORD_KSYMBOL: {
		uint16_t flags;

		/* addr, len, ksym_type, flags, name */
		if (end - p < 16 + 1)
			return -EINVAL;
		ev->type = SB_KSYMBOL;
		ev->pid = id.pid;
		ev->tid = id.tid;
		memcpy(&ev->ksymbol.addr, p, 8);
		memcpy(&ev->ksymbol.len, p + 8, 4);
		memcpy(&ev->ksymbol.type, p + 12, 2);
		memcpy(&flags, p + 14, 2);
		ev->ksymbol.unregister = flags & PERF_RECORD_KSYMBOL_FLAGS_UNREGISTER;
		ev->ksymbol.name = string_in(p + 16, end);
		return ev->ksymbol.name ? 0 : -EINVAL;
	}
	default:
		return 1;
	}
}
