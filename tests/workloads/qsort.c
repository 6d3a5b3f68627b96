// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A hot path through libc: main -> sort_twice -> qsort -> ... -> by_value
 * and main -> sort_once -> qsort -> ... -> by_value. Each round sorts the
 * same shuffled array twice in one and once in the other: a 2:1 split of
 * the time spent under sort_twice and sort_once, most of it inside libc's
 * qsort, which has no frame pointers. All three sorts of a round run the
 * same code on the same data, one after the other, so whatever the CPU
 * (caches, branch predictors, alignment) does to one it does to the
 * others. Checked with WL_MEASURE=1 (README, "Test workloads").
 *
 * usage: qsort [SECONDS]   (default 10)
 */
#include <string.h>

#include "work.h"

#define N 4096

static uint32_t data[N], work[N];
static struct meter meters[] = { { "sort_twice" }, { "sort_once" } };

__attribute__((noinline)) int by_value(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static void sort_copy(void)
{
	memcpy(work, data, sizeof(work));
	qsort(work, N, sizeof(work[0]), by_value);
}

__attribute__((noinline)) void sort_twice(void)
{
	sort_copy();
	sort_copy();
}

__attribute__((noinline)) void sort_once(void)
{
	sort_copy();
}

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	uint32_t x = 2463534242u;

	for (int i = 0; i < N; i++) {
		x ^= x << 13;
		x ^= x >> 17;
		x ^= x << 5;
		data[i] = x;
	}
	while (now() < end) {
		METERED(meters[0], sort_twice());
		METERED(meters[1], sort_once());
	}
	report_meters(meters, 2);
	return 0;
}
