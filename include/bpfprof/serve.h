/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --listen ADDR:PORT: profiles over HTTP while the session samples, as Go's
 * net/http/pprof serves them, so go tool pprof and Parca's or Pyroscope's
 * scrapers read them unchanged:
 *
 *   GET /                                 a page linking the others
 *   GET /debug/pprof/profile?seconds=N    a gzipped pprof of the next N
 *                                         seconds (pid=, cgroup= filter)
 *   GET /metrics                          Prometheus text: the session's
 *                                         counters (server_set_metrics)
 *   POST /debug/pprof/symbol              no names to add (pprof asks)
 *
 * libmicrohttpd answers from a thread of its own and never touches the
 * profile: a request for a profile is handed to the session's thread
 * (server_tick), which opens a window of the session's profile for it,
 * closes it N seconds later, writes the pprof into memory and hands it
 * back. A slow client is the server thread's, never the drains'.
 */
#ifndef BPFPROF_SERVE_H
#define BPFPROF_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/profile.h"

/* The longest window a request may ask for, and how many may be open at once. */
#define SERVE_MAX_SECONDS 3600
#define SERVE_MAX_PROFILES 8

struct server;

/*
 * Listens on addr ("HOST:PORT", "[IPV6]:PORT"; that address only) for the
 * session whose profile is session. drain(ctx) brings every sample taken so
 * far into it: called as windows open and close, so that they hold their
 * seconds' samples and no others. NULL and a message on failure.
 */
struct server *server_start(const char *addr, const struct profile *session,
			    void (*drain)(void *ctx), void *ctx);
/*
 * The session's thread, often (every poll of its loop): opens windows for
 * new requests, answers those whose seconds are over. Returns when it next
 * has to run (now_ns() clock), 0 if no window is open.
 */
uint64_t server_tick(struct server *s);
/* The session's profile is about to be folded (done false), or was (true). */
void server_folding(struct server *s, bool done);
/* The text /metrics answers with from now on (Prometheus' text format), copied. */
void server_set_metrics(struct server *s, const char *text);
/* Answers what is still open (503: stopping), lets the answers go out, stops. */
void server_stop(struct server *s);

#endif
