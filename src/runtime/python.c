// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/uio.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/python.h"
#include "bpfprof/python_code.h"
#include "bpfprof/python_offsets.h"
#include "bpfprof/runtime.h"
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
	uint32_t tgid, gen;
	bool known;		/* bpf holds the program's view of it */
	bool gone;		/* found exited at the last drain: forgotten at the next */
	struct python_process bpf;
	struct py_code *codes;
	uint32_t nr_codes, codes_alloc;
	struct itab code_index;
};

/*
 * The namer: a thread that takes the program's notices of new Python stacks
 * every NAMER_MS and reads their code objects, so a process that lives
 * 150 ms is named even while the main thread spends a drain symbolizing
 * (the first takes some 400 ms). lock guards everything below it; the
 * main thread holds it in each python_* call.
 */
#define NAMER_MS 5

struct python {
	int files_fd, procs_fd, maps_fd;
	struct ring_buffer *notices;
	pthread_t namer;
	bool namer_running;
	bool stopping;		/* python_free to the namer: atomic loads and stores */
	pthread_mutex_t lock;
	uint32_t (*gen)(void *ctx, uint32_t tgid);
	void *ctx;
	struct py_file {
		struct unwind_file_key key;
		struct python_file f;
	} *files;
	uint32_t nr_files, files_alloc;
	struct itab file_index;
	uint16_t *warned;	/* versions named on stderr as not read */
	uint32_t nr_warned, warned_alloc;
	struct py_proc **procs;
	uint32_t nr_procs, procs_alloc;
	struct itab proc_index;
	struct python_stats stats;
	/* The profile's string id of "_PyEval_EvalFrameDefault", once interned; 0: not yet. */
	const struct profile *names_of;
	uint32_t eval_name;
};

static void stack_seen(struct python *py, uint32_t tgid, uint32_t gen, const struct py_stack *st);

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct py_notice *n = data;

	if (size >= sizeof(*n) && n->stack.n <= PY_MAX_FRAMES)
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

/* Every notice the program has sent so far, named. */
static void take_notices(struct python *py)
{
	pthread_mutex_lock(&py->lock);
	ring_buffer__consume(py->notices);
	pthread_mutex_unlock(&py->lock);
}

static void *namer(void *arg)
{
	struct python *py = arg;
	struct timespec nap = { 0, NAMER_MS * 1000000L };

	/* The program wakes no one for a notice (it would cost at every new stack): a timer. */
	while (!__atomic_load_n(&py->stopping, __ATOMIC_ACQUIRE)) {
		take_notices(py);
		nanosleep(&nap, NULL);
	}
	return NULL;
}

struct python *python_new(int files_fd, int procs_fd, int maps_fd, int notices_fd,
			  uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	struct python *py = xcalloc(1, sizeof(*py));
	sigset_t all, old;
	int err;

	py->files_fd = files_fd;
	py->procs_fd = procs_fd;
	py->maps_fd = maps_fd;
	py->gen = gen;
	py->ctx = ctx;
	pthread_mutex_init(&py->lock, NULL);
	py->notices = ring_buffer__new(notices_fd, on_notice, py, NULL);
	if (!py->notices) {
		warning("cannot read the program's Python stacks (%s): Python frames named at each "
			"drain only, those of short processes may stay unnamed", strerror(errno));
		return py;
	}
	/* Signals stay the main thread's: they end its wait for the next drain. */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	err = pthread_create(&py->namer, NULL, namer, py);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (err)
		warning("cannot start the thread naming Python code (%s): Python frames named at "
			"each drain only, those of short processes may stay unnamed", strerror(err));
	py->namer_running = !err;
	return py;
}

void python_take_notices(struct python *py)
{
	if (py && py->notices)
		take_notices(py);
}

static void free_proc(struct py_proc *pp)
{
	uint32_t i;

	for (i = 0; i < pp->nr_codes; i++)
		python_code_release(&pp->codes[i].info);
	free(pp->codes);
	itab_release(&pp->code_index);
	free(pp);
}

void python_free(struct python *py)
{
	uint32_t i;

	if (!py)
		return;
	__atomic_store_n(&py->stopping, true, __ATOMIC_RELEASE);
	if (py->namer_running)
		pthread_join(py->namer, NULL);
	ring_buffer__free(py->notices);
	pthread_mutex_destroy(&py->lock);
	for (i = 0; i < py->nr_procs; i++)
		free_proc(py->procs[i]);
	free(py->procs);
	itab_release(&py->proc_index);
	free(py->files);
	itab_release(&py->file_index);
	free(py->warned);
	free(py);
}

