// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Burns CPU under a chosen name, for telling processes and threads apart:
 * the process is renamed NAME, and each of its THREADS threads NAME-1,
 * NAME-2, ... (the comm is what the profile's root frame shows). Each
 * thread's tid goes to stdout, one per line, once it runs.
 *
 * usage: spin SECONDS NAME [THREADS]   (default 1 thread: the main one)
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

static double seconds;
static const char *name;
volatile uint64_t sink;

static double now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec / 1e9;
}

__attribute__((noinline)) void spin_burn(void)
{
	for (uint64_t i = 0; i < 100000; i++)
		sink += i * i;
}

static void *spin_thread(void *arg)
{
	double end = now() + seconds;
	char comm[16];

	snprintf(comm, sizeof(comm), "%s-%d", name, (int)(intptr_t)arg);
	prctl(PR_SET_NAME, comm);
	printf("%d\n", gettid());
	fflush(stdout);
	while (now() < end)
		spin_burn();
	return NULL;
}

int main(int argc, char **argv)
{
	int threads = argc > 3 ? atoi(argv[3]) : 1;
	pthread_t *t;

	if (argc < 3 || threads < 1)
		return 2;
	seconds = atof(argv[1]);
	name = argv[2];
	prctl(PR_SET_NAME, name);
	if (threads == 1) {
		printf("%d\n", gettid());
		fflush(stdout);
		for (double end = now() + seconds; now() < end;)
			spin_burn();
		return 0;
	}
	t = calloc(threads, sizeof(*t));
	for (int i = 0; i < threads; i++)
		pthread_create(&t[i], NULL, spin_thread, (void *)(intptr_t)(i + 1));
	for (int i = 0; i < threads; i++)
		pthread_join(t[i], NULL);
	return 0;
}
