// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A single thread whose CPU time splits 2:1 between a function the
 * compiler inlines into its caller and one it calls: main -> inline_caller,
 * inside which inlined_fn() runs (two thirds) and plain_fn() is called
 * (one third). Only DWARF knows inlined_fn is there: a profile must show it
 * as a frame of its own, in this file, at a line between the markers
 * around its body. Each round runs chains (work.h) of 2n and n units, n
 * random in 1..8: 2:1 on any x86-64 CPU, with no period to alias with a
 * sampling period. Checked with WL_MEASURE=1 (README, "Test workloads").
 *
 * usage: inline [SECONDS]   (default 10)
 */
#include "work.h"

#define UNIT 8000	/* chain steps */

volatile uint64_t sink;
static struct meter meters[] = { { "inlined_fn" }, { "plain_fn" } };

/* inlined_fn: begin */
static inline __attribute__((always_inline)) void inlined_fn(uint64_t units)
{
	uint64_t x = sink;

	CHAIN(x, 2 * units * UNIT);
	sink = x;
}
/* inlined_fn: end */

__attribute__((noinline)) void plain_fn(uint64_t units)
{
	uint64_t x = sink;

	CHAIN(x, units * UNIT);
	sink = x;
}

__attribute__((noinline)) void inline_caller(uint64_t units)
{
	METERED(meters[0], inlined_fn(units));
	METERED(meters[1], plain_fn(units));
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	uint64_t x = 88172645463325252ULL;

	while (now() < end)
		for (int i = 0; i < 50; i++)
			inline_caller(1 + next_random(&x) % 8);
	report_meters(meters, 2);
	return 0;
}
