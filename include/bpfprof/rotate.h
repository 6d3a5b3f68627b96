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
#include "bpfprof/sink.h"
#include "bpfprof/window.h"

/*
 * An interval sink (sink.h): the first interval from start_ns (on the wall
 * clock start_wall_ns, the session's start). Each ends at a drain's flip:
 * its files written, older ones beyond --keep removed, the next begun
 * there; a file that cannot be written is said and the drain reports -1.
 */
struct sink *rotation_start(const struct options *o, struct profile *session, uint64_t start_ns,
			    uint64_t start_wall_ns);
/* The rotated name of path for an interval that began at wall_ns, malloc'd. */
char *rotated_name(const char *path, uint64_t wall_ns);
/* --keep: removes path's rotated files but the keep newest (other names untouched). */
void keep_newest(const char *path, uint32_t keep);

#endif
