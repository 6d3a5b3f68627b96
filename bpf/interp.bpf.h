/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every runtime's walk shares (include/bpfprof/interp.h): where a
 * sample's interpreter frames are stored, and the one way they are copied.
 * A runtime's walk (bpf/NAME.bpf.h, runtimes.bpf.h lists them) records its
 * frames in an interp_stack, names them by a hash in key->interp_hash, and
 * hands them to interp_store: into the active set's interp_stacks, to its
 * namer through its ring of notices if new there, and kept as this CPU's
 * last walked stack. Every path that keeps a sample whole (the fallback
 * record, off-CPU blocks) copies them from there with interp_stack_copy,
 * whichever runtime walked them.
 */
#ifndef BPFPROF_INTERP_BPF_H
#define BPFPROF_INTERP_BPF_H

#include "common.bpf.h"
#include "settings.bpf.h"

/* Whether the frames of runtime kind (interp.h) are read: settings.runtime_frames. */
static __always_inline bool runtime_on(__u32 kind)
{
	return settings.runtime_frames & (1u << kind);
}

/* Interpreter stacks by hash, one map per set (see maps.bpf.h); sized by userspace. */
#define INTERP_STACK_MAP(name)						\
	struct {							\
		__uint(type, BPF_MAP_TYPE_HASH);			\
		__type(key, __u64);					\
		__type(value, struct interp_stack);			\
		__uint(max_entries, 16384);				\
		__uint(map_flags, BPF_F_NO_PREALLOC);			\
	} name SEC(".maps")

INTERP_STACK_MAP(interp_stacks0);
INTERP_STACK_MAP(interp_stacks1);

/* The stack walked last on this CPU, by its hash: what a sample sent whole carries. */
struct interp_last {
	__u64 hash;		/* the key's interp_hash it was stored under; 0: none */
	struct interp_stack stack;
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct interp_last);
	__uint(max_entries, 1);
} interp_last SEC(".maps");

/* Bytes of stack that hold its header and its n frames (the verifier sees the bound). */
static __always_inline __u32 interp_stack_bytes(const struct interp_stack *stack)
{
	__u32 n = stack->n;

	if (n > INTERP_MAX_FRAMES)
		n = INTERP_MAX_FRAMES;
	return __builtin_offsetof(struct interp_stack, frames) + n * sizeof(struct interp_frame);
}

/* Keep stack as this CPU's last, under key's hash (only its frames are copied). */
static __always_inline void interp_keep(const struct sample_key *key,
					const struct interp_stack *stack)
{
	struct interp_last *last;
	__u32 zero = 0, size;

	last = bpf_map_lookup_elem(&interp_last, &zero);
	if (!last)
		return;
	last->hash = 0;
	size = interp_stack_bytes(stack);
	if (size > sizeof(last->stack) || bpf_probe_read_kernel(&last->stack, size, stack))
		return;
	last->hash = key->interp_hash;
}

/*
 * A runtime's stack walked (in its per-CPU scratch), named by
 * key->interp_hash: kept as this CPU's last, into the active set's
 * interp_stacks, and to userspace through the runtime's ring of notices
 * if new there (or not stored: no room). *cause set if the map had no
 * room (the sample must go whole, and carries the stack then).
 */
static __always_inline void interp_store(__u32 set, const struct sample_key *key,
					 struct sample_stats *st, int *cause, void *notices,
					 const struct interp_stack *stack)
{
	void *stacks = set ? (void *)&interp_stacks1 : (void *)&interp_stacks0;
	struct interp_notice *notice;
	long err;

	if (!key->interp_hash)
		return;
	interp_keep(key, stack);
	if (bpf_map_lookup_elem(stacks, &key->interp_hash))
		return;
	err = bpf_map_update_elem(stacks, &key->interp_hash, stack, BPF_NOEXIST);
	if (err == -EEXIST)
		return;
	if (err) {
		/* The sample goes whole, its frames with it: they are still to be named. */
		st->v[STAT_INTERP_STACKS_FULL]++;
		*cause = CAUSE_STACK_FULL;
	}
	notice = bpf_ringbuf_reserve(notices, sizeof(*notice), 0);
	if (!notice) {
		st->v[STAT_INTERP_NOTICES_LOST]++;
		return;
	}
	notice->tgid = key->tgid;
	notice->gen = key->gen;
	if (bpf_probe_read_kernel(&notice->stack, sizeof(notice->stack), stack)) {
		bpf_ringbuf_discard(notice, 0);
		st->v[STAT_INTERP_NOTICES_LOST]++;
		return;
	}
	/*
	 * The kernel wakes the namer only for the first notice since it last
	 * read (the ring's adaptive wakeup): once a batch, none while nothing
	 * is new (runtime_shared.c).
	 */
	bpf_ringbuf_submit(notice, 0);
}

/*
 * The interpreter frames key names into out (out->n 0 if none): the
 * stack this CPU walked last, which is the sample's own while the same
 * program run stores it (a sample's walk and its storing do not sleep).
 */
static __always_inline void interp_stack_copy(const struct sample_key *key,
					      struct interp_stack *out)
{
	struct interp_last *last;
	__u32 zero = 0, size;

	out->n = 0;
	if (!key->interp_hash || !(last = bpf_map_lookup_elem(&interp_last, &zero)) ||
	    last->hash != key->interp_hash)
		return;
	size = interp_stack_bytes(&last->stack);
	if (size > sizeof(*out) || bpf_probe_read_kernel(out, size, &last->stack))
		out->n = 0;
}

#endif
