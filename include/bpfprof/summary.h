/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The lines a run ends with on stderr: what the sampler counted
 * (sampler_stats) and what the session's other parts report of themselves
 * (run_figures): the unwinding, the runtimes, the sinks, the side-band.
 */
#ifndef BPFPROF_SUMMARY_H
#define BPFPROF_SUMMARY_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/cli.h"
#include "bpfprof/profile.h"
#include "bpfprof/run_figures.h"
#include "bpfprof/sampler.h"

/* User and kernel mode samples the program recorded. */
uint64_t recorded_samples(const struct sampler_stats *st);
/* The summary of a run of seconds that made profile p. */
void summarize(const struct options *o, const struct profile *p, const struct sampler_stats *st,
	       const struct run_figures *f, double seconds);

#endif
