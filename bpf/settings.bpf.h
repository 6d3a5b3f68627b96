/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The program's settings (include/bpfprof/bpf_settings.h), in its .rodata:
 * userspace fills them before the load, and every part of the program
 * reads them here.
 */
#ifndef BPFPROF_SETTINGS_BPF_H
#define BPFPROF_SETTINGS_BPF_H

#include "common.bpf.h"
#include "bpfprof/bpf_settings.h"

/* A program loaded with no settings given samples both stacks by frame pointers. */
const volatile struct bpf_settings settings = {
	.kernel_stacks = 1,
	.user_stacks = 1,
	.stack_copy_bytes = 16384,
};

#endif
