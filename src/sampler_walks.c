// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Each runtime's walk (bpf/runtime_walks.bpf.h), loaded when its module
 * first finds a file of the runtime, not with the sampling program: the
 * object is opened again with only that runtime's programs to load and
 * every map the loaded object's own, and its programs go into the
 * tail-call arrays at the runtime's id. The verifier checks them then,
 * alone; a start with no runtime's process checks none of them.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/runtime_info.h"
#include "sampler_internal.h"

static pthread_mutex_t walks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Is p runtime r's program at a sample (at a switch): NAME_at_WHERE? */
static bool walk_program(const struct bpf_program *p, const struct runtime_info *r,
			 const char *where)
{
	const char *name = bpf_program__name(p);
	size_t n = strlen(r->name);

	return !strncmp(name, r->name, n) && !strncmp(name + n, "_at_", 4) &&
	       !strcmp(name + n + 4, where);
}

void sampler_walks_held(struct profile_bpf *skel)
{
	struct bpf_program *p;
	uint32_t i;

	bpf_object__for_each_program(p, skel->obj)
		for (i = 0; i < runtime_info_count(); i++)
			if (walk_program(p, runtime_info_at(i), "sample") ||
			    walk_program(p, runtime_info_at(i), "switch"))
				bpf_program__set_autoload(p, false);
}

/* Runtime kinds (a mask of ids) and their walks' programs: which of them w loads, on s's maps. */
static bool walk_of(const struct bpf_program *p, uint32_t kinds, const char *where)
{
	uint32_t i;

	for (i = 0; i < runtime_info_count(); i++)
		if (kinds & 1u << runtime_info_at(i)->kind && walk_program(p, runtime_info_at(i), where))
			return true;
	return false;
}

static int walk_configure(struct sampler *s, struct profile_bpf *w, uint32_t kinds)
{
	struct bpf_program *p;
	struct bpf_map *m, *own;
	int err;

	bpf_object__for_each_program(p, w->obj)
		bpf_program__set_autoload(p, walk_of(p, kinds, "sample") ||
					     (s->off_cpu && walk_of(p, kinds, "switch")));
	bpf_object__for_each_map(m, w->obj) {
		own = bpf_object__find_map_by_name(s->skel->obj, bpf_map__name(m));
		if (!own)
			return -ENOENT;
		if ((err = bpf_map__reuse_fd(m, bpf_map__fd(own))))
			return err;
	}
	return 0;
}

/* w's loaded program of r's at where, into s's array at r's id. */
static int walk_insert(struct profile_bpf *w, const struct runtime_info *r, const char *where,
		       struct bpf_map *array)
{
	struct bpf_program *p;
	__u32 key = r->kind;
	int fd;

	bpf_object__for_each_program(p, w->obj) {
		if (!walk_program(p, r, where))
			continue;
		fd = bpf_program__fd(p);
		return bpf_map__update_elem(array, &key, sizeof(key), &fd, sizeof(fd), BPF_ANY);
	}
	return -ENOENT;
}

/* The walks of kinds (a mask of runtime ids), loaded in one object and handed samples. */
static int walks_load(struct sampler *s, uint32_t kinds)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = s->btf_path);
	uint64_t start = now_ns();
	const struct runtime_info *r;
	struct profile_bpf *w;
	uint32_t i, n = __builtin_popcount(kinds);
	int err;

	if (!(w = profile_bpf__open_opts(&opts)))
		return -errno;
	if ((err = walk_configure(s, w, kinds)) || (err = profile_bpf__load(w)))
		goto fail;
	for (i = 0; i < runtime_info_count(); i++) {
		r = runtime_info_at(i);
		if (!(kinds & 1u << r->kind))
			continue;
		if ((err = walk_insert(w, r, "sample", s->skel->maps.sample_walks)) ||
		    (s->off_cpu && (err = walk_insert(w, r, "switch", s->skel->maps.switch_walks))))
			goto fail;
		debug("the %s walk loaded in %.1f ms (%u in one load)", r->what,
		      (now_ns() - start) / 1e6, n);
	}
	s->walks[s->nr_walks++] = w;
	s->walks_loaded |= kinds;
	return 0;
fail:
	profile_bpf__destroy(w);
	return err;
}

/*
 * Before the perf events are attached, no sample needs a walk yet: those
 * asked for are loaded together then (sampler_walks_start), as libbpf
 * opens the object, parses the kernel's BTF and loads its own each time.
 */
int sampler_runtime_walk(struct sampler *s, const struct runtime_info *r)
{
	uint32_t kind = 1u << r->kind;
	int err = 0;

	if (r->kind >= RUNTIME_KINDS)
		return -EINVAL;
	pthread_mutex_lock(&walks_lock);
	if (!(s->walks_loaded & kind)) {
		if (s->walks_started)
			err = walks_load(s, kind);
		else
			s->walks_wanted |= kind;
	}
	pthread_mutex_unlock(&walks_lock);
	return err;
}

void sampler_walks_start(struct sampler *s)
{
	uint32_t i;
	int err;

	pthread_mutex_lock(&walks_lock);
	s->walks_started = true;
	if (s->walks_wanted && (err = walks_load(s, s->walks_wanted)))
		for (i = 0; i < runtime_info_count(); i++)
			if (s->walks_wanted & 1u << runtime_info_at(i)->kind)
				warning("cannot load the walk of %s frames: %s; they are left out (-v "
					"shows the verifier's log)", runtime_info_at(i)->what,
					strerror(-err));
	pthread_mutex_unlock(&walks_lock);
}

void sampler_walks_release(struct sampler *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_walks; i++)
		profile_bpf__destroy(s->walks[i]);
	s->nr_walks = 0;
}