/* Files ------------------------------------------------------------------ */

static uint64_t file_hash(const struct unwind_file_key *k)
{
	return hash_mix(k->ino, k->dev);
}

static bool file_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct unwind_file_key *a = &((const struct python *)owner)->files[idx].key, *b = key;

	return a->ino == b->ino && a->dev == b->dev;
}

static const struct py_file *find_file(const struct python *py, const struct unwind_file_key *key)
{
	uint32_t idx = itab_find(&py->file_index, file_hash(key), file_eq, py, key);

	return idx == ITAB_NONE ? NULL : &py->files[idx];
}

/* An interpreter whose frames bpfprof cannot read: said once per version. */
static void warn_version(struct python *py, uint16_t version, const char *path)
{
	uint32_t i;

	for (i = 0; i < py->nr_warned; i++)
		if (py->warned[i] == version)
			return;
	ALLOC_GROW(py->warned, py->nr_warned + 1, py->warned_alloc);
	py->warned[py->nr_warned++] = version;
	warning("Python %u.%u ('%s'): its frames are not read (bpfprof reads CPython 3.10 to 3.13); "
		"its samples keep their native frames", version >> 8, version & 0xff, path);
}

/*
 * A file just found to be an interpreter: every process whose mappings the
 * program read before it knew (started with the first, at once) is Python
 * too, from those mappings.
 */
static void processes_mapping(struct python *py, const struct py_file *e)
{
	struct proc_mappings *m = xmalloc(sizeof(*m));
	__u32 tgid, next;
	int err;
	uint32_t i;

	for (err = bpf_map_get_next_key(py->maps_fd, NULL, &next); !err;
	     err = bpf_map_get_next_key(py->maps_fd, &tgid, &next)) {
		tgid = next;
		if (bpf_map_lookup_elem(py->maps_fd, &tgid, m))
			continue;
		for (i = 0; i < m->nr && i < UNWIND_MAX_MAPPINGS; i++) {
			const struct exec_mapping *x = &m->maps[i];
			struct python_process p = { 0 };

			if (x->file.ino != e->key.ino || x->file.dev != e->key.dev)
				continue;
			p.runtime = x->start - x->offset + e->f.runtime_rel;
			p.code_type = x->start - x->offset + e->f.code_type_rel;
			p.gen = m->gen;
			p.off = e->f.off;
			bpf_map_update_elem(py->procs_fd, &tgid, &p, BPF_NOEXIST);
			break;
		}
	}
	free(m);
}

static bool file_opened(struct python *py, const struct unwind_file_key *key, int fd,
			const char *path)
{
	struct python_file f;
	struct py_file *e;

	if (find_file(py, key))
		return true;
	if (python_file_identify(fd, path, &f) != 1)
		return false;
	if (f.off.frames == PY_FRAMES_NONE)
		warn_version(py, f.off.version, path);
	if (bpf_map_update_elem(py->files_fd, key, &f, BPF_ANY))
		debug("cannot tell the program of the interpreter '%s': %s", path, strerror(errno));
	ALLOC_GROW(py->files, py->nr_files + 1, py->files_alloc);
	e = &py->files[py->nr_files];
	e->key = *key;
	e->f = f;
	itab_insert(&py->file_index, file_hash(key), py->nr_files++);
	py->stats.files++;
	processes_mapping(py, e);
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
	pthread_mutex_lock(&py->lock);
	is = file_opened(py, key, fd, path);
	pthread_mutex_unlock(&py->lock);
	return is;
}

void python_process_maps(struct python *py, uint32_t tgid, const struct unwind_file_key *key,
			 uint64_t start, uint64_t offset)
{
	const struct py_file *e;
	struct python_process p = { 0 };

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	e = find_file(py, key);
	if (e) {
		p.runtime = start - offset + e->f.runtime_rel;
		p.code_type = start - offset + e->f.code_type_rel;
		p.off = e->f.off;
	}
	pthread_mutex_unlock(&py->lock);
	if (!e)
		return;
	p.gen = py->gen(py->ctx, tgid);
	/* What the program read of the process since is newer: kept. */
	bpf_map_update_elem(py->procs_fd, &tgid, &p, BPF_NOEXIST);
}

/* Processes --------------------------------------------------------------- */

static bool proc_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct python *)owner)->procs[idx]->tgid == *(const uint32_t *)key;
}

