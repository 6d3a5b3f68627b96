/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Each runtime's walk is a program of its own, reached by a tail call, so
 * that the verifier checks it alone, and only once a process of that
 * runtime is first seen: userspace loads NAME_at_sample (and, for
 * --off-cpu, NAME_at_switch) then, and puts it at the runtime's id in
 * sample_walks (switch_walks). A runtime with no program there costs a
 * sample nothing but a tail call that falls through.
 *
 * The sample's program (profile.bpf.c) records its key and native stacks,
 * then hands on to the runtimes in the order of their ids: each walks the
 * sample's frames if its process is its own, then hands on to the next,
 * until one has found frames or none is left; the last to run counts the
 * sample (sample_done). A thread leaving its CPU (offcpu.bpf.h) goes the
 * same way, its key in its task's storage (switch_done). What one program
 * hands to the next (the key, the map set, the fallback's cause) is in
 * this CPU's walk_carry: a tail call keeps only the context.
 */
#ifndef BPFPROF_RUNTIME_WALKS_BPF_H
#define BPFPROF_RUNTIME_WALKS_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "runtimes.bpf.h"
#include "settings.bpf.h"
#include "unwind.bpf.h"
/* Again, with unwind.bpf.h in: the walks that go on with the native walk (runtimes.bpf.h's end). */
#define BPFPROF_RUNTIME_WALKS_LATE
#include "runtimes.bpf.h"

#define RUNTIME_WALK_ARRAY(name)					\
	struct {							\
		__uint(type, BPF_MAP_TYPE_PROG_ARRAY);			\
		__uint(key_size, sizeof(__u32));			\
		__uint(value_size, sizeof(__u32));			\
		__uint(max_entries, RUNTIME_KINDS);			\
	} name SEC(".maps")

RUNTIME_WALK_ARRAY(sample_walks);	/* NAME_at_sample by runtime id */
RUNTIME_WALK_ARRAY(switch_walks);	/* NAME_at_switch by runtime id */

/* What a sample's (a switch's) programs hand on to the next. */
struct walk_carry {
	struct sample_key key;	/* the sample's (a switch's is in its task's storage) */
	__u32 set;		/* the map set active when it began */
	int cause;		/* enum fallback_cause: the maps could not take it; -1 */
	__u32 walked;		/* frames of its user stack walked into walk_scratch */
	__u32 next;		/* the runtime id to hand on to next */
	bool user_mode;		/* it interrupted user code */
	bool handed;		/* its user stack's walk was handed to a runtime (key_build.handed) */
};

#define CARRY_SAMPLE 0
#define CARRY_SWITCH 1

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct walk_carry);
	__uint(max_entries, 2);
} walk_carry SEC(".maps");

static __always_inline struct walk_carry *walk_carry_of(__u32 which)
{
	return bpf_map_lookup_elem(&walk_carry, &which);
}

/*
 * On to the next runtime's program in walks after c->next, while key has
 * no interpreter frames yet; returns if there is none (not loaded, or
 * the last was).
 */
static __always_inline void walk_runtimes(void *ctx, void *walks, const struct sample_key *key,
					  struct walk_carry *c)
{
	__u32 k;

	if (!settings.runtime_frames || !settings.cfi_unwind)
		return;
	for (k = 0; k < RUNTIME_KINDS; k++) {
		if (k < c->next)
			continue;
		if (key->interp_hash)
			return;
		c->next = k + 1;
		bpf_tail_call(ctx, walks, k);
	}
}

/*
 * A user stack's walk handed to a runtime's program (WALK_HANDED), done
 * with: as that program left it, or cut where it stopped if none went on.
 * Its frames (walk_scratch) stored under key's new hash and counted; the
 * cause set if the maps could not take them. The last of a sample's (a
 * switch's) programs does it.
 */
static __always_inline void walk_handed_done(struct walk_carry *c, struct sample_key *key,
					     struct sample_stats *st)
{
	struct walked_stack *out;
	__u32 zero = 0;
	struct walk *w;

	if (!c->handed || !(out = bpf_map_lookup_elem(&walk_scratch, &zero)))
		return;
	c->handed = false;
	w = &out->w;
	if (w->how & WALK_HANDED)
		w->how = (w->how & ~WALK_HANDED) | WALK_BAD;
	if (w->n < BPFPROF_MAX_DEPTH)
		out->ips[w->n & BPFPROF_MAX_DEPTH] = 0;
	key->unwind = w->how;
	key->ustack_hash = w->hash ? w->hash : 1;
	c->walked = w->n;
	walk_counted(st, w->how);
	store_ustack(c->set & 1, key, out->ips, st, &c->cause);
}

/* A runtime's walk's result, bounded where the verifier sees it (-1, none, is 3 then). */
static __always_inline void take_cause(int c, int *cause)
{
	_Static_assert(CAUSE_MAX == 3, "the mask below is CAUSE_MAX");
	asm volatile("%[c] &= 3" : [c] "+r"(c));
	if (c < CAUSE_MAX)
		*cause = c;
}

/*
 * A runtime's two programs (RUNTIME_WALKS lists them): its walk of a
 * sample, then the next runtime's or the sample counted; likewise for a
 * thread leaving its CPU, where a full map only costs the frames.
 */
#define RUNTIME_PROGRAMS(NAME, KIND)						\
	SEC("perf_event")							\
	int NAME##_at_sample(struct bpf_perf_event_data *ctx)			\
	{									\
		struct walk_carry *c = walk_carry_of(CARRY_SAMPLE);		\
		__u32 zero = 0;							\
		struct sample_stats *st = bpf_map_lookup_elem(&stats, &zero);	\
										\
		if (!c || !st)							\
			return 0;						\
		take_cause(NAME##_sample(&c->key, c->set, st), &c->cause);	\
		walk_runtimes(ctx, &sample_walks, &c->key, c);			\
		sample_done(ctx, c, st);					\
		return 0;							\
	}									\
										\
	SEC("tp_btf/sched_switch")						\
	int BPF_PROG(NAME##_at_switch, bool preempt, struct task_struct *prev,	\
		     struct task_struct *next)					\
	{									\
		struct walk_carry *c = walk_carry_of(CARRY_SWITCH);		\
		__u32 zero = 0;							\
		struct sample_stats *st = bpf_map_lookup_elem(&stats, &zero);	\
		struct offcpu_task *e;						\
										\
		e = bpf_task_storage_get(&offcpu_tasks, prev, 0, 0);		\
		if (!c || !st || !e)						\
			return 0;						\
		NAME##_sample(&e->key, c->set, st);				\
		walk_runtimes(ctx, &switch_walks, &e->key, c);			\
		switch_done(e, c, st);						\
		return 0;							\
	}

#endif
