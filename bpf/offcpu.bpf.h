/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --off-cpu and --wall: where threads wait. At the scheduler's switch, a
 * followed thread leaving the CPU has its stacks recorded as a CPU sample's
 * are (kernel stack id, user stack walked, interpreter frames) into the active
 * set, and its key kept in its task storage; when it comes back, the time
 * it was away is added to that key's count, in nanoseconds, in the kernel.
 *
 * The key's stacks are in the maps of the set that was active when it
 * left. If a drain has read that set since (a block across a drain), they
 * are gone: the block is sent whole through the ring buffer instead, its
 * kernel stack read from the sleeping task, its user and interpreter
 * frames from the copies its task storage keeps. Task storage goes with the task,
 * so a thread that exits while off the CPU leaves nothing behind.
 *
 * Compiled into profile.bpf.c's object: it shares its maps.
 */
#ifndef BPFPROF_OFFCPU_BPF_H
#define BPFPROF_OFFCPU_BPF_H

#include "common.bpf.h"
#include "filter.bpf.h"
#include "key.bpf.h"
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "runtime_walks.bpf.h"
#include "settings.bpf.h"
#include "unwind.bpf.h"

/* task_struct's __state bits (include/linux/sched.h). */
#define BPFPROF_TASK_INTERRUPTIBLE	0x0001
#define BPFPROF_TASK_UNINTERRUPTIBLE	0x0002
#define BPFPROF_TASK_DEAD		0x0080
#define BPFPROF_TASK_NOLOAD		0x0400

/* A followed thread, while it is off the CPU. */
struct offcpu_task {
	__u64 since;		/* when it left the CPU; 0: it is on one */
	__u32 epoch;		/* active_set then: its stacks are in the maps of set epoch & 1 */
	__u32 nu;		/* frames in ustack */
	struct sample_key key;
	__u64 ustack[BPFPROF_MAX_DEPTH];	/* its user stack, for a block across a drain */
	struct interp_stack interp;		/* its interpreter frames, likewise (if key.interp_hash) */
	/*
	 * The walk of that user stack, to be taken again if the thread next
	 * leaves from the same registers and the words the walk read are the
	 * same (nreads 0: not to be taken again; a walk that read WALK_READS words
 * or more is not kept).
	 */
	struct user_regs regs;
	__u32 gen, how, walk_nu;
	__u64 ustack_hash;
	__u32 nreads;
	__u64 reads_hash;
	__u64 reads[WALK_READS];
};

struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct offcpu_task);
} offcpu_tasks SEC(".maps");

/* Why prev leaves the CPU: preempted (still runnable), or the sleep it chose. */
static __always_inline __u32 leaving_state(struct task_struct *prev, bool preempt)
{
	unsigned int state = BPF_CORE_READ(prev, __state);

	if (preempt || !(state & (BPFPROF_TASK_INTERRUPTIBLE | BPFPROF_TASK_UNINTERRUPTIBLE)))
		return STATE_RUNNABLE;
	/* TASK_IDLE (uninterruptible, no load): a kernel thread waiting for work. */
	if ((state & BPFPROF_TASK_UNINTERRUPTIBLE) && !(state & BPFPROF_TASK_NOLOAD))
		return STATE_UNINTERRUPTIBLE;
	return STATE_SLEEPING;
}

/* The words of the user stack the last walk read, read again and hashed (bpf_loop). */
struct reread {
	struct offcpu_task *e;
	__u64 hash;
};

static long reread_step(__u32 i, struct reread *r)
{
	__u64 v;

	if (!read_word(r->e->reads[i & (WALK_READS - 1)], &v))
		return 1;
	r->hash = (r->hash ^ v) * 0x9e3779b97f4a7c15ull;
	r->hash ^= r->hash >> 29;
	return 0;
}

/*
 * The thread leaves from where it left last time: the same registers, and
 * every word of its stack that walk read unchanged, so walking again would
 * find the same frames (it ended whole, by the tables, and the process
 * has the same mappings). Most threads wait in the same few places.
 */
static __always_inline bool same_walk(struct task_struct *prev, struct offcpu_task *e,
				      const struct sample_key *key, struct user_regs *regs)
{
	struct reread r = { .e = e, .hash = 0xcbf29ce484222325ull };
	__u32 n = e->nreads;

	regs->sp = 0;
	if (!prev->mm || !entry_regs(prev, regs))
		return false;
	if (!n || n >= WALK_READS || e->gen != key->gen || regs->ip != e->regs.ip ||
	    regs->sp != e->regs.sp || regs->bp != e->regs.bp)
		return false;
	return bpf_loop(n, reread_step, &r, 0) == n && r.hash == e->reads_hash;
}

