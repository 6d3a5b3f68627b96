// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Hot code inside a signal handler: main -> main_spin runs units of work
 * while a CPU-time timer (ITIMER_PROF, every 2 ms) interrupts it wherever
 * it is; the handler, on_signal -> handler_spin, catches up to half as many
 * units as main_spin has done. So 2/3 of the time is main_spin's and 1/3
 * handler_spin's, and a stack through the handler is
 * main;main_spin;unit;__restore_rt;on_signal;handler_spin;unit: from the
 * handler back through libc's signal trampoline to the interrupted code.
 *
 * usage: signal [SECONDS]   (default 10)
 */
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <sys/time.h>
#include <time.h>

#define UNIT 2000

volatile uint64_t sink;
static volatile uint64_t main_units;
static uint64_t handler_units;

/* Not inlined: main_spin and handler_spin run the very same code. */
__attribute__((noinline)) void unit(void)
{
	for (uint64_t i = 0; i < UNIT; i++)
		sink += i ^ (i >> 3);
}

__attribute__((noinline)) void handler_spin(uint64_t units)
{
	while (units--)
		unit();
}

__attribute__((noinline)) void on_signal(int sig)
{
	uint64_t due = main_units / 2;

	(void)sig;
	if (due > handler_units) {
		handler_spin(due - handler_units);
		handler_units = due;
	}
}

__attribute__((noinline)) void main_spin(uint64_t units)
{
	while (units--) {
		unit();
		main_units++;
	}
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
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return 1;
	while (now() < end)
		main_spin(1000);
	return 0;
}
