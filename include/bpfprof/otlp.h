/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --otlp URL: every --push-interval seconds, the interval's profiles as an
 * OTLP ExportProfilesServiceRequest (output.h's write_otlp), gzipped,
 * POSTed to an OpenTelemetry Collector's OTLP/HTTP receiver: to URL's
 * path, or /v1development/profiles when it has none. Sent as --push sends
 * (push.h): the same queue, pauses, stop and figures.
 */
#ifndef BPFPROF_OTLP_H
#define BPFPROF_OTLP_H

#include <stdint.h>

#include "bpfprof/cli.h"
#include "bpfprof/profile.h"
#include "bpfprof/sink.h"

#define OTLP_PROFILES_PATH "/v1development/profiles"	/* the specification's default */
#define OTLP_MAX_BODY (64u << 20)	/* what it recommends a client not exceed, uncompressed */

/* The interval sink, or NULL if it cannot start (said). */
struct sink *otlp_start(const struct options *o, struct profile *session, uint64_t start_ns,
			uint64_t start_wall_ns);

#endif
