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
#define RETRY_AFTER_MAX_S 300	/* a server's Retry-After kept to, up to this */

struct push_stats {
	uint64_t sent, retries, rejected, dropped, unsent;	/* intervals (retries: attempts) */
	/* Of sent: a POST before went whole and got no answer, so the server may hold it twice. */
	uint64_t maybe_twice;
};

struct run_figures;

/* An interval's request, as it waits to go. */
struct push_request {
	char *url;
	char *body;
	size_t len;
};

/*
 * Where the intervals go and how: Pyroscope's ingest API (--push, here),
 * an OpenTelemetry Collector (--otlp, otlp.c). The queue, the thread, the
 * pauses and the stop are push.c's for both.
 */
struct push_target {
	const char *option;		/* "--push": what its messages begin with */
	const char *server;		/* the URL given */
	/* The interval's request (profile interval, whole seconds [from, until)); 0 or -errno. */
	int (*encode)(struct push_target *t, const struct profile *interval, uint64_t from,
		      uint64_t until, struct push_request *rq);
	/* Sets on curl (a CURL *) what a POST of rq sends, performs it: libcurl's CURLcode. */
	int (*perform)(struct push_target *t, void *curl, const struct push_request *rq);
	/* Whether an answer of this HTTP status (not 2xx) is worth sending again. */
	bool (*again)(long status);
	/* Puts its figures where the summary reads them; then lets t go. */
	void (*finish)(struct push_target *t, const struct push_stats *st, struct run_figures *f);
	double interval;		/* seconds */
};

/*
 * An interval sink (sink.h) pushing the session's intervals from start_ns
 * (the wall clock start_wall_ns); its figures are the summary's push
 * line. NULL if it cannot start (said).
 */
struct sink *pusher_start(const struct options *o, struct profile *session, uint64_t start_ns,
			  uint64_t start_wall_ns);
/* The same, to target t (which it lets go with t->finish), or NULL (said; t let go). */
struct sink *push_sink_start(struct push_target *t, struct profile *session, uint64_t start_ns,
			     uint64_t start_wall_ns);
/* What a pushing sink has done so far, and how many intervals wait (for /metrics). */
void push_sink_stats(struct sink *k, struct push_stats *st, unsigned *waiting);

#endif
