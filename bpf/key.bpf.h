/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The key a CPU sample (profile.bpf.c) and an off-CPU wait (offcpu.bpf.h)
 * are counted under: whose it is (key_begin), then its stacks, as the
 * settings ask (key_stacks). In two steps because between them a sample
 * under --unwind dwarf leaves with its identity alone, and a thread leaving
 * its CPU may take the walk of its last wait again (it needs the
 * generation). Each caller passes constants for what differs, so each has
 * only its own code.
 */
#ifndef BPFPROF_KEY_BPF_H
#define BPFPROF_KEY_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "settings.bpf.h"
#include "unwind.bpf.h"

/*
 * exec counts its generation at sched_process_exec, a few steps after the
 * new program's registers are set: a sample in between, still in execve
 * with the user sp at the new stack's top, is the new program's.
 */
static __always_inline bool new_program_in_exec(void)
{
	struct task_struct *task = bpf_get_current_task_btf();
	struct pt_regs *regs;

	if (!bpf_core_field_exists(task->in_execve) ||
	    !BPF_CORE_READ_BITFIELD_PROBED(task, in_execve) || !BPF_CORE_READ(task, mm))
		return false;
	regs = (struct pt_regs *)bpf_task_pt_regs(task);
	return BPF_CORE_READ(regs, sp) == BPF_CORE_READ(task, mm, start_stack);
}

/*
 * A key for the current task, thread pid of process tgid: its cgroup, name
 * and generation, in state (enum thread_state), no stacks yet.
 * sample_in_kernel: a CPU sample that interrupted the kernel, maybe an exec.
 */
static __always_inline void key_begin(struct sample_key *key, __u32 tgid, __u32 pid, __u32 state,
				      bool sample_in_kernel)
{
	__builtin_memset(key, 0, sizeof(*key));
	key->tgid = tgid;
	key->pid = pid;
	key->state = state;
	key->cgroup_id = bpf_get_current_cgroup_id();
	bpf_get_current_comm(key->comm, sizeof(key->comm));
	key->gen = process_gen(tgid);
	if (sample_in_kernel && new_program_in_exec())
		key->gen++;
}

/* How key_stacks is to record a key's stacks, and what it found. */
struct key_build {
	void *ctx;		/* the program's context, for bpf_get_stackid() */
	__u32 set;		/* the active map set, 0 or 1 */
	/*
	 * A CPU sample, else a thread leaving its CPU. A switch is no sample:
	 * stacks it finds none of are not in the samples' statistics, and its
	 * frame-pointer user stack goes uncounted and never sends it whole
	 * (offcpu.bpf.h keeps its own copy).
	 */
	bool sample;
	bool user_mode;		/* a sample that interrupted user code: no kernel stack */
	/*
	 * A switch that leaves from where it left last time: the user stack
	 * walked then (key->unwind and ustack_hash set) is stored, not walked.
	 */
	const __u64 *walked_before;
	int cause;		/* out: enum fallback_cause, the maps could not take it; -1 */
	__u32 walked;		/* out: frames walked into walk_scratch (0: not walked) */
	/*
	 * out: the walk stopped at code a runtime's program walks
	 * (WALK_HANDED): not stored yet, its runtime's program goes on with it
	 * (runtime_walks.bpf.h's walk_handed_done stores it).
	 */
	bool handed;
};

/*
 * The current task's stacks into the key and kb's set: the kernel stack's
 * id, the user stack's (frame pointers) or walked hash (--unwind auto).
 * Its interpreter's frames are its runtime's program's to walk, next
 * (runtime_walks.bpf.h).
 */
static __always_inline void key_stacks(struct sample_key *key, struct key_build *kb,
				       struct sample_stats *st)
{
	__u32 set = kb->set;

	kb->cause = -1;
	kb->walked = 0;
	kb->handed = false;
	/* Interrupted in user mode, the kernel has no stack to give: don't ask. */
	key->kstack_id = settings.kernel_stacks && !kb->user_mode
		? stack_id(kb->ctx, set, false, st, &kb->cause, kb->sample) : BPFPROF_NO_STACK;
	key->ustack_id = BPFPROF_NO_STACK;
	if (!settings.user_stacks)
		return;
	if (!settings.cfi_unwind) {
		if (kb->sample) {
			key->ustack_id = stack_id(kb->ctx, set, true, st, &kb->cause, true);
		} else {
			key->ustack_id = set ? bpf_get_stackid(kb->ctx, &stacks1, BPF_F_USER_STACK)
					     : bpf_get_stackid(kb->ctx, &stacks0, BPF_F_USER_STACK);
			if (key->ustack_id < 0)
				key->ustack_id = BPFPROF_NO_STACK;
		}
		return;
	}
	if (kb->walked_before)
		store_ustack(set, key, kb->walked_before, st, &kb->cause);
	else if (!walk_user_stack(kb->ctx, kb->user_mode, key, st, &kb->walked)) {
		if (kb->sample)
			st->v[STAT_USTACK_NONE]++;
	} else if (key->unwind & WALK_HANDED) {
		kb->handed = true;
	} else {
		store_walked(set, key, st, &kb->cause);
	}
}

#endif
