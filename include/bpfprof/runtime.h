/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Runtimes: interpreters whose own frames are walked by the BPF program
 * beside the native stack and put in place of the native frames of the VM
 * that ran them. One interface, struct runtime_ops, with a descriptor
 * (runtime_info.h); the session holds a set of the runtimes on (struct
 * runtimes) and calls the set, never a runtime.
 *
 * Adding a runtime (NAME) takes its module and a line in each table:
 *   1. bpf/NAME.bpf.h: the walk at sample time, self-contained, with its
 *      maps (NAME_files, NAME_procs, NAME_notices), its frames handed to
 *      interp_store (interp.bpf.h); its line in bpf/runtimes.bpf.h.
 *   2. include/bpfprof/NAME*.h: its id, its counters, its layouts.
 *   3. src/runtime/NAME*.c implementing struct runtime_ops below with its
 *      descriptor, exporting `const struct runtime_ops NAME_runtime`; its
 *      maps from sampler_runtime_maps; what every runtime keeps alike (the
 *      namer thread, its files, its processes) is in runtime_shared.h.
 *   4. One line in runtime.c's runtime_list[]: &NAME_runtime.
 * Nothing else: the symbolizer tells the set of every file opened, the
 * session of every process running at start, the collector merges each
 * sample through the set, the profile tells it of every fold.
 */
#ifndef BPFPROF_RUNTIME_H
#define BPFPROF_RUNTIME_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/procs.h"
#include "bpfprof/profile.h"
#include "bpfprof/run_figures.h"
#include "bpfprof/runtime_info.h"
#include "bpfprof/sampler.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/unwind_row.h"

/*
 * What a runtime implements: every op but summarize. rt is what start()
 * returned. Calls come from the session's thread, one at a time, but may
 * meet the runtime's own threads (its namer): it locks what it shares.
 */
struct runtime_ops {
	const struct runtime_info *info;	/* its descriptor (runtime_info.h) */
	/*
	 * On, with its BPF side's maps taken from the sampler: NULL when off
	 * (the sampler has no maps for it) or not available. gen(ctx, tgid)
	 * is a process's generation as the program counts it.
	 */
	void *(*start)(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid),
		       void *ctx);
	/*
	 * Detect: a file a process maps, just opened (fd, at path, by the
	 * kernel's identity key; root: the process's root as reached from
	 * here, for files beside it, NULL when opened in ours). True if it is
	 * the runtime's (its version told to the program; one it cannot read
	 * said on stderr once).
	 */
	bool (*file_opened)(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			    const char *root);
	/* Claim: process tgid maps code of file key at start (file offset offset). */
	void (*process_maps)(void *rt, uint32_t tgid, const struct unwind_file_key *key,
			     uint64_t start, uint64_t offset);
	/* Before a drain reads samples: what the program sent so far taken (code objects named). */
	void (*take_notices)(void *rt);
	/*
	 * frames[0..n) (location ids, leaf first) of sample rs with the VM's
	 * native frames replaced by the runtime's, at most max in all;
	 * returns the new count.
	 */
	uint32_t (*merge)(void *rt, struct profile *p, const struct raw_sample *rs, uint32_t *frames,
			  uint32_t n, uint32_t max);
	/* After a drain: processes gone since the drain before forgotten. */
	void (*after_drain)(void *rt);
	/* The profile was folded (profile_fold): the location ids it keeps changed. */
	void (*renumber)(void *rt);
	/* Its figures for the summary, into the run's (run_figures.h). */
	void (*stats)(void *rt, struct run_figures *f);
	/* Its lines of the end-of-run summary, on stderr (rt gone by then); NULL: none. */
	void (*summarize)(const struct sampler_stats *st, const struct run_figures *f);
	void (*free)(void *rt);
};

/* At most this many runtimes on at once. */
#define MAX_RUNTIMES 5

/* The runtimes on in a session. */
struct runtimes {
	struct runtime {
		const struct runtime_ops *ops;
		void *rt;
	} on[MAX_RUNTIMES];
	uint32_t nr;
	struct profile *folding;	/* whose folds they follow (runtimes_on_fold) */
	struct fold_listener fold;
};

/* Every runtime the sampler has maps for, started (none: an empty set). */
void runtimes_start(struct runtimes *rs, struct sampler *sampler,
		    uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx);
/* Each stopped and freed (before the sampler goes: their threads read its maps). */
void runtimes_free(struct runtimes *rs);
/* What the symbolizer calls with each file it opens: file_opened, then process_maps. */
struct file_listener runtimes_file_listener(struct runtimes *rs);
/* A process running at start: each of its mappings told to process_maps. */
void runtimes_process_image(struct runtimes *rs, uint32_t tgid, const struct proc_map *maps,
			    size_t nr);
/* The fan-out of each op over the runtimes on; rs may be NULL (none). */
void runtimes_take_notices(struct runtimes *rs);
uint32_t runtimes_merge(struct runtimes *rs, struct profile *p, const struct raw_sample *sample,
			uint32_t *frames, uint32_t n, uint32_t max);
void runtimes_after_drain(struct runtimes *rs);
/* Each renumbers the location ids it keeps after every fold of p, until runtimes_free. */
void runtimes_on_fold(struct runtimes *rs, struct profile *p);
void runtimes_stats(struct runtimes *rs, struct run_figures *f);
/*
 * The summary lines of every runtime known (each says nothing if it was off).
 * The summary (summary.c) asks for them; the runtimes never call the summary.
 */
void runtimes_summarize(const struct sampler_stats *st, const struct run_figures *f);


#endif
