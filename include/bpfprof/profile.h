/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The in-memory profile: the one thing both the sampler side and the
 * writers touch. Everything is interned once and referred to by index:
 *
 *   strings    id 0 is ""
 *   mappings   id 0 is "no mapping"; one per mapped file per process, plus
 *              the kernel; start/limit/offset exactly as /proc/PID/maps
 *   functions  (name, system name, file) triples
 *   locations  one per (mapping, address, kind, label); its lines are the
 *              inline chain, innermost first; no lines = not symbolized
 *   stacks     arrays of location ids, leaf first: kernel frames, then user
 *   samples    (stack, pid, tid, comm, cgroup) -> count
 *
 * Elements are only appended, so ids are stable and writers can index the
 * arrays directly. Writers only read.
 */
#ifndef BPFPROF_PROFILE_H
#define BPFPROF_PROFILE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/interp.h"
#include "bpfprof/intern.h"
#include "bpfprof/util.h"

struct runtime_info;

enum frame_kind {
	FRAME_USER,
	FRAME_KERNEL,
	FRAME_JIT,
	FRAME_SPECIAL,		/* made up by bpfprof: [lost: ...], [unknown] */
	/*
	 * An interpreter's function (a function of the script a runtime runs):
	 * FRAME_INTERP + its runtime's id (interp.h); mapping 0, its address
	 * made of function and line.
	 */
	FRAME_INTERP,
};

struct prof_mapping {
	uint64_t start, limit, offset;
	uint32_t file;		/* string: path, "[vdso]", "[kernel.kallsyms]" */
	uint32_t build_id;	/* string: hex build id, or 0 */
	uint32_t pid;		/* owning process; 0 for the kernel */
	bool has_functions;	/* at least one location in it was named */
};

struct prof_function {
	uint32_t name;		/* string: readable (demangled) name */
	uint32_t system_name;	/* string: name as in the symbol table */
	uint32_t filename;	/* string: source file, or 0 */
	uint32_t start_line;	/* where it begins in filename; 0: not known */
};

struct prof_line {
	uint32_t function;
	uint32_t line;		/* 0 when unknown */
};

struct prof_location {
	uint64_t address;	/* leaf: the IP; callers: return address - 1 */
	uint32_t mapping;	/* 0 when no mapping covers it */
	uint32_t first_line;	/* into lines[] */
	uint16_t nlines;	/* 0: not symbolized */
	uint8_t kind;		/* enum frame_kind */
	uint32_t label;		/* string naming a FRAME_SPECIAL location, else 0 */
};

struct prof_stack {
	uint32_t first;		/* into frames[] */
	uint32_t depth;
};

/* The pid and tid of samples whose process exited and was folded (profile_fold). */
#define PROF_PID_EXITED UINT32_MAX

struct prof_sample {
	uint32_t stack;
	uint32_t pid;		/* process (tgid); PROF_PID_EXITED: folded */
	uint32_t tid;		/* thread */
	uint32_t comm;		/* string: thread name */
	uint64_t cgroup_id;
	uint64_t count;		/* in the profile's unit (profile_kind) */
	uint8_t state;		/* < PROF_STATES: running (0), or why off the CPU */
	uint8_t runtime;	/* whose state runtime_state is: a runtime's id */
	/* 1 + the runtime's state at the sample (its descriptor's state_names); 0: none */
	uint8_t runtime_state;
};

/* A cgroup v2 id (the directory's inode) and its path under the cgroup v2 mount. */
struct prof_cgroup {
	uint64_t id;
	uint32_t path;		/* string, e.g. "/system.slice/ssh.service" */
};

/*
 * What the counts are: CPU samples (period_ns of CPU each); microseconds off
 * the CPU (--off-cpu); or wall time in samples (--wall: CPU samples, and
 * off-CPU time in period_ns units).
 */
enum profile_kind {
	PROFILE_CPU,
	PROFILE_OFF_CPU,
	PROFILE_WALL,
};

