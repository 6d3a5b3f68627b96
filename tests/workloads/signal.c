// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Hot code inside a signal handler: main -> main_spin runs units of work
 * while a CPU-time timer (ITIMER_PROF, every 2 ms) interrupts it wherever
 * it is; the handler, on_signal -> handler_spin, catches up to half as many
 * units as main_spin has done. A unit is one chain (work.h), the same code
 * on both sides, so 2/3 of the user time is main_spin's and 1/3
 * handler_spin's on any x86-64 CPU, and a stack through the handler is
 * main;main_spin;unit;__restore_rt;on_signal;handler_spin;unit: from the
 * handler back through libc's signal trampoline to the interrupted code.
 * Checked with WL_MEASURE=1 (README, "Test workloads"): main_spin's own
 * time is its thread CPU time less the handler's.
 *
 * usage: signal [SECONDS]   (default 10)
 */
#include <signal.h>
#include <sys/time.h>

#include "work.h"

#define UNIT 8000	/* chain steps */

volatile uint64_t sink;
static volatile uint64_t main_units;
static uint64_t handler_units;
static struct meter meters[] = { { "main_spin" }, { "handler_spin" } };

/* Not inlined: main_spin and handler_spin run the very same code. */
__attribute__((noinline)) void unit(void)
{
	uint64_t x = sink;

	CHAIN(x, UNIT);
	sink = x;
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
		METERED(meters[1], handler_spin(due - handler_units));
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

int main(int argc, char **argv)
{
	double seconds = argc > 1 ? atof(argv[1]) : 10, end = now() + seconds;
	struct sigaction sa = { .sa_handler = on_signal, .sa_flags = SA_RESTART };
	struct itimerval it = { { 0, 2000 }, { 0, 2000 } }, off = { { 0, 0 }, { 0, 0 } };

	sigemptyset(&sa.sa_mask);
	if (sigaction(SIGPROF, &sa, NULL) || setitimer(ITIMER_PROF, &it, NULL))
		return 1;
	while (now() < end)
		METERED(meters[0], main_spin(1000));
	setitimer(ITIMER_PROF, &off, NULL);
	/* The handler ran inside main_spin's calls: take its time out of theirs. */
	meters[0].ns -= meters[0].ns > meters[1].ns ? meters[1].ns : meters[0].ns;
	report_meters(meters, 2);
	return 0;
}
