// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A single thread whose CPU time splits 2:1 between two leaf functions,
 * both called from split_caller(): main -> split_caller -> split_two_thirds
 * and main -> split_caller -> split_one_third. Each round the two loops run
 * the same instructions 2n and n times, n random in 1..8 units of about
 * 10 us: a period of its own would alias with a sampling period (1 ms at
 * 999 Hz) and bias the split a sampler sees.
 *
 * usage: split [SECONDS]   (default 10)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 2000

volatile uint64_t sink;

__attribute__((noinline)) void split_two_thirds(uint64_t units)
{
	for (uint64_t i = 0; i < 2 * units * UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void split_one_third(uint64_t units)
{
	for (uint64_t i = 0; i < units * UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void split_caller(uint64_t units)
{
	split_two_thirds(units);
	split_one_third(units);
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
			split_caller(1 + x % 8);
		}
	}
	return 0;
}
