// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/python.h"
#include "bpfprof/python_code.h"
#include "bpfprof/python_offsets.h"
#include "bpfprof/runtime.h"
#include "bpfprof/python_merge.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/util.h"

/* A code object of a process, as read (or not) when a stack first showed it. */
struct py_code {
	uint64_t addr;
	uint32_t firstlineno;	/* as the program read it with the frame: a reused address differs */
	uint32_t function;	/* profile function id + 1; 0: not made yet */
	bool ok;
	struct py_code_info info;
};

struct py_proc {
	struct runtime_proc base;	/* first: runtime_procs holds it */
	bool known;		/* bpf holds the program's view of it */
	struct python_process bpf;
	struct py_code *codes;
	uint32_t nr_codes, codes_alloc;
	struct itab code_index;
};

/*
 * The base's namer (runtime_shared.h) takes the program's notices of new
 * Python stacks and reads their code objects; its lock guards everything
 * here, and the main thread holds it in each python_* call.
 */
struct python {
	struct runtime_base b;	/* first; its files struct python_file, its processes struct py_proc */
	uint32_t *warned;	/* versions named on stderr as not read, with why (<< 16) */
	uint32_t nr_warned, warned_alloc;
	/* Each interpreter file as found, with its path: the warning of eval calls not found. */
	struct py_file_seen {
		struct python_file f;
		char *path;
		bool warned;
	} *seen;
	uint32_t nr_seen, seen_alloc;
	bool warned_unknown;	/* that warning for a process of no file found */
	struct python_stats stats;
	/* The profile's string id of "_PyEval_EvalFrameDefault", once interned; 0: not yet. */
	const struct profile *names_of;
	uint32_t eval_name;
};

static void stack_seen(struct python *py, uint32_t tgid, uint32_t gen,
		       const struct interp_stack *st);

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct interp_notice *n = data;

	if (size >= sizeof(*n) && n->stack.n <= INTERP_MAX_FRAMES)
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

static void release_proc(struct runtime_proc *p);
static runtime_proc_fn process_of;

struct python *python_new(const struct runtime_maps *m, uint32_t (*gen)(void *ctx, uint32_t tgid),
			  void *ctx)
{
	static const struct runtime_desc desc = {
		.what = "Python",
		.file_size = sizeof(struct python_file),
		.proc_size = sizeof(struct py_proc),
		.release = release_proc,
		.process_of = process_of,
		.proc_value_size = sizeof(struct python_process),
		.on_notice = on_notice,
	};
	struct python *py = xcalloc(1, sizeof(*py));

	runtime_base_init(&py->b, &desc, m, gen, ctx);
	return py;
}

void python_take_notices(struct python *py)
{
	if (py)
		runtime_take_notices(py);
}

static void release_proc(struct runtime_proc *p)
{
	struct py_proc *pp = (struct py_proc *)p;
	uint32_t i;

	for (i = 0; i < pp->nr_codes; i++)
		python_code_release(&pp->codes[i].info);
	free(pp->codes);
	itab_release(&pp->code_index);
}

void python_free(struct python *py)
{
	if (!py)
		return;
	runtime_base_release(&py->b);
	free(py->warned);
	for (uint32_t i = 0; i < py->nr_seen; i++)
		free(py->seen[i].path);
	free(py->seen);
	free(py);
}

/* Files ------------------------------------------------------------------ */

/* Why a file's frames are not read (enum py_unread), in words. */
static const char *unread_why(uint32_t why)
{
	switch (why) {
	case PY_UNREAD_BUILD:
		return "a build bpfprof does not read: 32-bit, big-endian, Py_TRACE_REFS or no PyCode_Type";
	case PY_UNREAD_FREE_THREADED:
		return "a free-threaded build";
	case PY_UNREAD_DEBUG_OFFSETS:
		return "its _Py_DebugOffsets at _PyRuntime are not sane: no cookie, another version, "
		       "or offsets outside their structs";
	case PY_UNREAD_REACH:
		return "its offsets lie past what a frame or code read reaches";
	default:
		return "bpfprof reads CPython 3.8 to 3.14";
	}
}

/* An interpreter whose frames bpfprof cannot read: said once per version and cause. */
static void warn_version(struct python *py, uint16_t version, uint32_t why, const char *path)
{
	uint32_t i, key = why << 16 | version;

	for (i = 0; i < py->nr_warned; i++)
		if (py->warned[i] == key)
			return;
	ALLOC_GROW(py->warned, py->nr_warned + 1, py->warned_alloc);
	py->warned[py->nr_warned++] = key;
	warning("Python %u.%u ('%s'): its frames are not read (%s); its samples keep their native "
		"frames", version >> 8, version & 0xff, path, unread_why(why));
}

