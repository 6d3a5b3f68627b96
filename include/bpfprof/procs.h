/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What each sampled process had mapped: its executable mappings, read from
 * /proc/PID/maps when the process is first seen and kept after it exits.
 */
#ifndef BPFPROF_PROCS_H
#define BPFPROF_PROCS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/intern.h"

struct proc_map {
	uint64_t start, end;	/* [start, end) */
	uint64_t offset;	/* file offset of start */
	uint64_t inode;
	uint32_t dev_major, dev_minor;
	bool deleted;		/* the path ended in " (deleted)" (stripped here) */
	char *path;		/* "" for anonymous memory; "[vdso]" and such kept */
};

/* Parses maps text, keeping the executable mappings, sorted by start. */
int procmaps_parse(const char *text, struct proc_map **maps, size_t *nr);
void procmaps_free(struct proc_map *maps, size_t nr);

struct proc {
	uint32_t tgid;
	struct proc_map *maps;
	size_t nr_maps;
	uint64_t read_generation;	/* procs generation of the last read */
	bool gone;			/* /proc/PID could not be read */
};

struct procs {
	struct proc **procs;
	uint32_t nr, alloc;
	struct itab index;
	uint64_t generation;	/* bumped once per drain */
	char *proc_root;	/* "/proc" unless a test points elsewhere */
};

void procs_init(struct procs *ps);
void procs_release(struct procs *ps);
/* The process, its maps read now if this is the first time it is seen. */
struct proc *procs_get(struct procs *ps, uint32_t tgid);
/*
 * The mapping covering addr. If none does and the process still lives,
 * its maps are read again (at most once per generation): it may have
 * mapped something since.
 */
const struct proc_map *proc_find_map(struct procs *ps, struct proc *p, uint64_t addr);

#endif
