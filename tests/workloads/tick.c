// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A light, mostly idle process, like most of a busy host's: it wakes every
 * 200 ms, spends MS milliseconds of its own CPU time in c_tick_outer ->
 * c_tick_inner, then sleeps again, until killed. A hundred of these (and
 * their Python, Ruby and LuaJIT twins) make the host tests/bench/agent.sh
 * measures the agent on.
 *
 * usage: tick [MS]   (default 2)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#include "work.h"

__attribute__((noinline)) static uint64_t c_tick_inner(uint64_t x)
{
	CHAIN(x, 100000);
	return x;
}

/* MS ms of CPU time (the thread's clock: load stretches the wall time, not the work). */
__attribute__((noinline)) static uint64_t c_tick_outer(double ms, uint64_t x)
{
	uint64_t end = thread_cpu_ns() + (uint64_t)(ms * 1e6);

	while (thread_cpu_ns() < end)
		x = c_tick_inner(x);
	return x;
}

int main(int argc, char **argv)
{
	double ms = argc > 1 ? atof(argv[1]) : 2;
	struct timespec nap = { 0, 200000000 };
	volatile uint64_t sink = 1;

	for (;;) {
		sink = c_tick_outer(ms, sink);
		nanosleep(&nap, NULL);
	}
}