/* A new walk from regs kept in the task's storage, to be taken again (same_walk). */
static __always_inline void keep_walk(struct offcpu_task *e, struct walked_stack *w,
				      const struct sample_key *key, const struct user_regs *regs)
{
	__u32 n = w->nreads;

	e->nreads = 0;
	if (key->unwind != (WALK_OUTERMOST | WALK_BY_CFI) || !regs->sp || !n || n >= WALK_READS)
		return;
	n &= WALK_READS - 1;	/* as it is: for the verifier */
	if (bpf_probe_read_kernel(e->reads, n * sizeof(__u64), w->reads))
		return;
	e->regs = *regs;
	e->gen = key->gen;
	e->how = key->unwind;
	e->ustack_hash = key->ustack_hash;
	e->reads_hash = w->reads_hash;
	e->nreads = n;
}

/*
 * A thread leaving its CPU has its stacks: its interpreter frames kept
 * for a block across a drain, and it is off from now. The last of its
 * programs does it (runtime_walks.bpf.h).
 */
static __always_inline void switch_done(struct offcpu_task *e, struct walk_carry *c,
				       struct sample_stats *st)
{
	struct walked_stack *w;
	__u32 zero = 0, nu;

	if (c && c->handed) {
		/* Its walk, handed to a runtime: stored now, and kept as walked. */
		c->cause = -1;
		walk_handed_done(c, &e->key, st);
		nu = c->walked;
		asm volatile("%[n] &= 0x7f" : [n] "+r"(nu));
		w = bpf_map_lookup_elem(&walk_scratch, &zero);
		if (w && nu && !bpf_probe_read_kernel(e->ustack, nu * sizeof(__u64), w->ips)) {
			e->nu = e->walk_nu = nu;
			if (nu < BPFPROF_MAX_DEPTH)
				e->ustack[nu & 0x7f] = 0;
		}
		/* Not taken by the maps: the block goes whole (as left_cpu marks it). */
		if (c->cause >= 0 && (e->epoch & 1) == (c->set & 1))
			e->epoch = ~e->epoch;
	}
	if (settings.runtime_frames && settings.cfi_unwind)
		interp_stack_copy(&e->key, &e->interp);
	e->since = bpf_ktime_get_ns();
}

/* prev (the current task) leaves the CPU: its key and stacks recorded, then its runtime's frames. */
static __always_inline void left_cpu(void *ctx, struct task_struct *prev, bool preempt,
				     __u32 epoch, struct sample_stats *st)
{
	struct key_build kb = { .ctx = ctx, .set = epoch & 1 };
	struct walked_stack *w;
	struct walk_carry *c;
	struct offcpu_task *e;
	struct sample_key *key;
	struct user_regs regs;
	__u32 zero = 0, nu;
	bool again;

	/* A thread's last switch (it has exited): it never comes back to count. */
	if (!prev->pid || (BPF_CORE_READ(prev, __state) & BPFPROF_TASK_DEAD) ||
	    !wanted(prev->tgid, prev->pid))
		return;
	e = bpf_task_storage_get(&offcpu_tasks, prev, 0, BPF_LOCAL_STORAGE_GET_F_CREATE);
	if (!e) {
		st->v[STAT_OFF_NO_ROOM]++;
		return;
	}
	st->v[STAT_OFF_SWITCHES]++;
	key = &e->key;
	key_begin(key, prev->tgid, prev->pid, leaving_state(prev, preempt), false);
	again = settings.user_stacks && settings.cfi_unwind && same_walk(prev, e, key, &regs);
	if (again) {
		st->v[STAT_OFF_WALKED_AGAIN]++;
		key->unwind = e->how;
		key->ustack_hash = e->ustack_hash;
		kb.walked_before = e->ustack;
	}
	key_stacks(key, &kb, st);
	/* Its user stack kept, for a block across a drain. */
	e->nu = 0;
	if (again) {
		e->nu = e->walk_nu;
	} else if (kb.walked) {
		nu = kb.walked;
		asm volatile("%[n] &= 0x7f" : [n] "+r"(nu));
		w = bpf_map_lookup_elem(&walk_scratch, &zero);
		e->nreads = 0;
		if (w && nu && !bpf_probe_read_kernel(e->ustack, nu * sizeof(__u64), w->ips)) {
			e->nu = e->walk_nu = nu;
			/* As the ustacks maps hold a stack: zeros after its last frame. */
			if (nu < BPFPROF_MAX_DEPTH)
				e->ustack[nu & 0x7f] = 0;
			keep_walk(e, w, key, &regs);
		}
	} else if (settings.user_stacks && !settings.cfi_unwind) {
		e->nu = frames_in(bpf_get_stack(ctx, e->ustack, sizeof(e->ustack), BPF_F_USER_STACK));
	}
	/* A stack the maps could not take: the block goes whole when it ends. */
	e->epoch = kb.cause >= 0 || (settings.kernel_stacks && key->kstack_id == BPFPROF_NO_STACK)
		? ~epoch : epoch;
	c = walk_carry_of(CARRY_SWITCH);
	if (c) {
		c->set = kb.set;
		c->handed = kb.handed;
		c->next = 0;
		walk_runtimes(ctx, &switch_walks, key, c);
	}
	switch_done(e, c, st);
}

