// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The sampling program: runs on every CPU-clock overflow, filters, records
 * the sample's stacks (key.bpf.h) and counts it in the active map set
 * (maps.bpf.h), or sends it whole when the maps cannot take it. Knows
 * nothing of symbols.
 *
 * The object's other programs share its maps, so they are compiled with it:
 * the process trackers (procs.bpf.h), the off-CPU path (offcpu.bpf.h) and
 * each runtime's walk (runtime_walks.bpf.h), at the end.
 */
#include "common.bpf.h"
#include "filter.bpf.h"
#include "key.bpf.h"
#include "maps.bpf.h"
#include "interp.bpf.h"
#include "settings.bpf.h"
#include "runtime_walks.bpf.h"
#include "unwind.bpf.h"

static __always_inline bool in_user_mode(struct bpf_perf_event_data *ctx)
{
#if defined(__TARGET_ARCH_x86)
	/*
	 * The verifier allows only 8-byte loads from the regs in this context,
	 * and cs is a 16-bit member of a union in recent kernels: read the word.
	 * pt_regs' layout is user ABI on x86-64, so the offset is stable.
	 */
	__u64 cs = *(volatile __u64 *)((void *)&ctx->regs + __builtin_offsetof(struct pt_regs, cs));

	return (cs & 3) == 3;
#else
#error "bpfprof: user-mode test not written for this architecture"
#endif
}

/* This CPU's preempt count, from its run queue (settings.preempt_count_from_rq); false: unknown. */
static __always_inline bool preempt_count_now(int *count)
{
	struct task_struct *t = bpf_get_current_task_btf();
	struct rq *rq;

	if (!settings.preempt_count_from_rq || !bpf_core_field_exists(t->se.cfs_rq))
		return false;
	rq = BPF_CORE_READ(t, se.cfs_rq, rq);
	return rq && BPF_CORE_READ(rq, cpu) == bpf_get_smp_processor_id() &&
	       !bpf_probe_read_kernel(count, sizeof(*count),
				      (void *)rq + settings.preempt_count_from_rq);
}

/*
 * The CPU's state under the sample. The sample itself runs in an interrupt
 * (the cpu-clock's hrtimer: one hardirq level; a hardware event's NMI: none),
 * so a second hardirq level is an interrupted handler, and the softirq
 * count's low bit a softirq being served (higher bits: bottom halves only
 * disabled, which is the thread's kernel time).
 */
static __always_inline __u32 cpu_state(bool user_mode, __u32 pid)
{
	int count, hardirqs;

	if (user_mode)
		return CPU_STATE_USER;
	if (preempt_count_now(&count)) {
		hardirqs = (count >> 16) & 0xf;
		if (hardirqs > ((count & 0xf00000) ? 0 : 1))
			return CPU_STATE_IRQ;
		if (count & 0x100)
			return CPU_STATE_SOFTIRQ;
	}
	return pid ? CPU_STATE_KERNEL : CPU_STATE_IDLE;
}

/*
 * Copy both stacks into a ring buffer record; count the sample lost if
 * full. The record goes out as long as its stacks: a quarter of the full
 * size for a typical sample, so the ring buffer holds four times as many.
 */
