// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * One place to wait, two callers of it, called from one place: one_part()
 * waits 10 ms there and three_parts() 30 ms, each twice in a row, round
 * after round. Both callers' frames are alike, so the wait's system call is
 * made with the same registers from either: only a return address on the
 * stack tells them apart (what a profiler that reuses a thread's last stack walk must
 * check). At exit it prints the wall time spent under each,
 * "measured: one NS" and "measured: three NS", on stderr.
 *
 * usage: callers SECONDS
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

__attribute__((noinline)) static void pause_ms(long ms)
{
	struct timespec ts = { 0, ms * 1000000 };

	nanosleep(&ts, NULL);
}

/* The empty asm after the call keeps it a call, not a jump (no tail call). */
__attribute__((noinline)) static void one_part(void)
{
	pause_ms(10);
	__asm__ volatile("");
}

__attribute__((noinline)) static void three_parts(void)
{
	pause_ms(30);
	__asm__ volatile("");
}

int main(int argc, char **argv)
{
	uint64_t end = wall_ns() + (argc > 1 ? atof(argv[1]) : 5) * 1e9, one = 0, three = 0, t;
	void (*part)(void);
	int i;

	while (wall_ns() < end)
#pragma clang loop unroll(disable)
		for (i = 0; i < 4; i++) {
			/* One call site for both, hidden from the optimizer: one return address here. */
			part = i < 2 ? one_part : three_parts;
			__asm__ volatile("" : "+r"(part));
			t = wall_ns();
			part();
			*(i < 2 ? &one : &three) += wall_ns() - t;
		}
	fprintf(stderr, "measured: one %llu\nmeasured: three %llu\n", (unsigned long long)one,
		(unsigned long long)three);
	return 0;
}
