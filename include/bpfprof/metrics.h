/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The session's counters in Prometheus' text exposition format (version
 * 0.0.4), for --listen's /metrics: samples, samples lost by cause, drains,
 * what the profile holds, and bpfprof's own CPU time and memory.
 */
#ifndef BPFPROF_METRICS_H
#define BPFPROF_METRICS_H

#include <stddef.h>
#include <stdint.h>

#include "bpfprof/sampler.h"

struct sink;

/* A sink pushing intervals (--push, --otlp), by its label's name. */
struct pushing {
	const char *name;		/* "push", "otlp": /metrics' sink label */
	struct sink *sink;		/* push.h's push_sink_stats reads it */
};

/* What the session knows beside the sampler's statistics. */
struct session_figures {
	uint32_t processes;		/* processes followed now */
	uint32_t stacks;		/* distinct stacks in the session's profile */
	size_t profile_bytes;
	uint64_t sideband_lost;		/* side-band records the kernel dropped */
	uint64_t start_wall_ns;		/* when sampling began */
	const struct pushing *pushers;
	unsigned npushers;
};

/* The text, malloc'd. */
char *metrics_text(const struct sampler_stats *st, const struct session_figures *f);

#endif
