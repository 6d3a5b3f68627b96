// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <linux/membarrier.h>
#include <linux/perf_event.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/btf.h>
#include <bpf/libbpf.h>

#include "bpfprof/bpf_settings.h"	/* before the skeleton: its .rodata is one */
#include "bpfprof/sampler.h"
#include "bpfprof/util.h"
#include "profile.skel.h"

#define BATCH 1024

/* Where a stack id's IPs were copied, in its set's current epoch. */
struct stack_slot {
	uint32_t epoch;		/* the set's epoch when it was read; stale otherwise */
	uint32_t first;		/* into the set's ips */
	uint32_t n;
};

/*
 * One map set's stacks as read so far. They stay in the set's stack map from
 * one read to the next: a stack seen again keeps its id there, so it is
 * neither read nor named again. Only when the map fills up is it cleared,
 * and the epoch (part of every cache key) starts anew. A set that fills up
 * at every read (many new stacks a second) is churning: its stacks are
 * taken out of the map as they are read, and it starts anew every time.
 */
struct set_stacks {
	struct stack_slot *slots;	/* indexed by stack id */
	/*
	 * --unwind auto: the walked user stacks of the set's last drain, by
	 * hash, their frames in walked_ips. Apart from the stack map's epochs:
	 * they take no room there.
	 */
	struct walked_slot {
		uint64_t hash;
		struct stack_slot slot;
	} *walked;
	uint32_t nr_walked, walked_alloc;
	struct itab walked_index;
	uint64_t *walked_ips;
	size_t nr_walked_ips, walked_ips_alloc;
	/* The Python stacks of the set's last drain, by hash, their frames in py_frames. */
	struct py_slot {
		uint64_t hash;
		uint32_t first, n, end;
	} *py;
	uint32_t nr_py, py_alloc;
	struct itab py_index;
	struct py_frame *py_frames;
	size_t nr_py_frames, py_frames_alloc;
	uint32_t epoch;
	uint32_t known;			/* stacks read in this epoch */
	bool churning;
	uint64_t collisions, counted;	/* the set's collisions and counts at its last read */
	uint64_t *ips;
	size_t nr_ips, ips_alloc;
};

struct sampler {
	struct profile_bpf *skel;
	struct bpf_link **links;
	size_t nr_links;
	struct ring_buffer *rb;
	sample_fn *on_sample;
	void (*before_read)(void *ctx);
	void (*on_table_request)(void *ctx, const struct table_request *r);
	void *ctx;
	unsigned active;	/* the set the program writes to */
	uint32_t flips;		/* drains begun: active_set, whose lowest bit is active */
	bool off_cpu;		/* on_switch attached at the start */
	bool walking;		/* --unwind auto */
	bool python;		/* and Python frames with it */
	const int *cpus;	/* the config's: perf events on these, at this frequency */
	size_t ncpus;
	uint32_t frequency;
	int *event_fds;		/* [ncpus], opened disabled; -1 once a link owns it */
	bool stopped;

	/* Reading a set. */
	struct set_stacks stacks[2];
	uint32_t nr_slots;
	uint32_t epochs;		/* epochs begun so far, over both sets */
	struct sample_key *keys;
	__u64 *values;
	__u64 *walk_keys;	/* --unwind auto: a batch of walked stacks, hashes and frames */
	__u64 *walk_ips;	/* (or of Python stacks) */

	/* Accounting. */
	int nr_cpus;
	struct sample_stats *percpu;
	struct sampler_stats stats;
};

static long perf_event_open(struct perf_event_attr *attr, pid_t pid, int cpu, int group,
			    unsigned long flags)
{
	return syscall(__NR_perf_event_open, attr, pid, cpu, group, flags);
}

/*
 * The distance from a CPU's run queue to its preempt count, both per-CPU
 * variables: their offsets in the kernel BTF's per-CPU section. 0 if unknown.
 */
static int64_t preempt_count_from_rq(const char *btf_path)
{
	struct btf *btf = btf_path ? btf__parse(btf_path, NULL) : btf__load_vmlinux_btf();
	int64_t rq = -1, count = -1;
	const struct btf_var_secinfo *v;
	const struct btf_type *sec;
	const char *name;
	int id, i;

	if (!btf)
		return 0;
	id = btf__find_by_name_kind(btf, ".data..percpu", BTF_KIND_DATASEC);
	sec = id > 0 ? btf__type_by_id(btf, id) : NULL;
	for (i = 0, v = sec ? btf_var_secinfos(sec) : NULL; sec && i < btf_vlen(sec); i++, v++) {
		name = btf__name_by_offset(btf, btf__type_by_id(btf, v->type)->name_off);
		if (!strcmp(name, "runqueues"))
			rq = v->offset;
		else if (!strcmp(name, "__preempt_count"))
			count = v->offset;
	}
	btf__free(btf);
	return rq >= 0 && count >= 0 ? count - rq : 0;
}

/* Settings ---------------------------------------------------------------- */

static uint32_t round_pow2(uint32_t n)
{
	uint32_t r = 1;

	while (r < n)
		r <<= 1;
	return r;
}

/*
 * The program's settings (bpf_settings.h): every one from cfg, here alone.
 * cfg->cfi_unwind is the walk as loaded (off where this kernel cannot).
 */
