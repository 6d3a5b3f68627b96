// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Thread churn: waves of THREADS threads, each sleeping ROUNDS times for
 * 50 us and then exiting, one wave after another for SECONDS. Threads
 * leave the CPU at a high rate and end all the time, some while others
 * of their wave are still off the CPU; at exit it prints
 * "measured: threads N" (created) and "measured: ids N" (distinct thread
 * ids among them: past pid_max, 32768 here, the kernel reuses them) on
 * stderr.
 *
 * usage: churn SECONDS [THREADS [ROUNDS]]   (default 200 threads, 20 rounds)
 */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

#define MAX_TIDS (1 << 22)	/* the highest pid_max */

static int rounds = 20;
static unsigned char tid_seen[MAX_TIDS / 8];

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) static void *churn_thread(void *arg)
{
	struct timespec ts = { 0, 50000 };
	pid_t tid = gettid();
	int i;

	if (tid > 0 && tid < MAX_TIDS)
		__atomic_fetch_or(&tid_seen[tid / 8], 1 << (tid % 8), __ATOMIC_RELAXED);
	for (i = 0; i < rounds; i++)
		nanosleep(&ts, NULL);
	return arg;
}

int main(int argc, char **argv)
{
	double end = now() + (argc > 1 ? atof(argv[1]) : 5);
	int threads = argc > 2 ? atoi(argv[2]) : 200, i, n;
	pthread_t *t;
	pthread_attr_t attr;
	long created = 0, ids = 0;

	if (argc > 3)
		rounds = atoi(argv[3]);
	if (threads < 1 || rounds < 0 || !(t = calloc(threads, sizeof(*t))))
		return 2;
	/* Small stacks: thousands of threads a second cost little memory. */
	pthread_attr_init(&attr);
	pthread_attr_setstacksize(&attr, 64 * 1024);
	while (now() < end) {
		for (n = 0; n < threads && !pthread_create(&t[n], &attr, churn_thread, NULL); n++)
			;
		for (i = 0; i < n; i++)
			pthread_join(t[i], NULL);
		created += n;
	}
	for (i = 0; i < MAX_TIDS / 8; i++)
		ids += __builtin_popcount(tid_seen[i]);
	fprintf(stderr, "measured: threads %ld\nmeasured: ids %ld\n", created, ids);
	return 0;
}
