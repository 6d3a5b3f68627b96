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
#include "bpfprof/window.h"

#define PUSH_QUEUE 360		/* intervals waiting: an hour of 10 s */
#define PUSH_STOP_S 5

struct push_stats {
	uint64_t sent, retries, rejected, dropped, unsent;	/* intervals (retries: attempts) */
};

struct pusher;

/* Starts pushing the session's profile from now (start_ns, start_wall_ns); NULL if libcurl cannot. */
struct pusher *pusher_start(const struct options *o, const struct profile *session,
			    uint64_t start_ns, uint64_t start_wall_ns);
/* Its intervals: due_ns says when the current one ends. */
struct window_series *pusher_series(struct pusher *p);
/* Ends the interval at flip_ns (a drain's flip, just done) and queues it; the next begins, unless last. */
void pusher_rotate(struct pusher *p, uint64_t flip_ns, uint64_t flip_wall_ns, bool last);
/* Sends what is left (for up to PUSH_STOP_S), stops the thread, says how it went. */
void pusher_stop(struct pusher *p, struct push_stats *st);

#endif