static __always_inline void send_whole(struct bpf_perf_event_data *ctx, const struct sample_key *key,
				       bool user_mode, struct sample_stats *st, int cause,
				       __u32 walked)
{
	struct walked_stack *w;
	__u32 zero = 0, nu;
	__u64 nk;
	struct fallback_record *r;
	__u64 size;

	r = bpf_map_lookup_elem(&fallback_scratch, &zero);
	if (!r)
		return;
	fill_head(&r->head, RECORD_FALLBACK, key);
	r->cause = cause;
	r->head.kstack_bytes = settings.kernel_stacks && !user_mode
		? bpf_get_stack(ctx, r->ips, BPFPROF_MAX_DEPTH * sizeof(__u64), 0) : -EFAULT;
	nk = frames_in(r->head.kstack_bytes);
	/* The bound again, where the verifier sees it (the compiler moves C checks). */
	_Static_assert(BPFPROF_MAX_DEPTH == 0x7f, "the mask below is BPFPROF_MAX_DEPTH");
	asm volatile("%[n] &= 0x7f" : [n] "+r"(nk));
	r->unwind = key->unwind;
	r->state = key->state;
	r->value = 1;
	interp_stack_copy(key, &r->interp);
	if (settings.cfi_unwind) {
		/* The stack walked here, not the frame pointers' one. */
		nu = walked;
		asm volatile("%[n] &= 0x7f" : [n] "+r"(nu));
		w = bpf_map_lookup_elem(&walk_scratch, &zero);
		r->ustack_bytes = key->ustack_hash && w && nu &&
				  !bpf_probe_read_kernel(&r->ips[nk], nu * sizeof(__u64), w->ips)
			? nu * sizeof(__u64) : -EFAULT;
	} else {
		r->ustack_bytes = settings.user_stacks
			? bpf_get_stack(ctx, &r->ips[nk], BPFPROF_MAX_DEPTH * sizeof(__u64),
					BPF_F_USER_STACK)
			: -EFAULT;
	}
	nu = frames_in(r->ustack_bytes);
	size = __builtin_offsetof(struct fallback_record, ips) + (nk + nu) * sizeof(__u64);
	if (size > sizeof(*r))
		size = sizeof(*r);
	if (bpf_ringbuf_output(&fallback, r, size, 0)) {
		st->v[STAT_LOST_COLLISION + cause]++;
		return;
	}
	st->v[STAT_FALLBACK]++;
}

/*
 * --unwind dwarf: the user registers at the sample and the stack above sp,
 * copied a chunk at a time until the end of what is mapped, for userspace
 * to unwind. The registers are the task's user state (bpf_task_pt_regs),
 * also when the sample hit in the kernel.
 */
static __always_inline void send_for_unwinding(struct bpf_perf_event_data *ctx,
					       const struct sample_key *key, struct sample_stats *st,
					       bool user_mode)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct dwarf_record *r;
	struct pt_regs *regs;
	__u32 i, n = 0;

	r = bpf_ringbuf_reserve(&fallback, sizeof(*r) - BPFPROF_MAX_STACK_COPY + settings.stack_copy_bytes, 0);
	if (!r) {
		st->v[STAT_LOST_DWARF]++;
		return;
	}
	fill_head(&r->head, RECORD_DWARF, key);
	/* Interrupted in user mode, the kernel has no stack to give: don't ask. */
	r->head.kstack_bytes = !settings.kernel_stacks ? -EFAULT :
			  user_mode ? 0 : bpf_get_stack(ctx, r->kstack, sizeof(r->kstack), 0);
	r->ip = r->sp = r->bp = 0;
	if (settings.user_stacks && BPF_CORE_READ(task, mm)) {
		regs = (struct pt_regs *)bpf_task_pt_regs(task);
		r->ip = BPF_CORE_READ(regs, ip);
		r->sp = BPF_CORE_READ(regs, sp);
		r->bp = BPF_CORE_READ(regs, bp);
		for (i = 0; i < BPFPROF_MAX_STACK_COPY / BPFPROF_STACK_CHUNK; i++) {
			__u64 addr = r->sp + i * BPFPROF_STACK_CHUNK;
			__u32 tail;

			if ((i + 1) * BPFPROF_STACK_CHUNK > settings.stack_copy_bytes)
				break;
			if (!bpf_probe_read_user(r->stack + i * BPFPROF_STACK_CHUNK, BPFPROF_STACK_CHUNK,
						 (void *)addr)) {
				n += BPFPROF_STACK_CHUNK;
				continue;
			}
			/*
			 * The stack's mapping ends inside this chunk: the bytes up to
			 * its last page's end hold the outermost frames (_start's).
			 */
			tail = -addr & 4095;
			if (tail && tail < BPFPROF_STACK_CHUNK &&
			    !bpf_probe_read_user(r->stack + i * BPFPROF_STACK_CHUNK, tail, (void *)addr))
				n += tail;
			break;
		}
	}
	r->stack_bytes = n;
	r->reserved = 0;
	/*
	 * Every sample comes this way: waking the reader for each would cost a
	 * context switch per sample. It reads the ring every 20 ms anyway;
	 * wake it early once a 64th of the ring is waiting (1 MiB by default,
	 * some 60 samples), so a burst cannot fill the ring between its reads.
	 */
	bpf_ringbuf_submit(r, bpf_ringbuf_query(&fallback, BPF_RB_AVAIL_DATA) >=
			      bpf_ringbuf_query(&fallback, BPF_RB_RING_SIZE) / 64 ?
			      BPF_RB_FORCE_WAKEUP : BPF_RB_NO_WAKEUP);
	st->v[STAT_DWARF_SENT]++;
}

