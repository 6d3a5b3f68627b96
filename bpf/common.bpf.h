/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every part of the program starts from: the kernel's types, libbpf's
 * helpers, the types shared with userspace, and the errno values helpers
 * return (vmlinux.h has no macros).
 */
#ifndef BPFPROF_COMMON_BPF_H
#define BPFPROF_COMMON_BPF_H

#include "vmlinux.h"
#include <bpf/bpf_helpers.h>
#include <bpf/bpf_core_read.h>
#include <bpf/bpf_tracing.h>
#include "bpfprof/sample.h"

#define EFAULT 14
#define EEXIST 17
#define ENOMEM 12

/* A thread's user registers: where its native walk starts, and what a runtime's walk reads. */
struct user_regs {
	__u64 ip, sp, bp;
	__u64 r14, rbx, rdx, r13;	/* what a runtime's VM keeps in them */
};

#endif
