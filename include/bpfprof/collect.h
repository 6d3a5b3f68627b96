/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Raw samples from the sampler -> the profile: each stack symbolized once
 * per set read (keyed by the sampler's cache key), then interned with its
 * labels (cgroups named while they exist). Lost samples enter the profile as a visible [lost: ...] frame.
 */
#ifndef BPFPROF_COLLECT_H
#define BPFPROF_COLLECT_H

#include "bpfprof/cgroups.h"
#include "bpfprof/intern.h"
#include "bpfprof/profile.h"
#include "bpfprof/runtime.h"
#include "bpfprof/sampler.h"
#include "bpfprof/symbolize.h"

/* The causes of lost samples, each a frame of its own: collisions, two maps full, the ring full. */
#define LOST_CAUSES 4

struct cached_stack {
	uint64_t key;		/* the sampler's cache_key */
	uint32_t tgid;		/* 0 for kernel stacks: the same in every process */
	uint32_t gen;		/* the process's image, for user stacks */
	uint32_t first, n;	/* into locs */
};

struct collector {
	struct profile *profile;
	struct symbolizer *symbolizer;
	struct runtimes *runtimes;	/* their frames merged into native stacks; NULL: none */
	struct cgroups cgroups;	/* names the cgroups samples come from, while they exist */
	struct cached_stack *cache;	/* by the sampler's cache keys; emptied when full */
	uint32_t nr_cache, cache_alloc;
	struct itab cache_index;
	uint32_t *locs;
	uint32_t nr_locs, locs_alloc;
	uint64_t unwinds[UNWIND_END_MAX];	/* --unwind dwarf: how each unwind ended */
	bool keep_pids;		/* --per-pid: exited processes keep their pids when folded */
	uint32_t exited;	/* processes forgotten since the last fold */
	size_t fold_bytes;	/* the profile's size that, with enough exited, folds it */
	uint64_t sched_text_start, sched_text_end;	/* the scheduler's code; 0: not read yet */
	/*
	 * No whole-run profile is written (an agent: --listen, --push, --rotate
	 * without -o): the profile is only what windows copy from, so as it grows
	 * its counts are let go and what no sample uses any more with them.
	 */
	bool trim_only;
	uint64_t lost_added[LOST_CAUSES];	/* lost samples already in the profile */
	struct fold_listener fold;	/* its cache names old ids after a fold */
};

/* Collects into p, named by s: both follow p's folds from now until the release. */
void collector_init(struct collector *c, struct profile *p, struct symbolizer *s);
void collector_release(struct collector *c);
/* A sample_fn: ctx is the collector. */
void collector_add(void *ctx, const struct raw_sample *rs);
/*
 * After each drain: names late JIT frames, forgets processes that exited
 * before now and, once many have and the profile has grown, folds what
 * they left in it (profile_fold), so that churn costs memory once per
 * program, not per process.
 */
void collector_after_drain(struct collector *c, uint64_t now);
/* count samples that exist only as a number, under a frame named label. */
void collector_add_lost(struct collector *c, const char *label, uint64_t count);
/*
 * The samples lost since the last call, by the sampler's totals (struct
 * sampler_stats' total[]), each cause under its "[lost: ...]" frame:
 * windows of the profile have theirs too.
 */
void collector_add_lost_since(struct collector *c, const uint64_t *total);

#endif
