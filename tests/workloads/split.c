// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A single thread whose CPU time splits 2:1 between two leaf functions,
 * both called from split_caller(): main -> split_caller -> split_two_thirds
 * and main -> split_caller -> split_one_third. The two loops are the same
 * instructions, run 2N and N times.
 *
 * usage: split [SECONDS]   (default 10)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

#define UNIT 200000

volatile uint64_t sink;

__attribute__((noinline)) void split_two_thirds(void)
{
	for (uint64_t i = 0; i < 2 * UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void split_one_third(void)
{
	for (uint64_t i = 0; i < UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void split_caller(void)
{
	split_two_thirds();
	split_one_third();
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

	while (now() < end)
		for (int i = 0; i < 20; i++)
			split_caller();
	return 0;
}
