/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Per-CPU variables' offsets read straight from the kernel's raw BTF, in
 * one pass over its bytes: libbpf's btf__parse of vmlinux costs some 30 ms
 * and 11 MB to answer the same, and libbpf parses it again to load.
 */
#ifndef BPFPROF_KERNEL_BTF_H
#define BPFPROF_KERNEL_BTF_H

#include <stddef.h>
#include <stdint.h>

/*
 * The offsets of the per-CPU variables names[0..n) in the BTF's
 * ".data..percpu" section, into offsets (-1: not there). 0 if the bytes
 * are raw BTF and were read whole, else -EINVAL.
 */
int kernel_btf_percpu_offsets(const void *btf, size_t len, const char *const *names,
			      int64_t *offsets, size_t n);

#endif