/* A block whose stacks' set was drained since: sent whole, its stacks copied. */
static __always_inline void send_block(struct task_struct *next, struct offcpu_task *e, __u64 ns,
				       struct sample_stats *st)
{
	struct fallback_record *r;
	__u32 zero = 0, nk, nu;
	__u64 size;

	r = bpf_map_lookup_elem(&fallback_scratch, &zero);
	if (!r)
		return;
	fill_head(&r->head, RECORD_OFF_CPU, &e->key);
	r->cause = 0;
	r->unwind = e->key.unwind;
	r->state = e->key.state;
	r->value = ns;
	/* It has not run since it left: its kernel stack is where it stopped. */
	r->head.kstack_bytes = settings.kernel_stacks
		? bpf_get_task_stack(next, r->ips, BPFPROF_MAX_DEPTH * sizeof(__u64), 0) : -EFAULT;
	nk = frames_in(r->head.kstack_bytes);
	asm volatile("%[n] &= 0x7f" : [n] "+r"(nk));
	nu = e->nu;
	asm volatile("%[n] &= 0x7f" : [n] "+r"(nu));
	r->ustack_bytes = nu && !bpf_probe_read_kernel(&r->ips[nk], nu * sizeof(__u64), e->ustack)
		? nu * sizeof(__u64) : -EFAULT;
	nu = frames_in(r->ustack_bytes);
	if (!e->key.interp_hash || bpf_probe_read_kernel(&r->interp, sizeof(r->interp), &e->interp))
		r->interp.n = 0;
	size = __builtin_offsetof(struct fallback_record, ips) + (nk + nu) * sizeof(__u64);
	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&fallback, r, size, 0)) {
		st->v[STAT_OFF_LOST]++;
		st->v[STAT_OFF_LOST_NS] += ns;
		return;
	}
	st->v[STAT_OFF_SENT]++;
	st->v[STAT_OFF_SENT_NS] += ns;
}

/* next comes back on the CPU: the time it was away added to the key it left with. */
static __always_inline void back_on_cpu(struct task_struct *next, __u32 epoch,
					struct sample_stats *st)
{
	struct offcpu_task *e;
	__u32 set = epoch & 1;
	__u64 ns;

	if (!next->pid)
		return;
	e = bpf_task_storage_get(&offcpu_tasks, next, 0, 0);
	if (!e || !e->since)
		return;
	ns = bpf_ktime_get_ns() - e->since;
	e->since = 0;
	if (ns < settings.min_block_ns) {
		st->v[STAT_OFF_SHORT]++;
		return;
	}
	if (e->epoch == epoch && count(set, &e->key, ns)) {
		st->v[STAT_OFF_COUNTED_SET0 + set]++;
		st->v[STAT_OFF_NS_SET0 + set] += ns;
		return;
	}
	send_block(next, e, ns, st);
}

SEC("tp_btf/sched_switch")
int BPF_PROG(on_switch, bool preempt, struct task_struct *prev, struct task_struct *next)
{
	__u32 zero = 0, epoch = active_set;
	struct sample_stats *st = bpf_map_lookup_elem(&stats, &zero);

	if (!st)
		return 0;
	back_on_cpu(next, epoch, st);
	left_cpu(ctx, prev, preempt, epoch, st);
	return 0;
}

#endif
