/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An interval sink takes windows of the session's profile as they end: a
 * rotated file (--rotate), a pushed interval (--push), the answer to a
 * request for the next N seconds (--listen). The session asks each sink
 * when it next needs a drain, drains once for all that are due, then tells
 * every sink where that drain flipped the maps; the stop is the same call
 * marked last, after the final drain. Sinks run on the session's thread.
 */
#ifndef BPFPROF_SINK_H
#define BPFPROF_SINK_H

#include <stdbool.h>
#include <stdint.h>

struct sink;
struct run_figures;

struct sink_ops {
	/* now_ns() when it next needs a drain (a window ends, or one must open); 0: never yet. */
	uint64_t (*due)(struct sink *k);
	/*
	 * A drain flipped the maps at flip_ns (flip_wall_ns on the wall clock):
	 * the windows due by then end there and go out, the next begin there.
	 * last: the session stops, every window ends. 0, or -1 if one could not
	 * go out (it said why).
	 */
	int (*drained)(struct sink *k, uint64_t flip_ns, uint64_t flip_wall_ns, bool last);
	/* Puts what the summary says of it in f (f may be NULL), then frees it. */
	void (*free)(struct sink *k, struct run_figures *f);
};

struct sink {
	const struct sink_ops *ops;
	struct sink *next;		/* the session's list */
};

#endif