/* A sample's state: sample.h's enum thread_state, which writers need not know. */
#define PROF_STATES 4		/* running, sleeping, uninterruptible, runnable */
/* The name of a state, as labels and frames say it: "running", "sleeping", ... */
const char *thread_state_name(unsigned state);

struct profile {
	struct strtab strings;

	struct prof_mapping *mappings;
	uint32_t nr_mappings, mappings_alloc;
	struct itab mapping_index;

	struct prof_function *functions;
	uint32_t nr_functions, functions_alloc;
	struct itab function_index;

	struct prof_location *locations;
	uint32_t nr_locations, locations_alloc;
	struct itab location_index;

	struct prof_line *lines;
	uint32_t nr_lines, lines_alloc;

	uint32_t *frames;
	uint32_t nr_frames, frames_alloc;
	struct prof_stack *stacks;
	uint32_t nr_stacks, stacks_alloc;
	struct itab stack_index;

	struct prof_sample *samples;
	uint32_t nr_samples, samples_alloc;
	struct itab sample_index;

	struct prof_cgroup *cgroups;
	uint32_t nr_cgroups, cgroups_alloc;
	struct itab cgroup_index;

	/*
	 * The runtimes whose frames or states it holds, by id: their
	 * descriptors (runtime_info.h) tell the writers their frames' colour
	 * and their samples' label. Set by whoever adds such samples.
	 */
	const struct runtime_info *runtimes[RUNTIME_KINDS];

	/* Processes and threads whose samples were folded into PROF_PID_EXITED. */
	uint64_t exited_pids, exited_tids;

	/* Whoever keeps this profile's ids, told around each fold (profile_on_fold). */
	struct fold_listener *fold_listeners;

	/* What the run was. */
	enum profile_kind kind;
	uint64_t start_wall_ns;	/* wall clock when sampling started */
	uint64_t duration_ns;
	uint32_t frequency;	/* samples per second per CPU */
	uint64_t period_ns;	/* CPU time one sample stands for */
	char *command_line;	/* owned */
};

void profile_init(struct profile *p);
void profile_release(struct profile *p);
/* About the memory it keeps resident: the bytes its arrays use and its indexes hold. */
size_t profile_bytes(const struct profile *p);
/* The part of it that is indexes, whose capacity doubles as they fill. */
size_t profile_index_bytes(const struct profile *p);

static inline uint32_t profile_string(struct profile *p, const char *s)
{
	return strtab_intern(&p->strings, s);
}
static inline const char *profile_str(const struct profile *p, uint32_t id)
{
	return strtab_get(&p->strings, id);
}

/* Interned on everything but has_functions. */
uint32_t profile_mapping(struct profile *p, const struct prof_mapping *m);
uint32_t profile_function(struct profile *p, uint32_t name, uint32_t system_name, uint32_t filename);
/* The same, for a function whose first line is known (an interpreter's). */
uint32_t profile_function_at(struct profile *p, uint32_t name, uint32_t system_name,
			     uint32_t filename, uint32_t start_line);

/*
 * Whether mapping m is of a file on disk: its name a path, not the kernel,
 * anonymous memory ("//anon", "[anon:...]"), "[vdso]" or such.
 */
bool profile_mapping_is_file(const struct profile *p, uint32_t m);

/* The location at (mapping, address), or ITAB_NONE. */
uint32_t profile_location_find(const struct profile *p, uint32_t mapping, uint64_t address);
/* Adds a location the caller has checked is absent; lines are copied. */
uint32_t profile_location_add(struct profile *p, uint32_t mapping, uint64_t address,
			      enum frame_kind kind, const struct prof_line *lines, uint16_t nlines);
/* Names a location made without lines (JIT code its perf map named late); lines are copied. */
void profile_location_name(struct profile *p, uint32_t loc, enum frame_kind kind,
			   const struct prof_line *lines, uint16_t nlines);
/* A FRAME_SPECIAL location named label, e.g. "[lost: stack map full]". */
uint32_t profile_special_location(struct profile *p, const char *label);

uint32_t profile_stack(struct profile *p, const uint32_t *locations, uint32_t depth);
static inline const uint32_t *profile_stack_frames(const struct profile *p, uint32_t stack,
						   uint32_t *depth)
{
	*depth = p->stacks[stack].depth;
	return p->frames + p->stacks[stack].first;
}