static struct bpf_settings bpf_settings_of(const struct sampler_config *cfg)
{
	return (struct bpf_settings){
		.filter_tgids = cfg->ntgids > 0,
		.filter_pids = cfg->npids > 0,
		.filter_cgroup = cfg->cgroup_fd >= 0,
		.include_idle = cfg->include_idle,
		.kernel_stacks = cfg->kernel_stacks,
		.user_stacks = cfg->user_stacks,
		.dwarf_unwind = cfg->dwarf_unwind,
		.cfi_unwind = cfg->cfi_unwind,
		/* Python processes are found by their mappings, which only the walk reads. */
		.python_frames = cfg->cfi_unwind && cfg->python_frames,
		.stack_copy_bytes = cfg->stack_copy_bytes,
		.min_block_ns = cfg->min_block_ns,
		.preempt_count_from_rq = preempt_count_from_rq(cfg->btf_path),
	};
}

static int configure(struct sampler *s, const struct sampler_config *cfg)
{
	struct profile_bpf *skel = s->skel;
	struct bpf_map *stacks[] = { skel->maps.stacks0, skel->maps.stacks1 };
	struct bpf_map *counts[] = { skel->maps.counts0, skel->maps.counts1 };
	size_t i;
	int err;

	skel->rodata->settings = bpf_settings_of(cfg);
	bpf_program__set_autoload(skel->progs.on_switch, cfg->off_cpu);
	s->walking = skel->rodata->settings.cfi_unwind;
	s->python = skel->rodata->settings.python_frames;
	/* Without the walk, its maps are left at their smallest. */
	if ((err = bpf_map__set_max_entries(skel->maps.unwind_rows,
					    cfg->cfi_unwind ? cfg->unwind_rows : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.ustacks0,
					    cfg->cfi_unwind ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.ustacks1,
					    cfg->cfi_unwind ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.pystacks0,
					    s->python ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.pystacks1,
					    s->python ? cfg->stack_storage_size : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.py_notices,
					    s->python ? 1u << 20 : (uint32_t)getpagesize())))
		return err;
	for (i = 0; i < 2; i++) {
		if ((err = bpf_map__set_max_entries(stacks[i], cfg->stack_storage_size)) ||
		    (err = bpf_map__set_max_entries(counts[i], cfg->max_stacks)))
			return err;
	}
	if ((err = bpf_map__set_max_entries(skel->maps.fallback, cfg->ring_buffer_bytes)))
		return err;
	if ((err = bpf_map__set_max_entries(skel->maps.tgid_filter, cfg->ntgids ? cfg->ntgids : 1)) ||
	    (err = bpf_map__set_max_entries(skel->maps.pid_filter, cfg->npids ? cfg->npids : 1)))
		return err;
	/* Stack ids are bucket indices: at most the power of two above the size. */
	s->nr_slots = round_pow2(cfg->stack_storage_size);
	return 0;
}

static int fill_filters(struct sampler *s, const struct sampler_config *cfg)
{
	__u8 one = 1;
	__u32 zero = 0;
	size_t i;
	int err;

	for (i = 0; i < cfg->ntgids; i++)
		if ((err = bpf_map__update_elem(s->skel->maps.tgid_filter, &cfg->tgids[i],
						sizeof(__u32), &one, 1, BPF_ANY)))
			return err;
	for (i = 0; i < cfg->npids; i++)
		if ((err = bpf_map__update_elem(s->skel->maps.pid_filter, &cfg->pids[i],
						sizeof(__u32), &one, 1, BPF_ANY)))
			return err;
	if (cfg->cgroup_fd >= 0) {
		__u32 fd = cfg->cgroup_fd;

		if ((err = bpf_map__update_elem(s->skel->maps.cgroup_filter, &zero, sizeof(zero), &fd,
						sizeof(fd), BPF_ANY)))
			return err;
	}
	return 0;
}

/*
 * First the generation counters (and with the walk, what reads new
 * processes' mappings): whoever tracks processes after us must not miss one.
 */
static int attach_trackers(struct sampler *s)
{
	struct bpf_program *trackers[] = { s->skel->progs.on_exec, s->skel->progs.on_fork };
	size_t i;

	for (i = 0; i < ARRAY_SIZE(trackers); i++) {
		struct bpf_link *link = bpf_program__attach(trackers[i]);

		if (!link) {
			int err = -errno;

			error("cannot attach the BPF program %s: %s", bpf_program__name(trackers[i]),
			      strerror(-err));
			return err;
		}
		s->links[s->nr_links++] = link;
	}
	return 0;
}

/*
 * One CPU-clock event per CPU, opened disabled: a refusal shows before
 * anything else starts; sampler_start() attaches the program and enables them.
 */
