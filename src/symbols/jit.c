// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * JIT code: frames in anonymous memory named from the process's
 * /tmp/perf-PID.map, read again as it grows, and frames sampled before
 * their line was written named once it is.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/frame_names.h"
#include "bpfprof/jit.h"
#include "bpfprof/perfmap.h"

/* A process's perf map: looked for once, read again as it grows. */
struct jitmap {
	uint32_t tgid;
	int fd;			/* -1: not open (none found, or the process is gone) */
	uint64_t read_generation;	/* drain of the last look at the file */
	uint32_t late_pass;	/* jit_name_late()'s pass that last read it */
	struct perfmap map;
};

static bool jitmap_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct jit_names *)owner)->jitmaps[idx]->tgid == *(const uint32_t *)key;
}

static void jitmap_free(struct jitmap *j)
{
	if (j->fd >= 0)
		close(j->fd);
	perfmap_release(&j->map);
	free(j);
}

void jit_names_release(struct jit_names *jn)
{
	uint32_t i;

	for (i = 0; i < jn->nr_jitmaps; i++)
		jitmap_free(jn->jitmaps[i]);
	free(jn->jitmaps);
	itab_release(&jn->jitmap_index);
	free(jn->late_jit);
}

/*
 * The file is named by the pid the process sees itself as (NSpid's last
 * field) and lives in its /tmp: open it through /proc/PID/root while the
 * process lives, and keep it open for its later lines. A process already
 * gone can only be looked for in our own /tmp, by its pid here.
 */
static int jitmap_open(const struct procs *ps, uint32_t tgid)
{
	uint32_t nspid = tgid;
	char path[4096], *status;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%" PRIu32, ps->proc_root, tgid);
	if (stat(path, &st))
		return perfmap_open("/", tgid, (uid_t)-1);
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", ps->proc_root, tgid);
	if (!read_file(path, &status, NULL)) {
		perfmap_status_nspid(status, &nspid);	/* none before Linux 4.1: one namespace */
		free(status);
	}
	/* /proc/PID belongs to the process's user: the map must be its, or root's. */
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/root", ps->proc_root, tgid);
	fd = perfmap_open(path, nspid, st.st_uid);
	if (fd >= 0)
		debug("JIT map of process %" PRIu32 ": %s/tmp/perf-%" PRIu32 ".map", tgid, path, nspid);
	return fd;
}

/*
 * Reads what the file gained since; closes it once its process is gone.
 * A live process without one yet may start a JIT later: looked for again.
 */
static void jitmap_read(const struct procs *ps, struct jitmap *j, bool first)
{
	char path[4096];
	bool alive;
	int err;

	j->read_generation = ps->generation;
	snprintf(path, sizeof(path), "%s/%" PRIu32, ps->proc_root, j->tgid);
	alive = !access(path, F_OK);
	if (j->fd < 0 && (alive || first))
		j->fd = jitmap_open(ps, j->tgid);
	if (j->fd < 0)
		return;
	if ((err = perfmap_read_fd(&j->map, j->fd)))
		debug("cannot read the JIT map of process %" PRIu32 ": %s", j->tgid, strerror(-err));
	/* Read after the exit: nothing can be added any more. */
	if (!alive) {
		close(j->fd);
		j->fd = -1;
	}
}

void forget_jitmaps(struct jit_names *jn, struct procs *ps)
{
	uint32_t i, kept = 0;

	for (i = 0; i < jn->nr_jitmaps; i++) {
		if (procs_find(ps, jn->jitmaps[i]->tgid))
			jn->jitmaps[kept++] = jn->jitmaps[i];
		else
			jitmap_free(jn->jitmaps[i]);
	}
	if (kept == jn->nr_jitmaps)
		return;
	jn->nr_jitmaps = kept;
	itab_release(&jn->jitmap_index);
	for (i = 0; i < kept; i++)
		itab_insert(&jn->jitmap_index, hash_u64(jn->jitmaps[i]->tgid), i);
}

void jit_renumber(struct jit_names *jn, const struct profile_renumbering *r)
{
	uint32_t i, kept = 0;

	for (i = 0; i < jn->nr_late_jit; i++) {
		struct late_jit e = jn->late_jit[i];

		if ((e.location = r->locations[e.location]) != ITAB_NONE)
			jn->late_jit[kept++] = e;
	}
	jn->nr_late_jit = kept;
}