/*
 * A version whose layout both the table and the file's _Py_DebugOffsets
 * give (3.13): the file's is taken; a difference is said at -v, since it
 * means a build the table was not made from (another compiler, options).
 */
static void compare_table(const struct python_file *f, const char *path)
{
	const struct py_offsets *t = python_offsets_known(f->off.version);

	if (t && f->off.frames != PY_FRAMES_NONE && python_offsets_published(f->off.version) &&
	    memcmp(t, &f->off, sizeof(*t)))
		debug("Python %u.%u in '%s': its _Py_DebugOffsets differ from bpfprof's table for "
		      "%u.%u; the file's are used", f->off.version >> 8, f->off.version & 0xff, path,
		      f->off.version >> 8, f->off.version & 0xff);
}

/* What the program is told of a process mapping interpreter file f at start (runtime_proc_fn). */
static void process_of(const void *file, uint64_t start, uint64_t offset, uint32_t gen, void *proc)
{
	const struct python_file *f = file;
	struct python_process *p = proc;

	p->runtime = start - offset + f->runtime_rel;
	p->code_type = start - offset + f->code_type_rel;
	p->gen = gen;
	p->off = f->off;
	for (int i = 0; i < PY_EVAL_RANGES; i++)
		if (f->eval_rel.lo[i]) {
			p->eval.lo[i] = start - offset + f->eval_rel.lo[i];
			p->eval.hi[i] = start - offset + f->eval_rel.hi[i];
		}
}

static bool file_opened(struct python *py, const struct unwind_file_key *key, int fd,
			const char *path)
{
	struct python_file f;

	if (runtime_files_find(&py->b.files, key))
		return true;
	if (python_file_identify(fd, path, &f) != 1)
		return false;
	if (f.off.frames == PY_FRAMES_NONE)
		warn_version(py, f.off.version, f.unread, path);
	compare_table(&f, path);
	/*
	 * Every process whose mappings the program read before it knew
	 * (started with the first, at once) is Python too, from those mappings.
	 */
	runtime_base_file_found(&py->b, key, &f, path);
	ALLOC_GROW(py->seen, py->nr_seen + 1, py->seen_alloc);
	py->seen[py->nr_seen++] = (struct py_file_seen){ .f = f, .path = xstrdup(path) };
	py->stats.files++;
	debug("Python %u.%u in '%s'%s", f.off.version >> 8, f.off.version & 0xff, path,
	      f.off.frames == PY_FRAMES_NONE ? ": not read" : "");
	return true;
}

bool python_file_opened(struct python *py, const struct unwind_file_key *key, int fd,
			const char *path)
{
	bool is;

	if (!py)
		return false;
	pthread_mutex_lock(&py->b.lock);
	is = file_opened(py, key, fd, path);
	pthread_mutex_unlock(&py->b.lock);
	return is;
}

void python_process_maps(struct python *py, uint32_t tgid, const struct unwind_file_key *key,
			 uint64_t start, uint64_t offset)
{
	if (py)
		runtime_process_maps(py, tgid, key, start, offset);
}

/* Processes --------------------------------------------------------------- */

/* The process's state, for its generation gen (made anew at an exec). */
static struct py_proc *get_proc(struct python *py, uint32_t tgid, uint32_t gen)
{
	bool made;
	struct py_proc *pp = (struct py_proc *)runtime_procs_get(&py->b.procs, tgid, gen, &made);

	if (made)
		pp->known = !bpf_map_lookup_elem(py->b.procs_fd, &tgid, &pp->bpf) &&
			    pp->bpf.off.frames != PY_FRAMES_NONE;
	return pp;
}

static struct py_proc *find_proc(const struct python *py, uint32_t tgid)
{
	return (struct py_proc *)runtime_procs_find(&py->b.procs, tgid);
}

void python_after_drain(struct python *py)
{
	if (py)
		runtime_after_drain(py);
}

/* Code objects ----------------------------------------------------------- */

struct code_key {
	uint64_t addr;
	uint32_t firstlineno;
};

static bool code_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct py_code *c = &((const struct py_proc *)owner)->codes[idx];
	const struct code_key *k = key;

	return c->addr == k->addr && c->firstlineno == k->firstlineno;
}

