/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What each process had mapped, and when: per process a list of images,
 * one per generation (a new process by fork, a new program by exec; see
 * proc_gen in the BPF program), each with its executable mappings. Built
 * from a scan of /proc at start and the perf side-band records after it,
 * and kept after the process exits, so its samples can be named later.
 */
#ifndef BPFPROF_PROCS_H
#define BPFPROF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/intern.h"
#include "bpfprof/sideband.h"

struct proc_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	uint8_t build_id[20];
	uint8_t build_id_size;	/* 0: not known from the kernel */
	bool deleted;		/* the path ended in " (deleted)" (stripped here) */
	char *path;		/* "" for anonymous memory; "[vdso]" and such kept */
	int32_t file;		/* the symbolizer's handle for the file; -1: none yet */
	uint32_t prof_mapping;	/* the symbolizer's profile mapping for it, plus one; 0: none
				 * yet (cleared whenever the range or owner changes) */
};

/* Parses maps text, keeping the executable mappings, sorted by start. */
int procmaps_parse(const char *text, struct proc_map **maps, size_t *nr);
void procmaps_free(struct proc_map *maps, size_t nr);

/* What one program image mapped, from its fork or exec to the next. */
struct proc_image {
	uint32_t gen;
	struct proc_map *maps;	/* sorted by start, disjoint */
	size_t nr_maps, maps_alloc;
};

struct proc {
	uint32_t tgid;
	struct proc_image *images;	/* ascending gen; the last is current */
	size_t nr_images, images_alloc;
	uint64_t known_since;	/* side-band records before this are in what we have */
	uint64_t gone_ns;	/* when it exited; 0 while it lives */
	uint64_t read_generation;	/* drain when /proc/PID/maps was last read */
};

struct procs {
	struct proc **procs;
	uint32_t nr, alloc;
	struct itab index;
	uint64_t generation;	/* bumped once per drain */
	char *proc_root;	/* "/proc" unless a test points elsewhere */
	/* Applies the side-band records written so far (NULL: there are none). */
	void (*catch_up)(void *ctx);
	void *catch_up_ctx;
};

void procs_init(struct procs *ps);
void procs_release(struct procs *ps);

/* The process, or NULL if it was never seen. */
struct proc *procs_find(struct procs *ps, uint32_t tgid);
/* Whether the process's generation gen is known (from /proc or the side-band). */
bool procs_known(struct procs *ps, uint32_t tgid, uint32_t gen);
/*
 * The process, created from /proc/PID/maps (as generation gen) if it was
 * never seen; if it is gone too, nothing is known, and its side-band records
 * read later still are.
 */
struct proc *procs_get(struct procs *ps, uint32_t tgid, uint32_t gen);
/*
 * Records every process alive now from /proc, each as the generation
 * current_gen() says the kernel counts for it (the BPF program's count).
 * Side-band records older than a process's scan are then ignored for it.
 */
void procs_scan(struct procs *ps, uint32_t (*current_gen)(void *ctx, uint32_t tgid), void *ctx);

/*
 * Applies one side-band record. For a new mapping, returns it (for the
 * caller to attach its file to) with *owner its process; else NULL.
 */
struct proc_map *procs_apply(struct procs *ps, const struct sb_event *ev, struct proc **owner);

/*
 * The mapping covering addr in the image of generation gen. A generation
 * newer than the side-band told is read from /proc while the process lives;
 * another not known falls back to the current image. If no mapping covers
 * addr in the current image and it is gen's, it is read again from /proc (at
 * most once per drain), unless records read after (catch_up) began a newer
 * generation: /proc shows the process now, never an earlier generation.
 */
struct proc_map *proc_find_map(struct procs *ps, struct proc *p, uint32_t gen, uint64_t addr);

/* Forgets processes that exited before the given time (their samples are all named): how many. */
uint32_t procs_prune(struct procs *ps, uint64_t before_ns);

#endif
