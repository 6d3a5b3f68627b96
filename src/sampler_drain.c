// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Draining: the program's map set flipped, the old set read and emptied
 * (its counts, the stacks they name: by id in the stack map, by hash in the
 * maps of walked and interpreter stacks), the statistics summed over CPUs, and
 * the counts read checked against those the program made.
 */
#include <errno.h>
#include <linux/membarrier.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "sampler_internal.h"

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

static bool interp_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct set_stacks *)owner)->interp[idx].hash == *(const uint64_t *)key;
}

/* A interpreter stack read by read_set(), by its hash; NULL if none. */
static const struct interp_slot *load_interp(struct set_stacks *st, uint64_t hash)
{
	uint32_t idx = itab_find(&st->interp_index, hash, interp_eq, st, &hash);

	return idx == ITAB_NONE ? NULL : &st->interp[idx];
}

static void keep_interp(struct set_stacks *st, uint64_t hash, const void *value)
{
	const struct interp_stack *ps = value;
	uint32_t n = ps->n < INTERP_MAX_FRAMES ? ps->n : INTERP_MAX_FRAMES;
	struct interp_slot *p;

	if (load_interp(st, hash))
		return;
	ALLOC_GROW(st->interp, st->nr_interp + 1, st->interp_alloc);
	p = &st->interp[st->nr_interp];
	*p = (struct interp_slot){ hash, st->nr_interp_frames, n, ps->end, ps->runtime, ps->state };
	ALLOC_GROW(st->interp_frames, st->nr_interp_frames + n, st->interp_frames_alloc);
	memcpy(st->interp_frames + st->nr_interp_frames, ps->frames, n * sizeof(*ps->frames));
	st->nr_interp_frames += n;
	itab_insert(&st->interp_index, hash, st->nr_interp++);
}

/*
 * Takes every stack out of a map of stacks by hash (walked or interpreter), in
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

/* The walked and interpreter stacks of the set's last drain let go, their room kept. */
static void empty_hashed(struct set_stacks *st)
{
	st->nr_walked = 0;
	st->nr_walked_ips = 0;
	itab_clear(&st->walked_index);
	st->nr_interp = 0;
	st->nr_interp_frames = 0;
	itab_clear(&st->interp_index);
}

static void free_hashed(struct set_stacks *st)
{
	free(st->walked);
	free(st->walked_ips);
	itab_release(&st->walked_index);
	free(st->interp);
	free(st->interp_frames);
	itab_release(&st->interp_index);
}

/*
 * The set's walked user stacks and interpreter stacks, all its samples name: the
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
	if (!err && s->runtimes_on)
		err = take_stacks(s, set,
				  bpf_map__fd(set ? s->skel->maps.interp_stacks1 : s->skel->maps.interp_stacks0),
				  sizeof(struct interp_stack), keep_interp);
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
			const struct interp_slot *islot;
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
			if (k->interp_hash && (islot = load_interp(st, k->interp_hash))) {
				rs.interp.frames = st->interp_frames + islot->first;
				rs.interp.n = islot->n;
				rs.interp.end = islot->end;
				rs.interp.runtime = islot->runtime;
				rs.interp.state = islot->state;
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

void sampler_stacks_init(struct sampler *s)
{
	unsigned i;

	for (i = 0; i < 2 && !s->stacks[i].slots; i++) {
		s->stacks[i].slots = xcalloc(s->nr_slots, sizeof(*s->stacks[i].slots));
		new_epoch(s, i);
	}
}

void sampler_stacks_release(struct sampler *s)
{
	unsigned i;

	for (i = 0; i < 2; i++) {
		free(s->stacks[i].slots);
		free(s->stacks[i].ips);
		free_hashed(&s->stacks[i]);
	}
}

int sampler_drain(struct sampler *s)
{
	unsigned old = s->active;
	int err;

	if (s->drain_soon)
		s->stats.early_drains++;
	s->drain_soon = false;
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
	/* Emptied, and nothing writes to it until the next flip. */
	s->skel->bss->keys_in_set[old] = 0;
	s->skel->bss->drain_asked[old] = 0;
	if ((err = read_stats(s)))
		return err;
	/* The active set is still filling; only the old one can be checked. */
	check_accounting(s, old);
	forget_stacks_if_full(s, old);
	return 0;
}

int sampler_read_stats(struct sampler *s)
{
	return read_stats(s);
}

bool sampler_drain_soon(const struct sampler *s)
{
	return s->drain_soon;
}

int sampler_drain_last(struct sampler *s)
{
	int err;

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
