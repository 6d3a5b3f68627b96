/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --rotate SECONDS with -o: one complete file per interval for each -o,
 * named by the interval's start in UTC (out.pb.gz -> out.20261124T101500Z.pb.gz),
 * and with --keep N only the N newest of each. The intervals are a window
 * series (window.h): they end at multiples of SECONDS of the wall clock
 * and join with no gap and no overlap.
 */
#ifndef BPFPROF_ROTATE_H
#define BPFPROF_ROTATE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/cli.h"
#include "bpfprof/window.h"

struct rotation {
	const struct options *o;
	struct window_series series;
	uint32_t written, failed;	/* files */
};

/* The first interval, from now (start_ns, start_wall_ns: the session's start). */
void rotation_start(struct rotation *r, const struct options *o, const struct profile *session,
		    uint64_t start_ns, uint64_t start_wall_ns);
/*
 * Ends the interval at flip_ns (a drain's flip, just done; flip_wall_ns the
 * wall clock then): its files written, older ones beyond --keep removed;
 * the next interval begins there, unless last. 0, or -1 if a file could
 * not be written (said).
 */
int rotation_rotate(struct rotation *r, uint64_t flip_ns, uint64_t flip_wall_ns, bool last);
/* The rotated name of path for an interval that began at wall_ns, malloc'd. */
char *rotated_name(const char *path, uint64_t wall_ns);
/* --keep: removes path's rotated files but the keep newest (other names untouched). */
void keep_newest(const char *path, uint32_t keep);

#endif
