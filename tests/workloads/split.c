// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A single thread whose CPU time splits 2:1 between two leaf functions,
 * both called from split_caller(): main -> split_caller -> split_two_thirds
 * and main -> split_caller -> split_one_third. Each round the two run
 * chains (work.h) of 2n and n units, n random in 1..8 units of about 10 us:
 * a period of its own would alias with a sampling period (1 ms at 999 Hz)
 * and bias the split a sampler sees. A chain's time is proportional to its
 * steps on any x86-64 CPU, so the split is 2:1 wherever it runs.
 * Checked with WL_MEASURE=1 (each function's thread CPU time around its
 * calls): 2.00 on AMD EPYC, in this file's builds with and without frame
 * pointers (README, "Test workloads").
 *
 * usage: split [SECONDS [RATIO]]   (default 10 s; RATIO, default 2: split_two_thirds
 * runs RATIO times split_one_third's chain, for a split that changes, as bpfprof diff's test wants)
 */
#include "work.h"

#define UNIT 8000	/* chain steps */

volatile uint64_t sink;
static uint64_t ratio = 2;
static struct meter meters[] = { { "split_two_thirds" }, { "split_one_third" } };

__attribute__((noinline)) void split_two_thirds(uint64_t units)
{
	uint64_t x = sink;

	CHAIN(x, ratio * units * UNIT);
	sink = x;
}

__attribute__((noinline)) void split_one_third(uint64_t units)
{
	uint64_t x = sink;

	CHAIN(x, units * UNIT);
	sink = x;
}

__attribute__((noinline)) void split_caller(uint64_t units)
{
	METERED(meters[0], split_two_thirds(units));
	METERED(meters[1], split_one_third(units));
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	uint64_t x = 88172645463325252ULL;

	if (argc > 2 && atoi(argv[2]) > 0)
		ratio = atoi(argv[2]);

	while (now() < end)
		for (int i = 0; i < 50; i++)
			split_caller(1 + next_random(&x) % 8);
	report_meters(meters, 2);
	return 0;
}
