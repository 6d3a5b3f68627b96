/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --listen ADDR:PORT: profiles over HTTP while the session samples, as Go's
 * net/http/pprof serves them, so go tool pprof and Parca's or Pyroscope's
 * scrapers read them unchanged:
 *
 *   GET /                                 a page linking the others
 *   GET /debug/pprof/profile?seconds=N    a gzipped pprof of the next N
 *                                         seconds (pid=, cgroup= filter)
 *   GET /flamegraph?seconds=N             the same window as an interactive
 *                                         SVG flame graph (out_svg.c)
 *   GET /metrics                          Prometheus text: the session's
 *                                         counters (server_set_metrics)
 *   POST /debug/pprof/symbol              no names to add (pprof asks)
 *
 * libmicrohttpd answers from a thread of its own and never touches the
 * profile: a request for a profile is handed to the session's thread, for
 * which the server is an interval sink (sink.h): due at once when a request
 * came, so that a drain opens its window; then when a window's seconds are
 * over, so that a drain closes it and its pprof (or SVG) is written into memory and
 * handed back. A slow client is the server thread's, never the drains'.
 * The stop answers what is still open 503; the sink's free lets the
 * answers go out and stops listening.
 */
#ifndef BPFPROF_SERVE_H
#define BPFPROF_SERVE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/profile.h"
#include "bpfprof/sink.h"

/* The longest window a request may ask for, and how many may be open at once. */
#define SERVE_MAX_SECONDS 3600
#define SERVE_MAX_PROFILES 8

struct server;

/*
 * Listens on addr ("HOST:PORT", "[IPV6]:PORT"; that address only) for the
 * session whose profile is session. NULL and a message on failure.
 */
struct server *server_start(const char *addr, struct profile *session);
/* The server as the session's interval sink; freeing the sink stops the server. */
struct sink *server_sink(struct server *s);
/* The text /metrics answers with from now on (Prometheus' text format), copied. */
void server_set_metrics(struct server *s, const char *text);

#endif
