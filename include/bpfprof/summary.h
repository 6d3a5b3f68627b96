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
#include "bpfprof/push.h"
#include "bpfprof/sampler.h"
#include "bpfprof/unwind.h"

/* What the session's parts other than the sampler have to say at the end. */
struct run_figures {
	uint64_t sideband_lost;			/* side-band records the kernel dropped */
	uint64_t unwinds[UNWIND_END_MAX];	/* --unwind dwarf: how they ended */
	struct {				/* --unwind auto: the tables */
		uint32_t built, shared, empty, no_room;	/* files */
		uint64_t rows, build_ns;
		uint64_t bytes, proc_bytes;	/* BPF map memory: tables, processes' mappings */
	} tables;
	struct python_stats py;
	struct luajit_stats lua;
	struct ruby_stats rb;
	bool pushed;				/* --push: how it went */
	struct push_stats push;
};

/* User and kernel mode samples the program recorded. */
uint64_t recorded_samples(const struct sampler_stats *st);
/* The summary of a run of seconds that made profile p. */
void summarize(const struct options *o, const struct profile *p, const struct sampler_stats *st,
	       const struct run_figures *f, double seconds);

#endif
