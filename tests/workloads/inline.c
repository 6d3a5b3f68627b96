// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A single thread whose CPU time splits 2:1 between a function the
 * compiler inlines into its caller and one it calls: main -> inline_caller,
 * inside which inlined_fn() runs (two thirds) and plain_fn() is called
 * (one third). Only DWARF knows inlined_fn is there: a profile must show it
 * as a frame of its own, in this file, at a line between the markers
 * around its body. Rounds vary at random, as in split.c, so as not to
 * alias with a sampling period.
 *
 * usage: inline [SECONDS]   (default 10)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 2000

volatile uint64_t sink;

/* inlined_fn: begin */
static inline __attribute__((always_inline)) void inlined_fn(uint64_t units)
{
	for (uint64_t i = 0; i < 2 * units * UNIT; i++)
		sink += i ^ (i >> 3);
}
/* inlined_fn: end */

__attribute__((noinline)) void plain_fn(uint64_t units)
{
	for (uint64_t i = 0; i < units * UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void inline_caller(uint64_t units)
{
	inlined_fn(units);
	plain_fn(units);
}

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	uint64_t x = 88172645463325252ULL;

	while (now() < end) {
		for (int i = 0; i < 50; i++) {
			x ^= x << 13;
			x ^= x >> 7;
			x ^= x << 17;
			inline_caller(1 + x % 8);
		}
	}
	return 0;
}
