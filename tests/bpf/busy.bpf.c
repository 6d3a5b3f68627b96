// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Not part of bpfprof: a BPF program for the tests that spends measurable
 * time in the kernel on every system call of one process, so that samples
 * land inside a BPF program loaded while bpfprof already runs.
 */
#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_tracing.h>

const volatile __u32 target_tgid;
__u64 spins;

SEC("tp_btf/sys_enter")
int BPF_PROG(busy_sys_enter, struct pt_regs *regs, long id)
{
	__u64 x = id;
	int i;

	if (bpf_get_current_pid_tgid() >> 32 != target_tgid)
		return 0;
	for (i = 0; i < 4000; i++)
		x = x * 6364136223846793005ULL + 1442695040888963407ULL;
	spins += x & 1;
	return 0;
}

char LICENSE[] SEC("license") = "Dual BSD/GPL";