/*
 * The sample counted in the set it began in, or sent whole if the maps
 * could not take it: the last of its programs does it (runtime_walks.bpf.h).
 */
static __always_inline void sample_done(struct bpf_perf_event_data *ctx, struct walk_carry *c,
					struct sample_stats *st)
{
	__u32 set;
	int cause = -1;

	walk_handed_done(c, &c->key, st);
	set = c->set & 1;
	take_cause(c->cause, &cause);
	if (cause < 0 && !count(set, &c->key, 1)) {
		st->v[STAT_COUNTS_FULL]++;
		cause = CAUSE_COUNTS_FULL;
	}
	if (cause >= 0) {
		send_whole(ctx, &c->key, c->user_mode, st, cause, c->walked);
		return;
	}
	st->v[STAT_COUNTED_SET0 + set]++;
}

SEC("perf_event")
int on_sample(struct bpf_perf_event_data *ctx)
{
	__u64 id = bpf_get_current_pid_tgid();
	__u32 zero = 0, tgid = id >> 32, pid = (__u32)id;
	struct key_build kb = { .ctx = ctx, .sample = true };
	struct sample_stats *st;
	struct walk_carry *c;

	st = bpf_map_lookup_elem(&stats, &zero);
	c = walk_carry_of(CARRY_SAMPLE);
	if (!st || !c)
		return 0;
	st->v[STAT_SAMPLES]++;

	kb.user_mode = in_user_mode(ctx);
	if (pid == 0) {
		st->v[STAT_IDLE]++;
		if (!settings.include_idle) {
			st->v[STAT_IDLE_SKIPPED]++;
			/* In the states' shares only where the idle task is wanted (no -p, -t). */
			if (wanted(tgid, pid))
				st->v[STAT_CPU_STATE + cpu_state(false, 0)]++;
			return 0;
		}
	}
	if (!wanted(tgid, pid)) {
		st->v[STAT_FILTERED]++;
		return 0;
	}
	st->v[kb.user_mode ? STAT_USER_MODE : STAT_KERNEL_MODE]++;
	st->v[STAT_CPU_STATE + cpu_state(kb.user_mode, pid)]++;

	key_begin(&c->key, tgid, pid, STATE_RUNNING, !kb.user_mode);
	if (settings.dwarf_unwind) {
		send_for_unwinding(ctx, &c->key, st, kb.user_mode);
		return 0;
	}
	kb.set = active_set & 1;
	key_stacks(&c->key, &kb, st);
	c->set = kb.set;
	c->cause = kb.cause;
	c->walked = kb.walked;
	c->user_mode = kb.user_mode;
	c->handed = kb.handed;
	c->next = 0;
	walk_runtimes(ctx, &sample_walks, &c->key, c);
	sample_done(ctx, c, st);
	return 0;
}

#include "procs.bpf.h"
#include "offcpu.bpf.h"

/* Each runtime's walk, loaded when a process of it is first seen. */
RUNTIME_WALKS(RUNTIME_PROGRAMS)

char LICENSE[] SEC("license") = "Dual BSD/GPL";
