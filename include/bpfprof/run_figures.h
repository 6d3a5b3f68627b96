/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the session's parts other than the sampler report of themselves at
 * the end (the unwinding, the runtimes, the sinks, the side-band), for the
 * summary (summary.h) to print. Apart from summary.h so that the parts
 * filling it in (the runtimes) need not include the summary that calls them.
 */
#ifndef BPFPROF_RUN_FIGURES_H
#define BPFPROF_RUN_FIGURES_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/push.h"
#include "bpfprof/sampler.h"
#include "bpfprof/interp.h"
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
	/* Each runtime's own figures, by its id: its stats op writes them, its summarize reads them. */
	union {
		uint64_t align;
		uint8_t bytes[128];
	} runtime[RUNTIME_KINDS];
	bool pushed;				/* --push: how it went */
	struct push_stats push;
	bool otlp_sent;				/* --otlp: how it went */
	struct push_stats otlp;
};

/* Runtime kind's figures in f (a struct run_figures *), as its own type (which must fit). */
#define RUN_FIGURES_OF(f, kind, type)                                                              \
	((type *)((f)->runtime[(kind)].bytes +                                                     \
		  0 * sizeof(char[sizeof(type) <= sizeof((f)->runtime[0].bytes) ? 1 : -1])))

#endif
