/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The maps every program of the object writes: the two map sets samples
 * and off-CPU waits are counted in, the statistics, the ring buffer for
 * what the maps cannot take, and each process's generation.
 *
 * Two map sets (stacks0/counts0, stacks1/counts1): the programs write into
 * the set named by active_set; userspace flips active_set, waits for an RCU
 * grace period (no program still uses the old set) and then reads and clears
 * the old set at leisure. When a map cannot take a sample, the sample goes
 * whole through the ring buffer; only if that is full too is it lost, and
 * then it is counted by cause.
 */
#ifndef BPFPROF_MAPS_BPF_H
#define BPFPROF_MAPS_BPF_H

#include "common.bpf.h"

/*
 * The map set the programs write to is active_set & 1; userspace adds one
 * at each drain, so the whole number also says which drain it is.
 */
__u32 active_set = 0;

#define STACK_MAP(name)							\
	struct {							\
		__uint(type, BPF_MAP_TYPE_STACK_TRACE);			\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, BPFPROF_MAX_DEPTH * sizeof(__u64));	\
		__uint(max_entries, 16384);				\
	} name SEC(".maps")

#define COUNTS_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, struct sample_key);				\
		__type(value, __u64);					\
		__uint(max_entries, BPFPROF_COUNTS_KEYS);		\
	} name SEC(".maps")

STACK_MAP(stacks0);
STACK_MAP(stacks1);
COUNTS_MAP(counts0);
COUNTS_MAP(counts1);

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct sample_stats);
	__uint(max_entries, 1);
} stats SEC(".maps");

/*
 * Each process's generation: how many times, since the run started, its pid
 * became a new process (fork) or a new program (exec). Userspace counts the
 * same events in the perf side-band records, so (tgid, gen) names the one
 * image of mappings a sample's addresses belong to, across exec and pid
 * reuse. LRU: a forgotten process reads as generation 0, the oldest image.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u32);
	__uint(max_entries, 65536);
} proc_gen SEC(".maps");

/*
 * Keys put into each counts map since userspace last emptied it, and whether
 * a drain was asked for since (userspace zeroes both).
 */
__u32 keys_in_set[2];
__u32 drain_asked[2];

/* Samples the maps could not take, sent whole; --unwind dwarf's records. */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 4 << 20);
} fallback SEC(".maps");

/* Where a fallback record is put together before it is sent at its length. */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct fallback_record);
	__uint(max_entries, 1);
} fallback_scratch SEC(".maps");

/* A process's generation (0: never forked or exec'd since the start, or forgotten). */
static __always_inline __u32 process_gen(__u32 tgid)
{
	__u32 *gen = bpf_map_lookup_elem(&proc_gen, &tgid);

	return gen ? *gen : 0;
}

/*
 * Record the current task's stack (user: BPF_F_USER_STACK) into the set's
 * stack map. Returns the id, or BPFPROF_NO_STACK when there is none; sets
 * *cause on a failure that needs the fallback. count_none: a stack the
 * helper refuses otherwise is counted (samples' statistics).
 */
static __always_inline __s32 stack_id(void *ctx, __u32 set, bool user, struct sample_stats *st,
				      int *cause, bool count_none)
{
	__u64 flags = user ? BPF_F_USER_STACK : 0;
	long id;

	if (set)
		id = bpf_get_stackid(ctx, &stacks1, flags);
	else
		id = bpf_get_stackid(ctx, &stacks0, flags);
	if (id >= 0)
		return id;
	if (id == -EEXIST) {
		st->v[user ? STAT_USTACK_COLLISION : STAT_KSTACK_COLLISION]++;
		st->v[STAT_COLLISION_SET0 + set]++;
		*cause = CAUSE_STACK_COLLISION;
	} else if (id == -ENOMEM) {
		st->v[user ? STAT_USTACK_FULL : STAT_KSTACK_FULL]++;
		*cause = CAUSE_STACK_FULL;
	} else if (count_none) {
		st->v[user ? STAT_USTACK_NONE : STAT_KSTACK_NONE]++;
	}
	return BPFPROF_NO_STACK;
}

/*
 * A key new to the set. At half the map userspace is woken to drain before
 * the period ends: thousands of threads a second, each its own key, would
 * fill the map and send the rest through the ring buffer, and lose them when
 * it fills. (Two CPUs may both ask; a second drain of a set is harmless.)
 */
static __always_inline void new_key_in(__u32 set)
{
	struct drain_soon r = { .kind = RECORD_DRAIN_SOON, .set = set & 1 };

	__sync_fetch_and_add(&keys_in_set[set & 1], 1);
	if (keys_in_set[set & 1] < BPFPROF_DRAIN_SOON_KEYS || drain_asked[set & 1])
		return;
	drain_asked[set & 1] = 1;
	if (bpf_ringbuf_output(&fallback, &r, sizeof(r), BPF_RB_FORCE_WAKEUP))
		drain_asked[set & 1] = 0;	/* the ring was full: ask again at the next key */
}

/*
 * Add value to key's count in the set (a sample: 1; off-CPU time: its
 * nanoseconds); false if the map is full.
 */
static __always_inline bool count(__u32 set, const struct sample_key *key, __u64 value)
{
	void *counts = set ? (void *)&counts1 : (void *)&counts0;
	__u64 *v = bpf_map_lookup_elem(counts, key);

	if (v) {
		__sync_fetch_and_add(v, value);
		return true;
	}
	/* Another CPU may insert the same key between lookup and update. */
	if (bpf_map_update_elem(counts, key, &value, BPF_NOEXIST) == 0) {
		new_key_in(set);
		return true;
	}
	v = bpf_map_lookup_elem(counts, key);
	if (v) {
		__sync_fetch_and_add(v, value);
		return true;
	}
	return false;
}

/* Whose sample a ring buffer record is. */
static __always_inline void fill_head(struct record_head *h, __u32 kind, const struct sample_key *key)
{
	h->kind = kind;
	h->tgid = key->tgid;
	h->pid = key->pid;
	h->gen = key->gen;
	h->cgroup_id = key->cgroup_id;
	__builtin_memcpy(h->comm, key->comm, sizeof(h->comm));
	h->cpu = bpf_get_smp_processor_id();
}

/* A stack's bytes as a count of frames, within 0..BPFPROF_MAX_DEPTH. */
static __always_inline __u32 frames_in(long bytes)
{
	__u32 n = bytes > 0 ? (__u32)bytes / sizeof(__u64) : 0;

	return n < BPFPROF_MAX_DEPTH ? n : BPFPROF_MAX_DEPTH;
}

#endif