static struct jitmap *get_jitmap(struct jit_names *jn, const struct procs *ps, uint32_t tgid)
{
	uint64_t h = hash_u64(tgid);
	uint32_t idx = itab_find(&jn->jitmap_index, h, jitmap_eq, jn, &tgid);
	struct jitmap *j;

	if (idx != ITAB_NONE)
		return jn->jitmaps[idx];
	j = xcalloc(1, sizeof(*j));
	j->tgid = tgid;
	perfmap_init(&j->map);
	j->fd = -1;
	jitmap_read(ps, j, true);
	ALLOC_GROW(jn->jitmaps, jn->nr_jitmaps + 1, jn->jitmaps_alloc);
	jn->jitmaps[jn->nr_jitmaps] = j;
	itab_insert(&jn->jitmap_index, h, jn->nr_jitmaps++);
	return j;
}

/* The line naming perf-map entry e. V8's names are split into function and script; others kept whole. */
static struct prof_line jit_line(struct profile *p, const struct jitmap *j,
				 const struct perfmap_entry *e)
{
	const char *name = perfmap_name(&j->map, e);
	struct prof_line line = { 0, 0 };
	struct strbuf fn, script;

	strbuf_init(&fn);
	strbuf_init(&script);
	if (perfmap_v8_name(name, &fn, &script)) {
		line.function = profile_function(p, profile_string(p, fn.buf), profile_string(p, name),
						 script.len ? profile_string(p, script.buf) : 0);
	} else {
		struct sym_frame fr = { name, NULL, 0 };

		line.function = frame_function(p, &fr);
	}
	strbuf_release(&fn);
	strbuf_release(&script);
	return line;
}

/* Late JIT frames wait at most this many at once; past that they stay [anon+0x...]. */
#define MAX_LATE_JIT 16384

void jit_name_late(struct jit_names *jn, struct procs *ps, struct profile *p)
{
	uint32_t i, kept = 0;

	jn->late_jit_passes++;
	for (i = 0; i < jn->nr_late_jit; i++) {
		struct late_jit e = jn->late_jit[i];
		struct jitmap *j = get_jitmap(jn, ps, e.tgid);
		const struct perfmap_entry *pe;
		struct prof_line line;
		struct proc *proc;

		/* Once per process per pass: the map is read from where the last read ended. */
		if (j->late_pass != jn->late_jit_passes) {
			j->late_pass = jn->late_jit_passes;
			jitmap_read(ps, j, false);
		}
		pe = perfmap_lookup(&j->map, p->locations[e.location].address);
		if (pe) {
			line = jit_line(p, j, pe);
			profile_location_name(p, e.location, FRAME_JIT, &line, 1);
			continue;
		}
		/* Its map can still grow while the process lives. */
		proc = procs_find(ps, e.tgid);
		if (proc && !proc->gone_ns)
			jn->late_jit[kept++] = e;
	}
	jn->nr_late_jit = kept;
}

bool anon_map(const struct proc_map *m)
{
	return !m->path[0] || !strncmp(m->path, "[anon", 5) || !strncmp(m->path, "//anon", 6);
}

/*
 * An address in anonymous executable memory: a JIT frame if the process's
 * perf map names it, read again (once per drain) if it does not yet; if
 * it still does not, named later when it does.
 */
uint32_t jit_location(struct jit_names *jn, struct procs *ps, struct profile *p, uint32_t tgid,
		      uint32_t mapping, uint64_t addr)
{
	struct jitmap *j = get_jitmap(jn, ps, tgid);
	const struct perfmap_entry *e = perfmap_lookup(&j->map, addr);
	struct prof_line line;
	uint32_t id;

	if (!e && j->read_generation != ps->generation) {
		jitmap_read(ps, j, false);
		e = perfmap_lookup(&j->map, addr);
	}
	if (!e) {
		id = frames_location(p, mapping, addr, FRAME_USER, NULL, 0);
		if (jn->nr_late_jit < MAX_LATE_JIT) {
			ALLOC_GROW(jn->late_jit, jn->nr_late_jit + 1, jn->late_jit_alloc);
			jn->late_jit[jn->nr_late_jit++] = (struct late_jit){ id, tgid };
		}
		return id;
	}
	line = jit_line(p, j, e);
	return profile_location_add(p, mapping, addr, FRAME_JIT, &line, 1);
}
