/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --push URL: every --push-interval seconds, the interval's pprof POSTed to
 * Pyroscope's ingest API (URL/ingest?name=NAME&from=&until=&format=pprof
 * &sampleRate=F), with libcurl, from a thread of its own: a push never
 * blocks sampling. The intervals are a window series (window.h): they end
 * at multiples of the interval on the clock and join, so from and until
 * are whole seconds that join. When the server is down or answers 5xx, intervals
 * wait in memory (at most PUSH_QUEUE of them; beyond, the oldest is
 * dropped and counted) and go out in order when it is back; at stop, what
 * is left is sent for up to PUSH_STOP_S seconds, the rest counted lost.
 */
#ifndef BPFPROF_PUSH_H
#define BPFPROF_PUSH_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/cli.h"
#include "bpfprof/profile.h"
#include "bpfprof/sink.h"
#include "bpfprof/window.h"

#define PUSH_QUEUE 360		/* intervals waiting: an hour of 10 s */
#define PUSH_STOP_S 5

struct push_stats {
	uint64_t sent, retries, rejected, dropped, unsent;	/* intervals (retries: attempts) */
	/* Of sent: a POST before went whole and got no answer, so the server may hold it twice. */
	uint64_t maybe_twice;
};

/*
 * An interval sink (sink.h) pushing the session's intervals from start_ns
 * (the wall clock start_wall_ns); its figures are the summary's push
 * line. NULL if it cannot start (said).
 */
struct sink *pusher_start(const struct options *o, struct profile *session, uint64_t start_ns,
			  uint64_t start_wall_ns);

#endif