static int open_events(struct sampler *s)
{
	size_t i;

	s->event_fds = xmalloc(s->ncpus * sizeof(*s->event_fds));
	for (i = 0; i < s->ncpus; i++)
		s->event_fds[i] = -1;
	for (i = 0; i < s->ncpus; i++) {
		struct perf_event_attr attr = {
			.type = PERF_TYPE_SOFTWARE,
			.config = PERF_COUNT_SW_CPU_CLOCK,
			.size = sizeof(attr),
			.freq = 1,
			.sample_freq = s->frequency,
			.disabled = 1,
		};

		s->event_fds[i] = perf_event_open(&attr, -1, s->cpus[i], -1, PERF_FLAG_FD_CLOEXEC);
		if (s->event_fds[i] < 0) {
			int err = -errno;

			error("cannot open a cpu-clock perf event on CPU %d: %s%s", s->cpus[i],
			      strerror(errno),
			      errno == EACCES || errno == EPERM
				      ? "; the kernel refuses perf events to this process (a seccomp "
					"filter, a security module, a container): run bpfprof where they "
					"are allowed"
				      : "");
			return err;
		}
	}
	return 0;
}

int sampler_start(struct sampler *s)
{
	size_t i;

	if (s->off_cpu) {
		struct bpf_link *link = bpf_program__attach(s->skel->progs.on_switch);

		if (!link) {
			int err = -errno;

			error("cannot attach the BPF program to the scheduler's switch: %s",
			      strerror(-err));
			return err;
		}
		s->links[s->nr_links++] = link;
	}
	for (i = 0; i < s->ncpus && s->event_fds; i++) {
		struct bpf_link *link;
		int err;

		/* Attaching enables the event. */
		link = bpf_program__attach_perf_event(s->skel->progs.on_sample, s->event_fds[i]);
		if (!link) {
			err = -errno;
			error("cannot attach the BPF program to CPU %d: %s", s->cpus[i], strerror(-err));
			return err;
		}
		/* The link owns the perf fd from here on. */
		s->links[s->nr_links++] = link;
		s->event_fds[i] = -1;
	}
	return 0;
}

static void detach(struct sampler *s)
{
	size_t i;

	for (i = 0; i < s->nr_links; i++)
		bpf_link__destroy(s->links[i]);
	s->nr_links = 0;
}

/* Samples ----------------------------------------------------------------- */

static uint32_t stack_depth(const uint64_t *ips, uint32_t max)
{
	uint32_t n = 0;

	while (n < max && ips[n])
		n++;
	return n;
}

/* A stack's bytes in a record as a count of frames, within 0..BPFPROF_MAX_DEPTH. */
static uint32_t frames_in(int32_t bytes)
{
	uint32_t n = bytes > 0 ? (uint32_t)bytes / 8 : 0;

	return n < BPFPROF_MAX_DEPTH ? n : BPFPROF_MAX_DEPTH;
}

/* A record's sample, stacks apart. */
static void head_sample(const struct record_head *h, struct raw_sample *rs)
{
	rs->tgid = h->tgid;
	rs->pid = h->pid;
	rs->gen = h->gen;
	rs->cgroup_id = h->cgroup_id;
	memcpy(rs->comm, h->comm, sizeof(rs->comm));
	rs->count = 1;
}

static void on_dwarf_record(struct sampler *s, const struct dwarf_record *r, size_t size)
{
	struct raw_user_state user = { r->ip, r->sp, r->bp, r->stack, r->stack_bytes };
	struct raw_sample rs = { 0 };

	if (size < offsetof(struct dwarf_record, stack) + r->stack_bytes)
		return;
	s->stats.received++;
	head_sample(&r->head, &rs);
	rs.kstack.ips = (const uint64_t *)r->kstack;
	rs.kstack.n = r->head.kstack_bytes > 0
		? stack_depth(rs.kstack.ips, r->head.kstack_bytes / 8) : 0;
	rs.user = r->ip ? &user : NULL;
	s->on_sample(s->ctx, &rs);
}

static int on_record(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;
	const struct fallback_record *r = data;
	struct raw_sample rs = { 0 };

	if (size >= sizeof(uint32_t) && r->head.kind == RECORD_DWARF) {
		if (size >= offsetof(struct dwarf_record, stack))
			on_dwarf_record(s, data, size);
		return 0;
	}
	if (size < offsetof(struct fallback_record, ips) || r->state >= STATE_MAX)
		return 0;
	/* __u64 and uint64_t are the same width but distinct types. */
	rs.kstack.ips = (const uint64_t *)r->ips;
	rs.kstack.n = frames_in(r->head.kstack_bytes);
	rs.ustack.ips = rs.kstack.ips + rs.kstack.n;
	rs.ustack.n = frames_in(r->ustack_bytes);
	if (size < offsetof(struct fallback_record, ips) + (rs.kstack.n + rs.ustack.n) * 8)
		return 0;
	rs.kstack.n = stack_depth(rs.kstack.ips, rs.kstack.n);
	rs.ustack.n = stack_depth(rs.ustack.ips, rs.ustack.n);
	head_sample(&r->head, &rs);
	if (r->head.kind == RECORD_OFF_CPU) {
		rs.state = r->state;
		rs.count = r->value;
		s->stats.received_off_ns += r->value;
	} else {
		s->stats.received++;
	}
	rs.walk = r->unwind;
	rs.py.frames = r->py.frames;
	rs.py.n = r->py.n < PY_MAX_FRAMES ? r->py.n : PY_MAX_FRAMES;
	rs.py.end = r->py.end;
	s->on_sample(s->ctx, &rs);
	return 0;
}