static struct py_code *find_code(const struct py_proc *pp, uint64_t addr, uint32_t firstlineno)
{
	struct code_key k = { addr, firstlineno };
	uint32_t idx = itab_find(&pp->code_index, hash_mix(addr, firstlineno), code_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->codes[idx];
}


/* A code object the process's stacks showed: read once (failures too, so they are not read again). */
static void name_code(struct python *py, struct py_proc *pp, uint64_t addr, uint32_t firstlineno)
{
	struct py_code *c;
	int err;

	if (find_code(pp, addr, firstlineno))
		return;
	ALLOC_GROW(pp->codes, pp->nr_codes + 1, pp->codes_alloc);
	c = &pp->codes[pp->nr_codes];
	memset(c, 0, sizeof(*c));
	c->addr = addr;
	c->firstlineno = firstlineno;
	err = pp->known ? python_code_read(&pp->bpf.off, pp->bpf.code_type, runtime_proc_read, pp, addr,
					   &c->info)
			: -ENOENT;
	/* The same object read twice (freed and made again in between) may disagree: not ours. */
	c->ok = !err && c->info.firstlineno == firstlineno;
	if (c->ok)
		py->stats.codes++;
	else
		py->stats.code_errors++;
	itab_insert(&pp->code_index, hash_mix(addr, firstlineno), pp->nr_codes++);
}

static void stack_seen(struct python *py, uint32_t tgid, uint32_t gen,
		       const struct interp_stack *st)
{
	struct py_proc *pp = get_proc(py, tgid, gen);
	uint32_t i;

	for (i = 0; i < st->n && i < INTERP_MAX_FRAMES; i++)
		name_code(py, pp, st->frames[i].code, st->frames[i].firstlineno);
}

/* Merging ----------------------------------------------------------------- */

/* The profile location of one Python frame: its function's, at its line. */
static uint32_t frame_location(struct profile *p, const struct py_proc *pp,
			       const struct interp_frame *f)
{
	struct py_code *c = pp ? find_code(pp, f->code, f->firstlineno) : NULL;

	if (!c || !c->ok)
		return profile_special_location(p, "[python: code not read]");
	if (!c->function)
		c->function = 1 + interp_function(p, c->info.qualname, c->info.filename,
						  c->info.firstlineno);
	return interp_location(p, RUNTIME_PYTHON, c->function - 1,
			       python_code_line(&pp->bpf.off, &c->info, f->instr & ~INTERP_FRAME_ENTRY));
}

/* The profile's string id of "_PyEval_EvalFrameDefault". */
static uint32_t eval_name_of(struct python *py, struct profile *p)
{
	if (py->names_of != p) {
		py->names_of = p;
		py->eval_name = profile_string(p, "_PyEval_EvalFrameDefault");
	}
	return py->eval_name;
}

/*
 * Whether location loc is a call of the interpreter's eval loop: by its
 * function's name, or by its address in the loop's code (eval; NULL: none),
 * which finds the part a stripped file names not (its .cold block).
 */
static bool is_eval(const struct profile *p, uint32_t name, const struct py_eval_code *eval,
		    uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];
	unsigned i;

	if (l->kind != FRAME_USER)
		return false;
	if (l->nlines && p->functions[p->lines[l->first_line + l->nlines - 1].function].name == name)
		return true;
	for (i = 0; eval && i < PY_EVAL_RANGES && eval->lo[i]; i++)
		if (l->address >= eval->lo[i] && l->address < eval->hi[i])
			return true;
	return false;
}

uint32_t python_merge_frames(struct profile *p, uint32_t eval_name, const struct py_eval_code *eval,
			     const struct raw_interp *rp,
			     const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			     uint32_t *out, uint32_t max, uint32_t *unmatched)
{
	uint32_t m = 0, g = 0, i;

	for (i = 0; i < n && m < max; i++) {
		if (g >= rp->n || !is_eval(p, eval_name, eval, frames[i])) {
			out[m++] = frames[i];
			continue;
		}
		/* This eval call's frames: up to its first, newest first as the stack is. */
		do
			out[m++] = nm->locate(nm->ctx, p, rp->frames, g, rp->n);
		while (!(rp->frames[g++].instr & INTERP_FRAME_ENTRY) && g < rp->n && m < max);
	}
	/* Frames whose eval calls the native stack does not show (cut short): at its root. */
	*unmatched = rp->n - g;
	for (; g < rp->n && m < max; g++)
		out[m++] = nm->locate(nm->ctx, p, rp->frames, g, rp->n);
	return m;
}

