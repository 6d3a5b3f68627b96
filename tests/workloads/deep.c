// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Deep recursion: deep_recurse() calls itself DEPTH times (default 300)
 * and burns CPU at the bottom in deep_leaf(), so every sample's stack is
 * deeper than any profiler keeps. It must be cut cleanly, never padded
 * with garbage frames.
 *
 * usage: deep [SECONDS [DEPTH]]   (default 10 s, 300 frames)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void deep_leaf(double end)
{
	while (now() < end)
		for (uint64_t i = 0; i < 100000; i++)
			sink += i * 7;
}

__attribute__((noinline)) void deep_recurse(int depth, double end)
{
	if (depth > 0)
		deep_recurse(depth - 1, end);
	else
		deep_leaf(end);
	sink++;	/* not a tail call: every level keeps its frame */
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10;
	int depth = argc > 2 ? atoi(argv[2]) : 300;

	deep_recurse(depth, now() + seconds);
	return 0;
}
