/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What ends sampling besides its duration. SIGINT, SIGTERM and SIGHUP
 * while sampling end it, and the profile is written; once sampling is over
 * (stop_writing_on_signal), one stops the writing: the outputs not yet in
 * place are removed and bpfprof dies of the signal. SIGPIPE is ignored (a
 * write says EPIPE instead). With -p, -t or --cgroup, sampling ends once
 * its targets are gone; and once stdout's reader is.
 */
#ifndef BPFPROF_STOP_H
#define BPFPROF_STOP_H

#include <signal.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/cli.h"

/* The first stop signal caught, 0 until one is. */
extern volatile sig_atomic_t stop_signal;
/* now_ns() when sampling was told to stop: the first signal, or stop_now(). */
extern volatile uint64_t stop_ns;

void catch_stop_signals(void);
/* Sampling ends for another reason (duration, targets gone): the end latency counts from now. */
void stop_now(void);
/* From the end of sampling until the outputs are in place (on), a signal abandons them. */
void stop_writing_on_signal(int on);
/* "the stop signal" or "sampling ended": what -v's end latencies count from. */
const char *stop_cause(void);

/* With -p/-t or --cgroup (open as cgroup_fd, else -1): nothing is left to profile. */
bool targets_gone(const struct options *o, int cgroup_fd);
/* stdout, one of the outputs, is a pipe nobody reads any more (bpfprof | head, head done). */
bool stdout_gone(const struct options *o);

#endif