/* merge_names.locate: a frame of process ctx (a struct py_proc; NULL: not known). */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	(void)n;
	return frame_location(p, ctx, &frames[g]);
}

/*
 * The file process pp's interpreter is from: the one whose _PyRuntime,
 * PyCode_Type and eval loop lie at the same distances from each other as
 * in the process (a copy of one build is as good as another); NULL if none.
 */
static struct py_file_seen *file_of(struct python *py, const struct py_proc *pp)
{
	uint32_t i;

	for (i = 0; pp && i < py->nr_seen; i++) {
		const struct python_file *f = &py->seen[i].f;
		uint64_t bias = pp->bpf.runtime - f->runtime_rel;

		if (pp->bpf.code_type - f->code_type_rel == bias &&
		    pp->bpf.eval.lo[0] - f->eval_rel.lo[0] == bias)
			return &py->seen[i];
	}
	return NULL;
}

/*
 * A sample whose eval calls were not all on its native stack: its Python
 * frames at the root. Said once a file: its eval loop lies where bpfprof
 * did not find it (or the native walk stops short of it).
 */
static void warn_unmatched(struct python *py, struct py_proc *pp, uint32_t tgid)
{
	struct py_file_seen *s = file_of(py, pp);
	bool *warned = s ? &s->warned : &py->warned_unknown;

	if (*warned)
		return;
	*warned = true;
	warning("Python in '%s' (pid %u): eval calls not found on the native stack; their Python "
		"frames are put at the stack's root", s ? s->path : "a file not known", tgid);
}

uint32_t python_merge(struct python *py, struct profile *p, uint32_t tgid,
		     const struct raw_interp *rp, uint32_t *frames, uint32_t n, uint32_t max)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m, unmatched, name = 0;
	struct merge_names nm = { .locate = locate };
	struct py_proc *pp;

	if (!py || !rp->n || rp->runtime != RUNTIME_PYTHON)
		return n;
	/* The namer may be growing this process's code objects: held to the end. */
	pthread_mutex_lock(&py->b.lock);
	nm.ctx = find_proc(py, tgid);
	if (max > sizeof(out) / sizeof(out[0]))
		max = sizeof(out) / sizeof(out[0]);
	if (n)
		name = eval_name_of(py, p);
	pp = nm.ctx;
	m = python_merge_frames(p, name, pp && pp->known ? &pp->bpf.eval : NULL, rp, &nm, frames, n,
				out, max, &unmatched);
	py->stats.unmatched += unmatched;
	py->stats.merged++;
	if (unmatched) {
		py->stats.unmatched_samples++;
		warn_unmatched(py, pp, tgid);
	}
	pthread_mutex_unlock(&py->b.lock);
	memcpy(frames, out, m * sizeof(*out));
	return m;
}

void python_renumber(struct python *py)
{
	/* Only location ids changed; frame_location finds its locations by address. */
	if (py)
		py->names_of = NULL;
}

void python_stats(struct python *py, struct python_stats *out)
{
	memset(out, 0, sizeof(*out));
	if (!py)
		return;
	pthread_mutex_lock(&py->b.lock);
	*out = py->stats;
	pthread_mutex_unlock(&py->b.lock);
}

/* The runtime interface (runtime.h) ------------------------------------- */

/* A package's files: a frame of one shows the package ("json/__init__.py"). */
static const char *const package_files[] = { "__init__.py", "__main__.py", NULL };

