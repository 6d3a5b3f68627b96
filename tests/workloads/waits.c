// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A thread that spends its time three ways, in rounds: 20 ms on the CPU
 * (its own CPU clock: a loaded machine stretches the wall time, not the
 * work), 20 ms in nanosleep(), and 40 ms blocked in read() on a timerfd.
 * The functions burn, doze and wait_timer are where a profile shows each.
 *
 * usage: waits SECONDS [THREADS]
 *
 * It prints, at exit, the wall time each phase took over the run
 * ("measured: PHASE NS" on stderr), so a test compares an off-CPU or wall
 * profile with what the thread did on this host, under any load. With
 * THREADS, as many threads do the same.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/timerfd.h>
#include <time.h>
#include <unistd.h>

#include "work.h"

static double seconds;
static uint64_t phase_ns[3];	/* burn, doze, wait_timer: wall time, all threads */
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;

static uint64_t wall_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* 20 ms of this thread's CPU time, however long that takes on the clock. */
__attribute__((noinline)) static void burn(void)
{
	uint64_t end = thread_cpu_ns() + 20000000, x = 1;

	while (thread_cpu_ns() < end)
		CHAIN(x, 20000);
}

__attribute__((noinline)) static void doze(void)
{
	struct timespec ts = { 0, 20000000 };

	nanosleep(&ts, NULL);
}

__attribute__((noinline)) static void wait_timer(int fd)
{
	struct itimerspec its = { { 0, 0 }, { 0, 40000000 } };
	uint64_t expirations;

	timerfd_settime(fd, 0, &its, NULL);
	if (read(fd, &expirations, sizeof(expirations)) != sizeof(expirations))
		perror("waits: read");
}

static void *rounds(void *unused)
{
	uint64_t end = wall_ns() + seconds * 1e9, t[4], mine[3] = { 0 };
	int fd = timerfd_create(CLOCK_MONOTONIC, TFD_CLOEXEC);

	(void)unused;
	if (fd < 0) {
		perror("waits: timerfd_create");
		exit(1);
	}
	while (wall_ns() < end) {
		t[0] = wall_ns();
		burn();
		t[1] = wall_ns();
		doze();
		t[2] = wall_ns();
		wait_timer(fd);
		t[3] = wall_ns();
		for (int i = 0; i < 3; i++)
			mine[i] += t[i + 1] - t[i];
	}
	close(fd);
	pthread_mutex_lock(&lock);
	for (int i = 0; i < 3; i++)
		phase_ns[i] += mine[i];
	pthread_mutex_unlock(&lock);
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 2 ? atoi(argv[2]) : 1;
	pthread_t *tids;

	seconds = argc > 1 ? atof(argv[1]) : 3;
	if (seconds <= 0 || threads < 1 || threads > 4096) {
		fprintf(stderr, "usage: waits SECONDS [THREADS]\n");
		return 2;
	}
	tids = calloc(threads, sizeof(*tids));
	for (int i = 1; i < threads; i++)
		pthread_create(&tids[i], NULL, rounds, NULL);
	rounds(NULL);
	for (int i = 1; i < threads; i++)
		pthread_join(tids[i], NULL);
	fprintf(stderr, "measured: burn %llu\nmeasured: doze %llu\nmeasured: wait_timer %llu\n",
		(unsigned long long)phase_ns[0], (unsigned long long)phase_ns[1],
		(unsigned long long)phase_ns[2]);
	free(tids);
	return 0;
}
