// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Children that are not new programs: a vfork() child, which runs on its
 * parent's stack in its parent's memory until it exits, and a clone() child
 * (CLONE_VM, its own stack, its own process), whose outermost frame is
 * libc's clone, not _start. Each burns SECONDS of CPU in a chain of its own
 * (vfork_work, clone_work); the parent waits for both.
 *
 * usage: spawn [SECONDS]   (default 5)
 */
#define _GNU_SOURCE
#include <sched.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include "work.h"

volatile uint64_t sink;
static double seconds = 5;

__attribute__((noinline)) void vfork_work(void)
{
	double end = now() + seconds;
	uint64_t x = sink;

	while (now() < end)
		CHAIN(x, 100000);
	sink = x;
}

__attribute__((noinline)) int clone_work(void *arg)
{
	double end = now() + seconds;
	uint64_t x = sink;

	(void)arg;
	while (now() < end)
		CHAIN(x, 100000);
	sink = x;
	return 0;
}

static char clone_stack[1 << 20] __attribute__((aligned(16)));

int main(int argc, char **argv)
{
	pid_t child;

	if (argc > 1)
		seconds = atof(argv[1]);
	child = clone(clone_work, clone_stack + sizeof(clone_stack), CLONE_VM | SIGCHLD, NULL);
	if (child < 0)
		return 1;
	/* The parent waits in vfork until its child exits. */
	if (vfork() == 0) {
		vfork_work();
		_exit(0);
	}
	waitpid(child, NULL, 0);
	return 0;
}
