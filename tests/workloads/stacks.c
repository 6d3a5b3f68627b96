// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Makes PATHS distinct stacks, for measuring what a profile of many stacks
 * costs. Path p is a recursion through four functions (step_a .. step_d)
 * spelled by p in bijective base 4, so its depth and its route both vary
 * (1 to 9 frames below the thread for 100,000 paths) and no two paths share
 * a call chain; each ends in burn(). Every thread visits every path in turn,
 * starting at a different one, and spends VISIT_US of CPU on each visit:
 * with a visit longer than the sampling period every path is sampled on
 * each sweep, so a profile of one sweep holds about PATHS stacks.
 *
 * burn() is one `rep stosb` over a 64 KiB buffer in a loop: an interrupt
 * in a string instruction returns to it, so nearly every sample of a path
 * has the same leaf address, and a path is one stack by address, not one
 * per instruction of a loop.
 *
 * usage: stacks [-n PATHS] [-t THREADS] [-u VISIT_US] -d SECONDS
 *          every thread sweeps the paths for SECONDS
 *        stacks [-n PATHS] [-t THREADS] -w UNITS
 *          fixed work: every thread burns UNITS units, 16 per visit, then
 *          the elapsed seconds go to stdout (for timing a slowdown)
 *        stacks -c
 *          units one thread burns per second here, to stdout
 * Defaults: 1000 paths, 2 threads, 100 us visits.
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define UNIT_BYTES (64 * 1024)
#define WORK_UNITS_PER_VISIT 16

static uint64_t paths = 1000;
static int threads = 2;
static double visit_us = 100, seconds = -1;
static uint64_t work_units;
static uint32_t units_per_visit;
static double start_time;

/* The buffer a thread's burn() writes; per thread so threads do not share lines. */
static __thread unsigned char *buffer;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void burn(uint32_t units)
{
	for (uint32_t i = 0; i < units; i++) {
#if defined(__x86_64__)
		void *dst = buffer;
		size_t n = UNIT_BYTES;

		__asm__ volatile("rep stosb" : "+D"(dst), "+c"(n) : "a"(0) : "memory");
#else
		for (size_t j = 0; j < UNIT_BYTES; j++)
			((volatile unsigned char *)buffer)[j] = 0;
#endif
	}
}

typedef void step_fn(uint64_t code, uint32_t units);
step_fn step_a, step_b, step_c, step_d;
static step_fn *const steps[4] = { step_a, step_b, step_c, step_d };

/* One digit of the path per frame: the digit picks the next function, 0 ends it. */
static inline void descend(uint64_t code, uint32_t units)
{
	if (!code) {
		burn(units);
		return;
	}
	steps[(code - 1) % 4]((code - 1) / 4, units);
}

__attribute__((noinline)) void step_a(uint64_t code, uint32_t units) { descend(code, units); }
__attribute__((noinline)) void step_b(uint64_t code, uint32_t units) { descend(code, units); }
__attribute__((noinline)) void step_c(uint64_t code, uint32_t units) { descend(code, units); }
__attribute__((noinline)) void step_d(uint64_t code, uint32_t units) { descend(code, units); }

/* Path p, 0-based: p + 1 in bijective base 4 is a non-empty route, one per p. */
__attribute__((noinline)) void visit(uint64_t p, uint32_t units)
{
	descend(p + 1, units);
}

static void *sweep_thread(void *arg)
{
	int t = (int)(intptr_t)arg;
	uint64_t p = paths * t / threads, burnt = 0;
	double end = start_time + seconds;

	buffer = aligned_alloc(4096, UNIT_BYTES);
	memset(buffer, 1, UNIT_BYTES);
	for (;;) {
		if (work_units) {
			if (burnt >= work_units)
				break;
			burnt += WORK_UNITS_PER_VISIT;
		} else if (now() >= end) {
			break;
		}
		visit(p, units_per_visit);
		p = p + 1 == paths ? 0 : p + 1;
	}
	free(buffer);
	return NULL;
}

/* Units one thread burns per second, over a quarter of a second. */
static double units_per_second(void)
{
	double t0, t;
	uint64_t n = 0;

	buffer = aligned_alloc(4096, UNIT_BYTES);
	memset(buffer, 1, UNIT_BYTES);
	t0 = now();
	do {
		burn(64);
		n += 64;
	} while ((t = now()) - t0 < 0.25);
	free(buffer);
	return n / (t - t0);
}

static int usage(void)
{
	fprintf(stderr, "usage: stacks [-n PATHS] [-t THREADS] [-u VISIT_US] -d SECONDS\n"
			"       stacks [-n PATHS] [-t THREADS] -w UNITS\n"
			"       stacks -c\n");
	return 2;
}

int main(int argc, char **argv)
{
	pthread_t *tid;
	int c;

	while ((c = getopt(argc, argv, "n:t:u:d:w:c")) != -1) {
		switch (c) {
		case 'n': paths = strtoull(optarg, NULL, 10); break;
		case 't': threads = atoi(optarg); break;
		case 'u': visit_us = atof(optarg); break;
		case 'd': seconds = atof(optarg); break;
		case 'w': work_units = strtoull(optarg, NULL, 10); break;
		case 'c': printf("%.0f\n", units_per_second()); return 0;
		default: return usage();
		}
	}
	if (!paths || threads < 1 || visit_us <= 0 || (seconds <= 0) == !work_units)
		return usage();
	prctl(PR_SET_NAME, "stacks");
	/* Fixed work is counted in units; a timed sweep calibrates its visits here. */
	units_per_visit = work_units ? WORK_UNITS_PER_VISIT
				     : (uint32_t)(units_per_second() * visit_us / 1e6 + 1);
	tid = calloc(threads, sizeof(*tid));
	start_time = now();
	for (int i = 0; i < threads; i++)
		pthread_create(&tid[i], NULL, sweep_thread, (void *)(intptr_t)i);
	for (int i = 0; i < threads; i++)
		pthread_join(tid[i], NULL);
	if (work_units)
		printf("%.3f\n", now() - start_time);
	free(tid);
	return 0;
}