static int on_table_request(void *ctx, void *data, size_t size)
{
	struct sampler *s = ctx;

	if (size >= sizeof(struct table_request) && s->on_table_request)
		s->on_table_request(s->ctx, data);
	return 0;
}

int sampler_poll(struct sampler *s, int timeout_ms)
{
	int n = ring_buffer__poll(s->rb, timeout_ms);

	/* --unwind dwarf's records wake us only in bulk: take what came meanwhile. */
	if (n == 0)
		n = ring_buffer__consume(s->rb);
	return n == -EINTR ? 0 : n;
}

/*
 * A churning set's stack is taken out of its map as it is read: one system
 * call, where clearing it later would cost two. Kernels before 6.11 cannot:
 * then clear_stacks() takes it out.
 */
static int read_stack(const struct set_stacks *st, int map_fd, __s32 id, uint64_t *ips)
{
	if (st->churning && !bpf_map_lookup_and_delete_elem(map_fd, &id, ips))
		return 0;
	return bpf_map_lookup_elem(map_fd, &id, ips);
}

/* Copies stack id's IPs out of the set's stack map, once per epoch. */
static const struct stack_slot *load_stack(struct set_stacks *st, int map_fd, __s32 id,
					   uint32_t nr_slots)
{
	struct stack_slot *slot;

	if (id < 0 || (uint32_t)id >= nr_slots)
		return NULL;
	slot = &st->slots[id];
	if (slot->epoch != st->epoch) {
		ALLOC_GROW(st->ips, st->nr_ips + BPFPROF_MAX_DEPTH, st->ips_alloc);
		memset(st->ips + st->nr_ips, 0, BPFPROF_MAX_DEPTH * sizeof(uint64_t));
		slot->epoch = st->epoch;
		slot->first = st->nr_ips;
		slot->n = 0;
		if (!read_stack(st, map_fd, id, st->ips + st->nr_ips)) {
			slot->n = stack_depth(st->ips + st->nr_ips, BPFPROF_MAX_DEPTH);
			st->nr_ips += slot->n;
		}
		st->known++;
	}
	return slot;
}

static bool walked_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct set_stacks *)owner)->walked[idx].hash == *(const uint64_t *)key;
}

/* A walked user stack read by read_walked(), by its hash; NULL if none. */
static const struct stack_slot *load_walked(struct set_stacks *st, uint64_t hash)
{
	uint32_t idx = itab_find(&st->walked_index, hash, walked_eq, st, &hash);

	return idx == ITAB_NONE ? NULL : &st->walked[idx].slot;
}

/* A walked stack taken out of the map: kept unless known (a hash is its stack's content's). */
static void keep_walked(struct set_stacks *st, uint64_t hash, const void *value)
{
	const uint64_t *ips = value;
	struct walked_slot *w;

	if (load_walked(st, hash))
		return;
	ALLOC_GROW(st->walked, st->nr_walked + 1, st->walked_alloc);
	w = &st->walked[st->nr_walked];
	w->hash = hash;
	w->slot = (struct stack_slot){ 0, st->nr_walked_ips, stack_depth(ips, BPFPROF_MAX_DEPTH) };
	ALLOC_GROW(st->walked_ips, st->nr_walked_ips + w->slot.n, st->walked_ips_alloc);
	memcpy(st->walked_ips + st->nr_walked_ips, ips, w->slot.n * sizeof(*ips));
	st->nr_walked_ips += w->slot.n;
	itab_insert(&st->walked_index, hash, st->nr_walked++);
}

static bool py_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct set_stacks *)owner)->py[idx].hash == *(const uint64_t *)key;
}

/* A Python stack read by read_set(), by its hash; NULL if none. */
static const struct py_slot *load_python(struct set_stacks *st, uint64_t hash)
{
	uint32_t idx = itab_find(&st->py_index, hash, py_eq, st, &hash);

	return idx == ITAB_NONE ? NULL : &st->py[idx];
}

static void keep_python(struct set_stacks *st, uint64_t hash, const void *value)
{
	const struct py_stack *ps = value;
	uint32_t n = ps->n < PY_MAX_FRAMES ? ps->n : PY_MAX_FRAMES;
	struct py_slot *p;

	if (load_python(st, hash))
		return;
	ALLOC_GROW(st->py, st->nr_py + 1, st->py_alloc);
	p = &st->py[st->nr_py];
	*p = (struct py_slot){ hash, st->nr_py_frames, n, ps->end };
	ALLOC_GROW(st->py_frames, st->nr_py_frames + n, st->py_frames_alloc);
	memcpy(st->py_frames + st->nr_py_frames, ps->frames, n * sizeof(*ps->frames));
	st->nr_py_frames += n;
	itab_insert(&st->py_index, hash, st->nr_py++);
}

/*
 * Takes every stack out of a map of stacks by hash (walked or Python), in
 * batches, into the set's table: the program puts a stack there again if
 * it meets it again.
 */
