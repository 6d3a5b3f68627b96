/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Work whose cost is known on any x86-64 CPU, and a way to check it.
 *
 * CHAIN(x, steps) runs a chain of multiply-adds on one register, each
 * step needing the one before: its time is steps times the latency of a
 * multiply and an add (4 cycles on every x86-64 core of the last decade,
 * Intel's and AMD's), whatever the code's alignment, the caches or the
 * branch predictor, none of which can shorten a chain of dependent
 * operations. So two functions that run chains of 2n and n steps split
 * their time 2:1 on any host; two loops through memory do not (the same
 * loop n and 2n times, at two addresses, measured 4.6:3.1:1 for a nominal
 * 3:2:1 on one host). The empty asm hides the value from the optimizer,
 * so the chain is neither folded, vectorized nor moved out of its
 * function. A macro, not an inline function: DWARF would show an inline
 * function as a frame of its own, below the function being measured.
 *
 * With WL_MEASURE=1 in the environment, a workload measures each part's
 * own thread CPU time around its calls (METERED) and prints the totals at
 * exit, "measured: NAME NS" lines on stderr, so a test or a person can
 * compare a profile with what the workload did on this host. Off by
 * default: the clock is a system call, which would add kernel frames.
 * What reading the clock itself costs a call (some 2 us in a VM, 4 % of
 * a split round) is measured at start and taken off.
 */
#ifndef WORKLOAD_WORK_H
#define WORKLOAD_WORK_H

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* X (a uint64_t variable) through STEPS steps, four a turn: the loop's count and branch run beside. */
#define CHAIN_STEP(x)                                                              \
	do {                                                                       \
		(x) = (x) * 6364136223846793005ULL + 1442695040888963407ULL;       \
		__asm__ volatile("" : "+r"(x));                                    \
	} while (0)
#define CHAIN(x, steps)                                                            \
	do {                                                                       \
		for (uint64_t i_ = 0; i_ < (steps); i_ += 4) {                     \
			CHAIN_STEP(x);                                             \
			CHAIN_STEP(x);                                             \
			CHAIN_STEP(x);                                             \
			CHAIN_STEP(x);                                             \
		}                                                                  \
	} while (0)

struct meter {
	const char *name;
	uint64_t ns, calls;
};

static inline uint64_t thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static inline int measuring(void)
{
	static int on = -1;

	if (on < 0) {
		const char *v = getenv("WL_MEASURE");

		on = v && *v && *v != '0';
	}
	return on;
}

/* Runs CALL, adding its thread CPU time to METER when measuring. */
#define METERED(meter, call)                                   \
	do {                                                    \
		if (measuring()) {                              \
			uint64_t t0_ = thread_cpu_ns();         \
			call;                                   \
			(meter).ns += thread_cpu_ns() - t0_;    \
			(meter).calls++;                        \
		} else {                                        \
			call;                                   \
		}                                               \
	} while (0)

/* What one METERED call adds to its meter with nothing inside: the median of 1001 tries. */
static inline uint64_t meter_overhead_ns(void)
{
	enum { TRIES = 1001 };
	uint64_t d[TRIES];

	for (int i = 0; i < TRIES; i++) {
		uint64_t t0 = thread_cpu_ns();

		d[i] = thread_cpu_ns() - t0;
	}
	for (int i = 1; i < TRIES; i++)	/* insertion sort: once, at exit */
		for (int j = i; j > 0 && d[j - 1] > d[j]; j--) {
			uint64_t t = d[j];

			d[j] = d[j - 1];
			d[j - 1] = t;
		}
	return d[TRIES / 2];
}

/* Prints the meters, less what reading the clock cost, when measuring. */
static inline void report_meters(const struct meter *m, int n)
{
	uint64_t overhead;

	if (!measuring())
		return;
	overhead = meter_overhead_ns();
	for (int i = 0; i < n; i++) {
		uint64_t ns = m[i].ns > m[i].calls * overhead ? m[i].ns - m[i].calls * overhead : 0;

		fprintf(stderr, "measured: %s %llu\n", m[i].name, (unsigned long long)ns);
	}
}

static inline double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

/* xorshift64: the rounds' random sizes, so they have no period to alias with sampling. */
static inline uint64_t next_random(uint64_t *x)
{
	*x ^= *x << 13;
	*x ^= *x >> 7;
	*x ^= *x << 17;
	return *x;
}

#endif
