/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * perf's map of JIT code, /tmp/perf-PID.map: one line "START SIZE name"
 * per piece of compiled code (START and SIZE in hex without 0x; the name
 * runs to the end of the line, spaces included), appended as the JIT
 * compiles. JITs re-use memory, so where two lines overlap the later wins.
 *
 * A struct perfmap holds what the lines read so far say, as disjoint
 * ranges sorted by start, each named by the latest line covering it.
 * Memory stays bounded whatever the file holds: names end at a NUL byte
 * and are cut at PERFMAP_MAX_NAME bytes, at most PERFMAP_MAX_ENTRIES ranges and
 * PERFMAP_MAX_NAME_BYTES of distinct names are kept; what does not fit
 * is dropped and counted, and lines that do not parse are skipped and
 * counted.
 */
#ifndef BPFPROF_PERFMAP_H
#define BPFPROF_PERFMAP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "bpfprof/intern.h"
#include "bpfprof/util.h"

#define PERFMAP_MAX_NAME	1024
#define PERFMAP_MAX_ENTRIES	(1u << 20)
#define PERFMAP_MAX_NAME_BYTES	(64u << 20)
/* One read of a file takes at most this much of it; a line is at most this long. */
#define PERFMAP_MAX_READ	(64u << 20)
#define PERFMAP_MAX_LINE	(1u << 20)

struct perfmap_entry {
	uint64_t start, end;	/* [start, end) */
	uint32_t name;		/* id in names */
};

struct perfmap {
	struct perfmap_entry *entries;	/* sorted by start, disjoint */
	uint32_t nr, alloc;
	struct strtab names;
	uint64_t pos;		/* file bytes read: up to the end of the last whole (or cut) line */
	uint64_t lines;		/* lines taken */
	uint64_t skipped;	/* lines that are not "START SIZE name" */
	uint64_t truncated;	/* names cut at PERFMAP_MAX_NAME */
	uint64_t dropped;	/* lines left out: over the caps */

	/* Lines parsed but not yet merged into entries. */
	struct perfmap_entry *pending;
	uint32_t nr_pending, pending_alloc;
};

void perfmap_init(struct perfmap *m);
void perfmap_release(struct perfmap *m);

/*
 * Adds the whole lines of text (those ending in '\n'); returns how many
 * bytes they took: the rest is an unfinished line, for a later call.
 */
size_t perfmap_parse(struct perfmap *m, const char *text, size_t len);

/*
 * Adds what the file fd holds past m->pos (what earlier calls read), in
 * bounded chunks, so a map can be read again as it grows: at most about
 * PERFMAP_MAX_READ bytes a call, the rest the next time. A line longer
 * than PERFMAP_MAX_LINE is cut there, what follows read as a line of its
 * own. A file now shorter than m->pos was rewritten: it is read again
 * from the start. 0 or -errno.
 */
int perfmap_read_fd(struct perfmap *m, int fd);

/* The range covering addr, or NULL. */
const struct perfmap_entry *perfmap_lookup(const struct perfmap *m, uint64_t addr);
static inline const char *perfmap_name(const struct perfmap *m, const struct perfmap_entry *e)
{
	return strtab_get(&m->names, e->name);
}

/*
 * Opens ROOT/tmp/perf-PID.map, resolving symlinks inside ROOT (a
 * process's /proc/PID/root), for reading: only a regular file owned by
 * root or by owner (when owner is not (uid_t)-1). The fd or -errno.
 */
int perfmap_open(const char *root, uint32_t pid, uid_t owner);

/*
 * From /proc/PID/status text, the pid as the process itself sees it: the
 * last field of "NSpid:". 0 or -ENOENT.
 */
int perfmap_status_nspid(const char *status, uint32_t *nspid);

/*
 * A V8 name, "JS:*fn /app/x.js:3:20" (kind, tier mark, function, source
 * position), as the function ("fn", or "(anonymous)") and the script
 * ("/app/x.js"). False, leaving both empty, for any other name: other
 * JITs' names are shown as they are.
 */
bool perfmap_v8_name(const char *name, struct strbuf *function, struct strbuf *script);

#endif