static int take_stacks(struct sampler *s, unsigned set, int fd, size_t value_size,
		       void (*keep)(struct set_stacks *st, uint64_t hash, const void *value))
{
	__u64 in = 0, out = 0;
	bool first = true, done = false;

	while (!done) {
		__u32 i, n = BATCH;
		int err;

		err = bpf_map_lookup_and_delete_batch(fd, first ? NULL : &in, &out, s->walk_keys,
						      s->walk_ips, &n, NULL);
		if (err && err != -ENOENT) {
			error("cannot read the map of walked stacks: %s", strerror(-err));
			return err;
		}
		done = err != 0;
		first = false;
		in = out;
		for (i = 0; i < n; i++)
			keep(&s->stacks[set], s->walk_keys[i], (const char *)s->walk_ips + i * value_size);
	}
	return 0;
}

/* The walked and Python stacks of the set's last drain let go, their room kept for the next. */
static void empty_hashed(struct set_stacks *st)
{
	st->nr_walked = 0;
	st->nr_walked_ips = 0;
	itab_clear(&st->walked_index);
	st->nr_py = 0;
	st->nr_py_frames = 0;
	itab_clear(&st->py_index);
}

static void free_hashed(struct set_stacks *st)
{
	free(st->walked);
	free(st->walked_ips);
	itab_release(&st->walked_index);
	free(st->py);
	free(st->py_frames);
	itab_release(&st->py_index);
}

/*
 * The set's walked user stacks and Python stacks, all its samples name: the
 * program put each in the map as the set was active, and had finished
 * (wait_for_programs) when the map is read. Those of the last drain are let
 * go: kept, they would grow with every new process's stacks (an agent's RSS
 * by 20 MB in 30 minutes of churn, until 65,536 stacks were held).
 */
static int read_walked(struct sampler *s, unsigned set)
{
	struct set_stacks *st = &s->stacks[set];
	int err;

	empty_hashed(st);
	err = take_stacks(s, set, bpf_map__fd(set ? s->skel->maps.ustacks1 : s->skel->maps.ustacks0),
			  BPFPROF_MAX_DEPTH * sizeof(__u64), keep_walked);
	if (!err && s->python)
		err = take_stacks(s, set,
				  bpf_map__fd(set ? s->skel->maps.pystacks1 : s->skel->maps.pystacks0),
				  sizeof(struct py_stack), keep_python);
	return err;
}

/* Points out at a loaded stack; only once all loads are done, as ips moves. */
static void set_stack(const struct set_stacks *st, const struct stack_slot *slot, __s32 id,
		      struct raw_stack *out)
{
	if (!slot)
		return;
	out->ips = st->ips + slot->first;
	out->n = slot->n;
	out->cache_key = (uint64_t)st->epoch << 32 | (uint32_t)id;
}

/*
 * Empties a stack map: the stacks the counts named, and those they did not
 * (the other stack of their sample collided: the ring buffer took it whole).
 */
