/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * JIT code: frames in anonymous memory named from the process's
 * /tmp/perf-PID.map (src/symbols/jit.c). The symbolizer holds one
 * struct jit_names and calls these; they know the processes it follows
 * (struct procs) but not the symbolizer, so the calls go one way.
 */
#ifndef BPFPROF_JIT_H
#define BPFPROF_JIT_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/intern.h"
#include "bpfprof/procs.h"
#include "bpfprof/profile.h"

struct jitmap;

struct jit_names {
	/* Per process (tgid) its /tmp/perf-PID.map, once looked for. */
	struct jitmap **jitmaps;
	uint32_t nr_jitmaps, jitmaps_alloc;
	struct itab jitmap_index;
	/*
	 * JIT frames sampled before their perf-map line was written (a JIT
	 * writes its map through a buffer): named in place once it is.
	 */
	struct late_jit {
		uint32_t location, tgid;
	} *late_jit;
	uint32_t nr_late_jit, late_jit_alloc;
	uint32_t late_jit_passes;
};

/* The perf maps and the frames waiting, freed. */
void jit_names_release(struct jit_names *jn);
/* The perf maps of processes forgotten (not in ps): none of their frames is left to name. */
void forget_jitmaps(struct jit_names *jn, struct procs *ps);
/* The profile was folded: the late frames' location ids follow, those folded away dropped. */
void jit_renumber(struct jit_names *jn, const struct profile_renumbering *r);
bool anon_map(const struct proc_map *m);
/* A location for addr in anonymous memory of tgid, named by its perf map now or later. */
uint32_t jit_location(struct jit_names *jn, struct procs *ps, struct profile *p, uint32_t tgid,
		      uint32_t mapping, uint64_t addr);
/* Names the JIT frames whose perf-map lines came late (symbolizer_name_late_jit). */
void jit_name_late(struct jit_names *jn, struct procs *ps, struct profile *p);

#endif