/* Adds s->count to the sample with the same stack and labels. */
void profile_add_sample(struct profile *p, const struct prof_sample *s);

uint64_t profile_total(const struct profile *p);

/* Old ids to new after profile_fold(); ITAB_NONE: let go. */
struct profile_renumbering {
	uint32_t *mappings, *locations;
};

/*
 * Whoever keeps ids of a profile (a window's copy of it, the symbolizer's
 * locations, the collector's cache of named stacks, a runtime's frames)
 * registers once and is told around every fold: before(ctx) while the ids
 * are still the old ones (a window copies what it has not yet), after(ctx,
 * r) with how they changed (r is borrowed for the call). Either may be
 * NULL. A holder leaves (profile_off_fold) before it goes away; one that
 * did not register keeps ids a fold has made wrong, so register at init.
 */
struct fold_listener {
	void (*before)(void *ctx);
	void (*after)(void *ctx, const struct profile_renumbering *r);
	void *ctx;
	struct fold_listener *next;	/* the profile's list */
};

void profile_on_fold(struct profile *p, struct fold_listener *l);
void profile_off_fold(struct profile *p, struct fold_listener *l);

/* What a fold lets go of. */
struct fold_rule {
	bool (*gone)(void *ctx, uint32_t pid);	/* process pid exited, all its samples named */
	void *ctx;
	bool keep_pids;		/* --per-pid: exited processes' samples keep their pids */
	bool trim;		/* every count let go first: only what is distinct and named stays */
};

/*
 * Bounds what processes that come and go leave behind. What rule->gone
 * says has exited is folded into what outlives it: its mappings of a file
 * with a build ID into one mapping of that file (pid 0, at the first such
 * mapping's addresses), its locations into that mapping's, and, unless
 * keep_pids, its samples' pid and tid into PROF_PID_EXITED. Samples with no
 * count, and everything no sample uses, are let go. The profile is built
 * again, so every mapping, location and stack id changes: the listeners are
 * told before and after, in the order they registered.
 */
void profile_fold(struct profile *p, const struct fold_rule *rule);

/*
 * Copying samples from one profile (src) into another (dst): what a sample
 * uses (its stack's locations, their mappings, functions and strings) is
 * interned in dst once, the ids src -> dst kept here as they are met. Valid
 * while src's ids are (a profile_fold of src renumbers them).
 */
struct profile_copy {
	const struct profile *src;
	struct profile *dst;
	uint32_t *strings, *mappings, *functions, *locations, *stacks;
	uint32_t nr_strings, nr_mappings, nr_functions, nr_locations, nr_stacks;
};

void profile_copy_init(struct profile_copy *c, struct profile *dst, const struct profile *src);
void profile_copy_release(struct profile_copy *c);
/* Adds count samples like src's sample s (its stack and labels) to dst. */
void profile_copy_sample(struct profile_copy *c, const struct prof_sample *s, uint64_t count);

/* The path of cgroup id as a string id, or 0 when it was never named. */
uint32_t profile_cgroup(const struct profile *p, uint64_t id);
void profile_set_cgroup_path(struct profile *p, uint64_t id, const char *path);

/* The folded-format mark of a frame kind: "_[k]" kernel, "_[j]" JIT, else "". */
const char *frame_kind_suffix(enum frame_kind kind);

/*
 * The name to show for line i of location loc (i < nlines), or, for a
 * location with no lines, what bpfprof knows of it: "[module+0xoffset]",
 * the special label, or "[unknown]". An interpreter's function's is its
 * name, then its file's last part and first line: "main (FILE:10)", so
 * that it never merges with a native function's. Appended to sb.
 */
void profile_frame_name(const struct profile *p, uint32_t loc, uint32_t i, struct strbuf *sb);
/* A frame nothing names at offset of file: "[BASENAME+0xOFFSET]", a "[name]"'s brackets dropped. */
void profile_offset_name(struct strbuf *sb, const char *file, uint64_t offset);

#endif