static void index_procs(struct python *py)
{
	uint32_t i;

	itab_release(&py->proc_index);
	for (i = 0; i < py->nr_procs; i++)
		itab_insert(&py->proc_index, hash_u64(py->procs[i]->tgid), i);
}

/* The process's state, for its generation gen (made anew at an exec). */
static struct py_proc *get_proc(struct python *py, uint32_t tgid, uint32_t gen)
{
	uint32_t idx = itab_find(&py->proc_index, hash_u64(tgid), proc_eq, py, &tgid);
	struct py_proc *pp;

	if (idx != ITAB_NONE && py->procs[idx]->gen == gen)
		return py->procs[idx];
	pp = xcalloc(1, sizeof(*pp));
	pp->tgid = tgid;
	pp->gen = gen;
	pp->known = !bpf_map_lookup_elem(py->procs_fd, &tgid, &pp->bpf) &&
		    pp->bpf.off.frames != PY_FRAMES_NONE;
	if (idx != ITAB_NONE) {
		free_proc(py->procs[idx]);
		py->procs[idx] = pp;
		return pp;
	}
	ALLOC_GROW(py->procs, py->nr_procs + 1, py->procs_alloc);
	py->procs[py->nr_procs] = pp;
	itab_insert(&py->proc_index, hash_u64(tgid), py->nr_procs++);
	return pp;
}

static struct py_proc *find_proc(const struct python *py, uint32_t tgid)
{
	uint32_t idx = itab_find(&py->proc_index, hash_u64(tgid), proc_eq, py, &tgid);

	return idx == ITAB_NONE ? NULL : py->procs[idx];
}

void python_after_drain(struct python *py)
{
	uint32_t i, kept = 0;

	if (!py)
		return;
	pthread_mutex_lock(&py->lock);
	/* Its samples up to its exit were in this drain: a process found gone before is done. */
	for (i = 0; i < py->nr_procs; i++) {
		struct py_proc *pp = py->procs[i];

		if (pp->gone) {
			free_proc(pp);
			continue;
		}
		pp->gone = kill(pp->tgid, 0) && errno == ESRCH;
		py->procs[kept++] = pp;
	}
	if (kept != py->nr_procs) {
		py->nr_procs = kept;
		index_procs(py);
	}
	pthread_mutex_unlock(&py->lock);
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

static int read_memory(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct py_proc *pp = ctx;
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(pp->tgid, &local, 1, &remote, 1, 0);

	if (n < 0)
		return -errno;
	return (size_t)n == len ? 0 : -EFAULT;
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
	err = pp->known ? python_code_read(&pp->bpf.off, pp->bpf.code_type, read_memory, pp, addr,
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

static void stack_seen(struct python *py, uint32_t tgid, uint32_t gen, const struct py_stack *st)
{
	struct py_proc *pp = get_proc(py, tgid, gen);
	uint32_t i;

	for (i = 0; i < st->n && i < PY_MAX_FRAMES; i++)
		name_code(py, pp, st->frames[i].code, st->frames[i].firstlineno);
}

/* Merging ----------------------------------------------------------------- */

/* Addresses of Python locations: in no mapping, apart from any native address. */
#define PY_LOCATION (1ull << 63)

/* The profile location of one Python frame: its function's, at its line. */
static uint32_t frame_location(struct profile *p, const struct py_proc *pp,
			       const struct py_frame *f)
{
	struct py_code *c = pp ? find_code(pp, f->code, f->firstlineno) : NULL;
	struct prof_line line;
	uint64_t address;
	uint32_t loc;

	if (!c || !c->ok)
		return profile_special_location(p, "[python: code not read]");
	if (!c->function) {
		struct strbuf system;

		/*
		 * The system name says where, as the folded name does: equal to
		 * the name, pprof would take "<module>" for C++ and cut it.
		 */
		strbuf_init(&system);
		strbuf_addf(&system, "%s (%s:%u)", c->info.qualname,
			    python_short_file(c->info.filename), c->info.firstlineno);
		c->function = 1 + profile_function_at(p, profile_string(p, c->info.qualname),
						      profile_string(p, system.buf),
						      profile_string(p, c->info.filename),
						      c->info.firstlineno);
		strbuf_release(&system);
	}
	line.function = c->function - 1;
	line.line = python_code_line(&pp->bpf.off, &c->info, f->instr & ~PY_FRAME_ENTRY);
	address = PY_LOCATION | (uint64_t)line.function << 24 | (line.line & 0xffffff);
	loc = profile_location_find(p, 0, address);
	if (loc == ITAB_NONE)
		loc = profile_location_add(p, 0, address, FRAME_PYTHON, &line, 1);
	return loc;
}

/* Whether location loc is a call of the interpreter's eval loop. */
static bool is_eval(struct python *py, struct profile *p, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	if (py->names_of != p) {
		py->names_of = p;
		py->eval_name = profile_string(p, "_PyEval_EvalFrameDefault");
	}
	return l->nlines && l->kind == FRAME_USER &&
	       p->functions[p->lines[l->first_line + l->nlines - 1].function].name == py->eval_name;
}

uint32_t python_merge(struct python *py, struct profile *p, uint32_t tgid,
		     const struct raw_python *rp, uint32_t *frames, uint32_t n, uint32_t max)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + PY_MAX_FRAMES], m = 0, g = 0, i;
	const struct py_proc *pp;

	if (!py || !rp->n || rp->runtime != RUNTIME_PYTHON)
		return n;
	/* The namer may be growing this process's code objects: held to the end. */
	pthread_mutex_lock(&py->lock);
	pp = find_proc(py, tgid);
	if (max > sizeof(out) / sizeof(out[0]))
		max = sizeof(out) / sizeof(out[0]);
	for (i = 0; i < n && m < max; i++) {
		if (g >= rp->n || !is_eval(py, p, frames[i])) {
			out[m++] = frames[i];
			continue;
		}
		/* This eval call's frames: up to its first, newest first as the stack is. */
		do
			out[m++] = frame_location(p, pp, &rp->frames[g]);
		while (!(rp->frames[g++].instr & PY_FRAME_ENTRY) && g < rp->n && m < max);
	}
	/* Frames whose eval calls the native stack does not show (cut short): at its root. */
	if (g < rp->n)
		py->stats.unmatched += rp->n - g;
	for (; g < rp->n && m < max; g++)
		out[m++] = frame_location(p, pp, &rp->frames[g]);
	py->stats.merged++;
	pthread_mutex_unlock(&py->lock);
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
	pthread_mutex_lock(&py->lock);
	*out = py->stats;
	pthread_mutex_unlock(&py->lock);
}

/* The runtime interface (runtime.h) ------------------------------------- */

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	int files_fd, procs_fd, maps_fd, notices_fd;

	sampler_python_maps(sampler, &files_fd, &procs_fd, &maps_fd, &notices_fd);
	if (files_fd < 0)
		return NULL;
	return python_new(files_fd, procs_fd, maps_fd, notices_fd, gen, ctx);
}

