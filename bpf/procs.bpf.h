/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The process trackers: each exec and each new process starts a generation
 * (maps.bpf.h's proc_gen) and, with the walk, has its mappings read.
 * Attached first, before sampling starts: whoever tracks processes after
 * them must not miss one.
 */
#ifndef BPFPROF_PROCS_BPF_H
#define BPFPROF_PROCS_BPF_H

#include "common.bpf.h"
#include "maps.bpf.h"
#include "unwind.bpf.h"

static __always_inline void next_generation(__u32 tgid)
{
	__u32 one = 1, *gen = bpf_map_lookup_elem(&proc_gen, &tgid);

	if (gen)
		__sync_fetch_and_add(gen, 1);
	else
		bpf_map_update_elem(&proc_gen, &tgid, &one, BPF_ANY);
}

SEC("tp_btf/sched_process_exec")
int BPF_PROG(on_exec, struct task_struct *p, pid_t old_pid, struct linux_binprm *bprm)
{
	next_generation(BPF_CORE_READ(p, tgid));
	mappings_at_exec(p);
	return 0;
}

SEC("tp_btf/sched_process_fork")
int BPF_PROG(on_fork, struct task_struct *parent, struct task_struct *child)
{
	/* A new thread joins its process; only a new process starts a generation. */
	if (BPF_CORE_READ(child, pid) == BPF_CORE_READ(child, tgid)) {
		next_generation(BPF_CORE_READ(child, tgid));
		mappings_at_fork(child);
	}
	return 0;
}

#endif
