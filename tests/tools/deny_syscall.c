// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Runs a command with one system call refused by seccomp, as a container's
 * policy would: how bpfprof fares when bpf() or perf_event_open() says no.
 *
 * usage: deny_syscall bpf|perf_event_open ERRNO COMMAND [ARG...]
 */
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

int main(int argc, char **argv)
{
	long nr = argc < 4 ? -1 : !strcmp(argv[1], "bpf") ? SYS_bpf
			       : !strcmp(argv[1], "perf_event_open") ? SYS_perf_event_open : -1;
	int err = argc < 4 ? 0 : atoi(argv[2]);
	/* The native ABI only: enough for a test, not a sandbox. */
	struct sock_filter filter[] = {
		BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
		BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, nr, 0, 1),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | (err & SECCOMP_RET_DATA)),
		BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
	};
	struct sock_fprog prog = { sizeof(filter) / sizeof(filter[0]), filter };

	if (nr < 0 || err <= 0) {
		fprintf(stderr, "usage: deny_syscall bpf|perf_event_open ERRNO COMMAND [ARG...]\n");
		return 2;
	}
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) || prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog)) {
		perror("deny_syscall: seccomp");
		return 1;
	}
	execvp(argv[3], argv + 3);
	perror(argv[3]);
	return 127;
}