static const struct runtime_info python_info = {
	.name = "python",
	.kind = RUNTIME_PYTHON,
	.option = "python",
	.what = "Python",
	.frame_type = "cpython",
	.versions = "CPython 3.8 to 3.14",
	.builds = "libpython shared, or linked into the executable (Debian's `python3.11`); a "
		  "static build that exports no symbols when its name gives its version",
	.not_read = "3.7 and older, 3.15 and later; free-threaded builds (`python3.13t`, "
		    "`python3.14t`); `Py_TRACE_REFS` debug builds before 3.13",
	.layout = "a table by version (`Py_Version`; 3.10, 3.9, 3.8 by `Py_NewRef`, "
		  "`PyFrame_GetCode`, `PyCode_NewWithPosOnlyArgs`), unit-tested against "
		  "each version's DWARF, for 3.8 to 3.12; from 3.13 the file's own "
		  "`_Py_DebugOffsets` (read from `_PyRuntime`'s initial bytes in the file), 3.13's table "
		  "line as a cross-check",
	.tested = "`e2e/python`: Debian's 3.11, bullseye's 3.9 in a root when it can be built, "
		  "and 3.8.18, 3.9.18, 3.10.13, 3.11.7, 3.12.1 and 3.13.0 under `/root/.pyenv` when "
		  "there; `e2e/python_sid`: Debian sid's 3.14 and 3.13 (GCC 16), in a "
		  "root built once per machine (`tests/tools/newer_root.sh sid`)",
	.colour = { { 70, 70, 0 }, { 110, 70, 0 }, { 205, 50, 1 } },	/* blue */
	.folder_files = package_files,
};

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	struct runtime_maps m;

	sampler_runtime_maps(sampler, &python_info, &m);
	if (m.files < 0)
		return NULL;
	return python_new(&m, gen, ctx);
}

static bool rt_file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			   const char *root)
{
	(void)root;	/* everything it reads is in the file */
	return python_file_opened(rt, key, fd, path);
}

static void rt_process_maps(void *rt, uint32_t tgid, const struct unwind_file_key *key,
			    uint64_t start, uint64_t offset)
{
	python_process_maps(rt, tgid, key, start, offset);
}

static void rt_take_notices(void *rt)
{
	python_take_notices(rt);
}

/* The VM's native frames: each _PyEval_EvalFrameDefault call. */
static uint32_t rt_merge(void *rt, struct profile *p, const struct raw_sample *rs, uint32_t *frames,
			 uint32_t n, uint32_t max)
{
	return python_merge(rt, p, rs->tgid, &rs->interp, frames, n, max);
}

static void rt_after_drain(void *rt)
{
	python_after_drain(rt);
}

static void rt_renumber(void *rt)
{
	python_renumber(rt);
}

static void rt_stats(void *rt, struct run_figures *f)
{
	python_stats(rt, RUN_FIGURES_OF(f, RUNTIME_PYTHON, struct python_stats));
}

/* Python processes: how many samples got their Python frames, and why others did not. */
static void summarize_python(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_PY(END)];
	const struct python_stats *py = RUN_FIGURES_OF(f, RUNTIME_PYTHON, const struct python_stats);

	if (!(st->runtimes_on & 1u << RUNTIME_PYTHON) || !t[STAT_PY(SAMPLES)])
		return;
	fprintf(stderr, "bpfprof: python: %llu samples of Python processes, %llu with their Python "
		"frames (cut: %llu at %u frames, %llu at an unreadable frame); without: %llu in no "
		"Python code, %llu in a thread Python does not know, %llu of a version not read; "
		"%llu code objects named, %llu not readable; %llu with their Python frames at the root (their "
		"eval calls not on the native stack)\n",
		(unsigned long long)t[STAT_PY(SAMPLES)],
		(unsigned long long)(end[INTERP_WALK_WHOLE] + end[INTERP_WALK_DEPTH] + end[INTERP_WALK_FAULT]),
		(unsigned long long)end[INTERP_WALK_DEPTH], INTERP_MAX_FRAMES,
		(unsigned long long)end[INTERP_WALK_FAULT], (unsigned long long)t[STAT_PY(NO_FRAME)],
		(unsigned long long)t[STAT_PY(NO_THREAD)], (unsigned long long)t[STAT_PY(UNSUPPORTED)],
		(unsigned long long)py->codes, (unsigned long long)py->code_errors,
		(unsigned long long)py->unmatched_samples);
	debug("python: %u interpreter files; %llu samples merged, %llu frames whose eval call the "
	      "native stack did not show; %llu Python stacks not sent at once (ring full), %llu "
	      "without room in the map", py->files, (unsigned long long)py->merged,
	      (unsigned long long)py->unmatched, (unsigned long long)t[STAT_INTERP_NOTICES_LOST],
	      (unsigned long long)t[STAT_INTERP_STACKS_FULL]);
}

static void rt_free(void *rt)
{
	python_free(rt);
}

const struct runtime_ops python_runtime = {
	.info = &python_info,
	.start = start,
	.file_opened = rt_file_opened,
	.process_maps = rt_process_maps,
	.take_notices = rt_take_notices,
	.merge = rt_merge,
	.after_drain = rt_after_drain,
	.renumber = rt_renumber,
	.stats = rt_stats,
	.summarize = summarize_python,
	.free = rt_free,
};
