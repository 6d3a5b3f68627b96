// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A short-lived process: burns MS milliseconds of CPU in burst_work(), then
 * exits, often before the profiler's next drain. Hundreds of them make the
 * storm that tests naming the frames of processes already gone.
 *
 * usage: burst MS   (default 20)
 */
#include <stdint.h>
#include <stdlib.h>
#include <time.h>

volatile uint64_t sink;

static double cpu_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

__attribute__((noinline)) void burst_work(double ms)
{
	double end = cpu_ms() + ms;

	while (cpu_ms() < end)
		for (uint64_t i = 0; i < 200000; i++)
			sink += i ^ (i >> 5);
}

int main(int argc, char **argv)
{
	burst_work(argc > 1 ? atof(argv[1]) : 20);
	return 0;
}