static bool rt_file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path)
{
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
	return python_merge(rt, p, rs->tgid, &rs->py, frames, n, max);
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
	python_stats(rt, &f->py);
}

/* Python processes: how many samples got their Python frames, and why others did not. */
static void summarize_python(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_PY_END];
	const struct python_stats *py = &f->py;

	if (!st->python || !t[STAT_PY_SAMPLES])
		return;
	fprintf(stderr, "bpfprof: python: %llu samples of Python processes, %llu with their Python "
		"frames (cut: %llu at %u frames, %llu at an unreadable frame); without: %llu in no "
		"Python code, %llu in a thread Python does not know, %llu of a version not read; "
		"%llu code objects named, %llu not readable\n",
		(unsigned long long)t[STAT_PY_SAMPLES],
		(unsigned long long)(end[PY_WALK_WHOLE] + end[PY_WALK_DEPTH] + end[PY_WALK_FAULT]),
		(unsigned long long)end[PY_WALK_DEPTH], PY_MAX_FRAMES,
		(unsigned long long)end[PY_WALK_FAULT], (unsigned long long)t[STAT_PY_NO_FRAME],
		(unsigned long long)t[STAT_PY_NO_THREAD], (unsigned long long)t[STAT_PY_UNSUPPORTED],
		(unsigned long long)py->codes, (unsigned long long)py->code_errors);
	debug("python: %u interpreter files; %llu samples merged, %llu frames whose eval call the "
	      "native stack did not show; %llu Python stacks not sent at once (ring full), %llu "
	      "without room in the map", py->files, (unsigned long long)py->merged,
	      (unsigned long long)py->unmatched, (unsigned long long)t[STAT_PY_NOTICES_LOST],
	      (unsigned long long)t[STAT_PYSTACKS_FULL]);
}

static void rt_free(void *rt)
{
	python_free(rt);
}

const struct runtime_ops python_runtime = {
	.name = "python",
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