static void clear_stacks(int map_fd)
{
	__u32 key, next, *ids = NULL;
	size_t n = 0, alloc = 0, i;
	int err;

	for (err = bpf_map_get_next_key(map_fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(map_fd, &key, &next)) {
		ALLOC_GROW(ids, n + 1, alloc);
		ids[n++] = next;
		key = next;
	}
	for (i = 0; i < n; i++)
		bpf_map_delete_elem(map_fd, &ids[i]);
	free(ids);
}

/* Reads and empties one map set; nothing writes to it meanwhile. */
static int read_set(struct sampler *s, unsigned set)
{
	int counts_fd = bpf_map__fd(set ? s->skel->maps.counts1 : s->skel->maps.counts0);
	int stacks_fd = bpf_map__fd(set ? s->skel->maps.stacks1 : s->skel->maps.stacks0);
	struct set_stacks *st = &s->stacks[set];
	__u32 in = 0, out = 0;
	bool first = true, done = false;
	int err;

	if (s->walking && (err = read_walked(s, set)))
		return err;

	while (!done) {
		__u32 i, n = BATCH;

		err = bpf_map_lookup_and_delete_batch(counts_fd, first ? NULL : &in, &out, s->keys,
						      s->values, &n, NULL);
		if (err && err != -ENOENT) {
			error("cannot read the counts map: %s", strerror(-err));
			return err;
		}
		done = err != 0;
		first = false;
		in = out;
		for (i = 0; i < n; i++) {
			const struct sample_key *k = &s->keys[i];
			const struct stack_slot *kslot, *uslot;
			const struct py_slot *py;
			struct raw_sample rs = { 0 };

			rs.tgid = k->tgid;
			rs.pid = k->pid;
			rs.gen = k->gen;
			rs.cgroup_id = k->cgroup_id;
			memcpy(rs.comm, k->comm, sizeof(rs.comm));
			kslot = load_stack(st, stacks_fd, k->kstack_id, s->nr_slots);
			uslot = k->ustack_hash ? load_walked(st, k->ustack_hash)
					       : load_stack(st, stacks_fd, k->ustack_id, s->nr_slots);
			set_stack(st, kslot, k->kstack_id, &rs.kstack);
			if (!k->ustack_hash) {
				set_stack(st, uslot, k->ustack_id, &rs.ustack);
			} else if (uslot) {
				/* Named by content: the key holds from drain to drain. */
				rs.ustack.ips = st->walked_ips + uslot->first;
				rs.ustack.n = uslot->n;
				rs.ustack.cache_key = k->ustack_hash | 1ull << 63;
			}
			rs.walk = k->unwind;
			if (k->py_hash && (py = load_python(st, k->py_hash))) {
				rs.py.frames = st->py_frames + py->first;
				rs.py.n = py->n;
				rs.py.end = py->end;
			}
			rs.count = s->values[i];
			rs.state = k->state < STATE_MAX ? k->state : STATE_SLEEPING;
			if (rs.state == STATE_RUNNING)
				s->stats.drained[set] += rs.count;
			else
				s->stats.drained_off_ns[set] += rs.count;
			s->on_sample(s->ctx, &rs);
		}
		/* A long read (many new stacks to name) must not let the ring buffer fill. */
		ring_buffer__consume(s->rb);
	}
	return 0;
}

static uint64_t stack_collisions(const struct sampler *s, unsigned set)
{
	return s->stats.total[STAT_COLLISION_SET0 + set];
}

static void new_epoch(struct sampler *s, unsigned set)
{
	struct set_stacks *st = &s->stacks[set];

	st->epoch = ++s->epochs;
	st->known = 0;
	free(st->ips);
	st->ips = NULL;
	st->nr_ips = st->ips_alloc = 0;
}

/*
 * A stack that collides in the map collides at every sample until the map
 * is cleared, and goes through the ring buffer, copied whole: dear for the
 * program and for us. So a map is cleared when more than one sample in 64
 * collided since its last read, or when a quarter of it is filled with
 * stacks read (a new stack then collides one time in four). A set cleared
 * after a read churns: its stacks are taken as the next read reads them,
 * and the map cleared of the rest, until a read finds it settled.
 */
static void forget_stacks_if_full(struct sampler *s, unsigned set)
{
	struct set_stacks *st = &s->stacks[set];
	uint64_t collided = stack_collisions(s, set) - st->collisions;
	uint64_t counted = s->stats.drained[set] - st->counted;
	bool full = st->known > s->nr_slots / 4 || collided * 64 > counted + collided;

	st->collisions = stack_collisions(s, set);
	st->counted = s->stats.drained[set];
	if (!full && !st->churning)
		return;
	if (st->churning != full)
		debug("drain %llu: stack map %u %s (%u stacks read; %llu samples counted, %llu collided)",
		      (unsigned long long)s->stats.drains, set,
		      full ? "churns: stacks taken as read" : "settles: stacks kept", st->known,
		      (unsigned long long)counted, (unsigned long long)collided);
	clear_stacks(bpf_map__fd(set ? s->skel->maps.stacks1 : s->skel->maps.stacks0));
	new_epoch(s, set);
	st->churning = full;
}

static int read_stats(struct sampler *s)
{
	__u32 zero = 0;
	int cpu, i;

	if (bpf_map__lookup_elem(s->skel->maps.stats, &zero, sizeof(zero), s->percpu,
				 s->nr_cpus * sizeof(*s->percpu), 0))
		return -errno;
	memset(s->stats.total, 0, sizeof(s->stats.total));
	for (cpu = 0; cpu < s->nr_cpus; cpu++) {
		const struct sample_stats *c = &s->percpu[cpu];

		for (i = 0; i < STAT_MAX; i++)
			s->stats.total[i] += c->v[i];
		s->stats.recorded_per_cpu[cpu] = c->v[STAT_USER_MODE] + c->v[STAT_KERNEL_MODE];
	}
	return 0;
}

/*
 * After this returns, no program run that read the old active_set is still
 * going: programs on perf events run with interrupts off, and membarrier's
 * MEMBARRIER_CMD_GLOBAL waits for an RCU grace period, which waits for them.
 */
static void wait_for_programs(void)
{
	if (syscall(__NR_membarrier, MEMBARRIER_CMD_GLOBAL, 0, 0) < 0)
		usleep(20000);	/* nohz_full: programs take microseconds */
}

/* Counts read from a set must equal the samples the program put into it. */
static void check_accounting(struct sampler *s, unsigned set)
{
	if (s->stats.drained[set] == s->stats.total[STAT_COUNTED_SET0 + set] &&
	    s->stats.drained_off_ns[set] == s->stats.total[STAT_OFF_NS_SET0 + set])
		return;
	s->stats.mismatches++;
	debug("drain %llu: read %llu samples and %llu ns off the CPU from set %u, the program "
	      "counted %llu and %llu", (unsigned long long)s->stats.drains,
	      (unsigned long long)s->stats.drained[set],
	      (unsigned long long)s->stats.drained_off_ns[set], set,
	      (unsigned long long)s->stats.total[STAT_COUNTED_SET0 + set],
	      (unsigned long long)s->stats.total[STAT_OFF_NS_SET0 + set]);
}

int sampler_drain(struct sampler *s)
{
	unsigned old = s->active;
	int err;

	s->flips++;
	s->active = s->flips & 1;
	__atomic_store_n(&s->skel->bss->active_set, s->flips, __ATOMIC_SEQ_CST);
	wait_for_programs();
	s->stats.drains++;
	if (s->before_read)
		s->before_read(s->ctx);
	ring_buffer__consume(s->rb);
	if ((err = read_set(s, old)))
		return err;
	if ((err = read_stats(s)))
		return err;
	/* The active set is still filling; only the old one can be checked. */
	check_accounting(s, old);
	forget_stacks_if_full(s, old);
	return 0;
}

int sampler_stop(struct sampler *s)
{
	int err;

	if (s->stopped)
		return 0;
	s->stopped = true;
	detach(s);
	wait_for_programs();
	s->stats.drains++;
	if (s->before_read)
		s->before_read(s->ctx);
	ring_buffer__consume(s->rb);
	if ((err = read_set(s, 0)) || (err = read_set(s, 1)) || (err = read_stats(s)))
		return err;
	check_accounting(s, 0);
	check_accounting(s, 1);
	return 0;
}

void sampler_stats(const struct sampler *s, struct sampler_stats *out)
{
	*out = s->stats;
	out->walking = s->walking;
	out->python = s->python;
	out->recorded_per_cpu = xmalloc(s->nr_cpus * sizeof(uint64_t));
	memcpy(out->recorded_per_cpu, s->stats.recorded_per_cpu, s->nr_cpus * sizeof(uint64_t));
}

void sampler_table_maps(struct sampler *s, int *rows_fd, int *files_fd)
{
	*rows_fd = s->walking ? bpf_map__fd(s->skel->maps.unwind_rows) : -1;
	*files_fd = s->walking ? bpf_map__fd(s->skel->maps.unwind_files) : -1;
}

int sampler_set_mappings(struct sampler *s, uint32_t tgid, uint32_t gen,
			 const struct proc_map *maps, size_t nr)
{
	struct proc_mappings *m;
	size_t i;
	int err;

	if (!s->walking)
		return 0;
	m = xcalloc(1, sizeof(*m));
	m->gen = gen;
	for (i = 0; i < nr && m->nr < UNWIND_MAX_MAPPINGS; i++) {
		struct exec_mapping *e = &m->maps[m->nr++];

		e->start = maps[i].start;
		e->end = maps[i].end;
		/* As the kernel counts exec_vm, so the program need not read them again. */
		m->exec_pages += (e->end - e->start) >> 12;
		if (maps[i].path[0] == '/') {
			e->offset = maps[i].offset;
			e->file.ino = maps[i].inode;
			e->file.dev = maps[i].dev_major << 20 | maps[i].dev_minor;
		} else {
			/* The vDSO's table is under (0, 0); other code with no file has none. */
			e->file.dev = strcmp(maps[i].path, "[vdso]") ? UNWIND_ANON_DEV : 0;
		}
	}
	/* What the program read since it started is newer than /proc's: kept. */
	err = bpf_map_update_elem(bpf_map__fd(s->skel->maps.proc_maps), &tgid, m, BPF_NOEXIST);
	free(m);
	return err == -EEXIST ? 0 : err;
}

void sampler_python_maps(struct sampler *s, int *files_fd, int *procs_fd, int *maps_fd,
			 int *notices_fd)
{
	*files_fd = s->python ? bpf_map__fd(s->skel->maps.python_files) : -1;
	*procs_fd = s->python ? bpf_map__fd(s->skel->maps.python_procs) : -1;
	*maps_fd = s->python ? bpf_map__fd(s->skel->maps.proc_maps) : -1;
	*notices_fd = s->python ? bpf_map__fd(s->skel->maps.py_notices) : -1;
}

uint64_t sampler_proc_maps_bytes(struct sampler *s)
{
	int fd = bpf_map__fd(s->skel->maps.proc_maps);
	__u32 key, next;
	uint64_t n = 0;
	int err;

	if (!s->walking)
		return 0;
	for (err = bpf_map_get_next_key(fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(fd, &key, &next)) {
		n++;
		key = next;
	}
	return n * sizeof(struct proc_mappings);
}

uint32_t sampler_process_gen(struct sampler *s, uint32_t tgid)
{
	__u32 gen = 0;

	if (bpf_map__lookup_elem(s->skel->maps.proc_gen, &tgid, sizeof(tgid), &gen, sizeof(gen), 0))
		return 0;
	return gen;
}

void sampler_stats_release(struct sampler_stats *st)
{
	free(st->recorded_per_cpu);
	st->recorded_per_cpu = NULL;
}

/* Lifetime ---------------------------------------------------------------- */

/* Opens, sizes and loads the program, walking stacks or not. */
static int load(struct sampler *s, const struct sampler_config *cfg,
		const struct bpf_object_open_opts *opts, bool walk)
{
	struct sampler_config c = *cfg;
	unsigned i;
	int err;

	c.cfi_unwind = walk;
	s->skel = profile_bpf__open_opts(opts);
	if (!s->skel) {
		err = -errno;
		error("cannot open the BPF program: %s", strerror(-err));
		return err;
	}
	if ((err = configure(s, &c))) {
		error("cannot size the BPF maps: %s", strerror(-err));
		return err;
	}
	for (i = 0; i < 2 && !s->stacks[i].slots; i++) {
		s->stacks[i].slots = xcalloc(s->nr_slots, sizeof(*s->stacks[i].slots));
		new_epoch(s, i);
	}
	return profile_bpf__load(s->skel);
}

/*
 * The verifier gives up (EAGAIN) whenever a signal is pending, SIGSTOP too
 * (Ctrl-Z, a debugger, a stream of stops and continues): libbpf tries a
 * program 5 times, then the object is spent, so it is opened again, a tenth
 * of a second later, for up to LOAD_RETRY_S seconds.
 */
#define LOAD_RETRY_S 5
static int load_retrying(struct sampler *s, const struct sampler_config *cfg,
			 const struct bpf_object_open_opts *opts, bool walk)
{
	uint64_t start = now_ns();
	const struct timespec pause = { .tv_nsec = 100 * 1000 * 1000 };
	int err;

	while ((err = load(s, cfg, opts, walk)) == -EAGAIN &&
	       now_ns() - start < LOAD_RETRY_S * 1000000000ULL) {
		debug("loading the BPF program: the verifier was cut short by a signal; again");
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		nanosleep(&pause, NULL);
	}
	return err;
}

bool sampler_walks(const struct sampler *s)
{
	return s->walking;
}

int sampler_open(struct sampler **out, const struct sampler_config *cfg)
{
	LIBBPF_OPTS(bpf_object_open_opts, opts, .btf_custom_path = cfg->btf_path);
	struct sampler *s = xcalloc(1, sizeof(*s));
	int err;

	*out = s;
	s->on_sample = cfg->on_sample;
	s->before_read = cfg->before_read;
	s->on_table_request = cfg->on_table_request;
	s->ctx = cfg->ctx;
	s->nr_cpus = libbpf_num_possible_cpus();
	if (s->nr_cpus <= 0) {
		error("cannot count the possible CPUs: %s", strerror(-s->nr_cpus));
		return s->nr_cpus ? s->nr_cpus : -EINVAL;
	}
	s->percpu = xcalloc(s->nr_cpus, sizeof(*s->percpu));
	s->stats.recorded_per_cpu = xcalloc(s->nr_cpus, sizeof(uint64_t));
	s->stats.nr_cpus = s->nr_cpus;
	s->keys = xmalloc(BATCH * sizeof(*s->keys));
	s->values = xmalloc(BATCH * sizeof(*s->values));
	if (cfg->cfi_unwind) {
		s->walk_keys = xmalloc(BATCH * sizeof(*s->walk_keys));
		/* Room for a batch of walked stacks, or of the larger Python stacks. */
		s->walk_ips = xmalloc(BATCH * sizeof(struct py_stack));
	}

	err = load_retrying(s, cfg, &opts, cfg->cfi_unwind);
	if (err && err != -EAGAIN && cfg->cfi_unwind) {
		/* Without the walk it may load: then the walk is what this kernel lacks. */
		profile_bpf__destroy(s->skel);
		s->skel = NULL;
		if (!(err = load_retrying(s, cfg, &opts, false)))
			warning("this kernel cannot walk stacks with unwind tables (it needs BPF "
				"iterators over a task's VMAs and BPF task work, Linux 6.18): user "
				"stacks by frame pointers (--unwind fp); -v shows why");
	}
	if (err) {
		if (cfg->btf_path && err != -EPERM)
			error("cannot load the BPF program with the BTF in '%s': %s; give this "
			      "kernel's BTF (-v shows libbpf's log)", cfg->btf_path, strerror(-err));
		else if (err == -EAGAIN)
			error("cannot load the BPF program: signals cut the verifier short for %d s "
			      "(stopped and continued while loading?); run bpfprof again", LOAD_RETRY_S);
		else
			error("cannot load the BPF program: %s%s", strerror(-err),
			      err == -EPERM ? "; the kernel refuses bpf() to this process (a seccomp filter, a "
				      "security module, a container): run bpfprof where BPF is allowed"
				    : "; -v shows the verifier's log");
		return err;
	}
	if ((err = fill_filters(s, cfg))) {
		error("cannot fill the BPF filter maps: %s", strerror(-err));
		return err;
	}
	s->rb = ring_buffer__new(bpf_map__fd(s->skel->maps.fallback), on_record, s, NULL);
	if (!s->rb || (s->walking && ring_buffer__add(s->rb, bpf_map__fd(s->skel->maps.table_requests),
						    on_table_request, s))) {
		err = -errno;
		error("cannot open the BPF ring buffer: %s", strerror(-err));
		return err;
	}
	s->cpus = cfg->cpus;
	s->ncpus = cfg->ncpus;
	s->frequency = cfg->frequency;
	s->off_cpu = cfg->off_cpu;
	/* A perf event per CPU, the two trackers, the switch. */
	s->links = xcalloc(cfg->ncpus + 3, sizeof(*s->links));
	if (cfg->cpu_samples && (err = open_events(s)))
		return err;
	return attach_trackers(s);
}

void sampler_free(struct sampler *s)
{
	unsigned i;

	if (!s)
		return;
	detach(s);
	for (i = 0; s->event_fds && i < s->ncpus; i++)
		if (s->event_fds[i] >= 0)
			close(s->event_fds[i]);
	free(s->event_fds);
	free(s->links);
	ring_buffer__free(s->rb);
	profile_bpf__destroy(s->skel);
	free(s->stacks[0].slots);
	free(s->stacks[1].slots);
	for (i = 0; i < 2; i++) {
		free(s->stacks[i].ips);
		free_hashed(&s->stacks[i]);
	}
	free(s->keys);
	free(s->values);
	free(s->walk_keys);
	free(s->walk_ips);
	free(s->percpu);
	free(s->stats.recorded_per_cpu);
	free(s);
}
