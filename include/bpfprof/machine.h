/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef BPFPROF_MACHINE_H
#define BPFPROF_MACHINE_H

/*
 * The machine can run a session: CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN),
 * kernel BTF at btf (NULL: the kernel's own); the open-file limit raised
 * to what root may. 0, or -1 having said what is missing and the fix.
 */
int check_machine(const char *btf);
/* Milliseconds since this process was exec'd, for -v's timing lines; -1 if unknown. */
double ms_since_exec(void);

#endif
