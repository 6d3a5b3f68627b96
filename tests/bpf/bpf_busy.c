// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Loads busy.bpf.c for SECONDS, slowing every system call of process PID:
 * kernel code that appears in the middle of a bpfprof run.
 *
 * usage: bpf-busy PID SECONDS
 */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "busy.skel.h"

int main(int argc, char **argv)
{
	struct busy_bpf *skel;

	if (argc < 3)
		return 2;
	skel = busy_bpf__open();
	if (!skel)
		return 1;
	skel->rodata->target_tgid = atoi(argv[1]);
	if (busy_bpf__load(skel) || busy_bpf__attach(skel)) {
		fprintf(stderr, "bpf-busy: cannot load or attach\n");
		busy_bpf__destroy(skel);
		return 1;
	}
	usleep(atof(argv[2]) * 1e6);
	busy_bpf__destroy(skel);
	return 0;
}
