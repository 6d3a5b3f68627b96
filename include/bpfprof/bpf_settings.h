/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The BPF program's settings, fixed before it loads: its .rodata, which the
 * verifier reads as constants, so a setting that is off costs nothing at a
 * sample (the code it guards is dropped). The program reads them as
 * `settings` (bpf/settings.bpf.h); userspace derives those an option sets
 * in settings.c (struct sampler_config's bpf) and the sampler adds what
 * only it knows (src/sampler.c: bpf_settings_of). A new option the program
 * reads is a field here and its line in settings.c. Compiled by both
 * sides: a flag is a __u8.
 */
#ifndef BPFPROF_BPF_SETTINGS_H
#define BPFPROF_BPF_SETTINGS_H

#ifndef __bpf__
#include <linux/types.h>	/* the BPF side has them from vmlinux.h */
#endif

struct bpf_settings {
	__u8 filter_tgids;	/* -p: only the processes in tgid_filter */
	__u8 filter_pids;	/* -t: only the threads in pid_filter */
	__u8 filter_cgroup;	/* --cgroup: only tasks under cgroup_filter's directory */
	__u8 include_idle;	/* -I */
	__u8 kernel_stacks;	/* not -U */
	__u8 user_stacks;	/* not -K */
	__u8 dwarf_unwind;	/* --unwind dwarf: registers and stack sent for userspace to unwind */
	__u8 cfi_unwind;	/* --unwind auto: user stacks walked in the program */
	__u8 reserved[4];
	__u32 stack_copy_bytes;	/* --stack-size, a multiple of BPFPROF_STACK_CHUNK */
	/* Bit 1 << a runtime's id (interp.h): its frames read (no --no-OPTION, and the walk on) */
	__u32 runtime_frames;
	__u32 reserved2;
	__u64 min_block_ns;	/* --min-block */
	/*
	 * From a CPU's run queue to its preempt count, both per-CPU variables:
	 * the distance of their offsets in the kernel's per-CPU section (from
	 * its BTF; 0: unknown). A ksym would need their addresses, which
	 * kallsyms lists only with CONFIG_KALLSYMS_ALL.
	 */
	__s64 preempt_count_from_rq;
};

#endif
