// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * PHP's frames in userspace: which files hold a PHP engine (told to the
 * BPF program, which walks the frames: bpf/php.bpf.h), the functions of
 * every PHP stack named while their process lives, and each sample's PHP
 * frames put in place of the VM's native frame (execute_ex) that ran them.
 *
 * A user function is NAME (FILE:FIRSTLINE) as PHP names it ("alpha",
 * "Foo::bar", "{closure}"; the script's main code "{main}"), FILE the
 * script's path; pprof and callgrind carry the line of the frame's opline.
 * An internal function is its PHP name ("hash", "ArrayObject::count")
 * above the C code that runs it.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/php_file.h"
#include "bpfprof/php_merge.h"
#include "bpfprof/runtime.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/util.h"

#define NAME_MAX_BYTES		256
#define PATH_MAX_BYTES		4096

/* A function of a process, as read (or not) when a stack first showed it. */
struct php_func {
	uint64_t addr;
	uint32_t check;			/* the frame's firstlineno: PHP_FUNC_CHECK, 0 for C's */
	uint32_t first_line;		/* a user function's, as read */
	bool ok;
	char *name, *file;		/* file NULL: an internal function */
};

struct php_proc {
	struct runtime_proc base;	/* first: runtime_procs holds it */
	bool known;
	struct php_process bpf;
	struct php_func *funcs;
	uint32_t nr_funcs, funcs_alloc;
	struct itab func_index;
};

struct php_stats {
	uint32_t files, unknown_files;	/* files holding a PHP engine; of them, not read */
	uint64_t funcs, func_errors;	/* functions named; not readable (freed, gone) */
	uint64_t merged;		/* samples whose PHP frames were merged with native ones */
	uint64_t unmatched;		/* frames of VM entries not on the native stack: put at its root */
	uint64_t no_vm_frame;		/* samples whose native stack showed no VM: PHP frames left out */
};

struct php {
	struct runtime_base b;	/* first; its files struct php_file, its processes struct php_proc */
	struct php_stats stats;
};

/* Processes ------------------------------------------------------------------ */

static void release_proc(struct runtime_proc *p)
{
	struct php_proc *pp = (struct php_proc *)p;
	uint32_t i;

	for (i = 0; i < pp->nr_funcs; i++) {
		free(pp->funcs[i].name);
		free(pp->funcs[i].file);
	}
	free(pp->funcs);
	itab_release(&pp->func_index);
}

static struct php_proc *find_proc(const struct php *ph, uint32_t tgid)
{
	return (struct php_proc *)runtime_procs_find(&ph->b.procs, tgid);
}

static struct php_proc *get_proc(struct php *ph, uint32_t tgid, uint32_t gen)
{
	bool made;
	struct php_proc *pp = (struct php_proc *)runtime_procs_get(&ph->b.procs, tgid, gen, &made);

	if (made)
		pp->known = !bpf_map_lookup_elem(ph->b.procs_fd, &tgid, &pp->bpf) && pp->bpf.known;
	return pp;
}

/* Reading PHP's objects ------------------------------------------------------- */

static int read_u64(struct php_proc *pp, uint64_t addr, uint64_t *v)
{
	return runtime_proc_read(pp, addr, v, sizeof(*v));
}

/* A zend_string's bytes (at most max), NUL-terminated and malloc'd: 0 or -errno. */
static int read_string(struct php_proc *pp, uint64_t str, size_t max, char **out)
{
	uint64_t len;
	char *s;
	int err;

	*out = NULL;
	if (!str || (str & 7))
		return -EINVAL;
	if ((err = read_u64(pp, str + PHP_STR_LEN, &len)))
		return err;
	if (len > max)
		len = max;
	s = xmalloc(len + 1);
	if (len && (err = runtime_proc_read(pp, str + PHP_STR_VAL, s, len))) {
		free(s);
		return err;
	}
	s[len] = '\0';
	*out = s;
	return 0;
}

static bool func_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct php_func *f = &((const struct php_proc *)owner)->funcs[idx];
	const struct php_func *k = key;

	return f->addr == k->addr && f->check == k->check;
}

static const struct php_func *find_func(const struct php_proc *pp, uint64_t addr, uint32_t check)
{
	struct php_func k = { .addr = addr, .check = check };
	uint32_t idx = itab_find(&pp->func_index, hash_mix(addr, check), func_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->funcs[idx];
}

/*
 * Reads function fn: its name ("Class::name" for a method; "{main}" for a
 * script's main code, which has none) and, a user function's, its file.
 */
static int read_func(struct php_proc *pp, struct php_func *fn, bool internal)
{
	uint64_t name_str, scope, class_str;
	struct php_func_where where;
	char *name = NULL, *cls = NULL;
	int err;

	if (!fn->addr || (fn->addr & 7))
		return -EINVAL;
	if ((err = read_u64(pp, fn->addr + PHP_FN_NAME, &name_str)) ||
	    (err = read_u64(pp, fn->addr + PHP_FN_SCOPE, &scope)))
		return err;
	if (!internal) {
		/* Its file and lines as the walk read them: else freed, and its address another's now. */
		if ((err = runtime_proc_read(pp, fn->addr + pp->bpf.l.fn_filename, &where,
					     sizeof(where))))
			return err;
		if (PHP_FUNC_CHECK(where) != fn->check)
			return -ESTALE;
		fn->first_line = where.line_start;
		if ((err = read_string(pp, where.filename, PATH_MAX_BYTES, &fn->file)))
			return err;
	}
	if (!name_str) {
		fn->name = xstrdup(internal ? "[php: internal function]" : "{main}");
		return 0;
	}
	if ((err = read_string(pp, name_str, NAME_MAX_BYTES, &name)))
		goto fail;
	if (scope && !read_u64(pp, scope + PHP_CE_NAME, &class_str) &&
	    !read_string(pp, class_str, NAME_MAX_BYTES, &cls)) {
		fn->name = xmalloc(strlen(cls) + strlen(name) + 3);
		sprintf(fn->name, "%s::%s", cls, name);
		free(cls);
		free(name);
		return 0;
	}
	fn->name = name;
	return 0;
fail:
	free(fn->file);
	fn->file = NULL;
	return err;
}

static void name_func(struct php *ph, struct php_proc *pp, const struct interp_frame *f)
{
	bool internal = f->instr & PHP_FRAME_INTERNAL;
	struct php_func *fn;

	if (find_func(pp, f->code, f->firstlineno))
		return;
	ALLOC_GROW(pp->funcs, pp->nr_funcs + 1, pp->funcs_alloc);
	fn = &pp->funcs[pp->nr_funcs];
	memset(fn, 0, sizeof(*fn));
	fn->addr = f->code;
	fn->check = f->firstlineno;
	fn->ok = pp->known && !read_func(pp, fn, internal);
	if (fn->ok)
		ph->stats.funcs++;
	else
		ph->stats.func_errors++;
	itab_insert(&pp->func_index, hash_mix(fn->addr, fn->check), pp->nr_funcs++);
}

/* Notices ---------------------------------------------------------------------- */

static void stack_seen(struct php *ph, uint32_t tgid, uint32_t gen, const struct interp_stack *st)
{
	struct php_proc *pp = get_proc(ph, tgid, gen);
	uint32_t i, n = st->n < INTERP_MAX_FRAMES ? st->n : INTERP_MAX_FRAMES;

	if (!pp->known)
		return;
	for (i = 0; i < n; i++)
		name_func(ph, pp, &st->frames[i]);
}

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct interp_notice *n = data;

	if (size >= sizeof(*n) && n->stack.n <= INTERP_MAX_FRAMES && n->stack.runtime == RUNTIME_PHP)
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

/* Files ---------------------------------------------------------------------- */

/* What the program is told of a process mapping file f at start (runtime_proc_fn). */
static void process_of(const void *file, uint64_t start, uint64_t offset, uint32_t gen, void *proc)
{
	const struct php_file *f = file;
	struct php_process *p = proc;
	uint64_t base = start - offset;

	memset(p, 0, sizeof(*p));
	p->eg = base + f->eg_rel;
	p->execute_ex_lo = base + f->execute_ex_lo_rel;
	p->execute_ex_hi = base + f->execute_ex_hi_rel;
	p->jit_vm_pc = f->jit_vm_pc_rel ? base + f->jit_vm_pc_rel : 0;
	p->jit_ra_off = f->jit_ra_off;
	p->gen = gen;
	p->known = f->known;
	p->version = f->version;
	p->l = f->l;
	p->call_lo = base + f->call_lo_rel;
	p->call_hi = base + f->call_hi_rel;
	p->text_lo = base + f->text_lo_rel;
	p->text_hi = base + f->text_hi_rel;
}

static bool file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			const char *root)
{
	struct php *ph = rt;
	struct php_file f;
	const char *why;

	(void)root;	/* everything it reads is in the file */
	if (runtime_files_find(&ph->b.files, key))
		return true;
	if (php_file_identify(fd, path, &f, &why) != 1)
		return false;
	if (!f.known)
		warning("PHP %u.%u in '%s': %s; bpfprof reads PHP 8.2 and 8.4 built without thread "
			"safety (NTS), x86-64; its samples keep their native frames",
			f.version >> 8, f.version & 0xff, path, why ? why : "not read");
	runtime_base_file_found(&ph->b, key, &f, path);
	ph->stats.files++;
	ph->stats.unknown_files += !f.known;
	return true;
}

/* Merging --------------------------------------------------------------------- */

/* The profile location of frame f: its function's, at its line. */
static uint32_t frame_location(struct profile *p, const struct php_proc *pp,
			       const struct interp_frame *f)
{
	const struct php_func *fn = find_func(pp, f->code, f->firstlineno);
	uint32_t line = f->instr & PHP_FRAME_LINE_MASK;

	if (!fn || !fn->ok)
		return profile_special_location(p, "[php: function not read]");
	if (!fn->file)
		return interp_location(p, RUNTIME_PHP, interp_function(p, fn->name, NULL, 0), 0);
	return interp_location(p, RUNTIME_PHP, interp_function(p, fn->name, fn->file, fn->first_line),
			       line ? line : fn->first_line);
}

static bool in_range(const struct profile *p, uint32_t loc, uint64_t lo, uint64_t hi)
{
	const struct prof_location *l = &p->locations[loc];

	return l->kind == FRAME_USER && l->address >= lo && l->address < hi;
}

/* Frame i is the VM's: execute_ex, or opcache's JIT code (in no file) running in its frame. */
static bool in_vm(const struct profile *p, const struct php_process *vm, const uint32_t *frames,
		  uint32_t i, uint32_t n)
{
	uint32_t j;

	for (j = i; j < n && runtime_frame_anonymous(p, frames[j]); j++)
		;
	return j < n && in_range(p, frames[j], vm->execute_ex_lo, vm->execute_ex_hi);
}

/* The PHP frames from g of one entry into the VM: up to the one it began with. */
static uint32_t put_entry(struct profile *p, const struct merge_names *nm,
			  const struct raw_interp *rr, uint32_t g, uint32_t rn, uint32_t *out,
			  uint32_t *m, uint32_t max)
{
	while (g < rn && *m < max) {
		out[(*m)++] = nm->locate(nm->ctx, p, rr->frames, g, rr->n);
		if (rr->frames[g++].instr & INTERP_FRAME_ENTRY)
			break;
	}
	return g;
}

/*
 * An entry of internal functions alone (a C function called back by C,
 * as array_map('strtoupper', ...) calls it): it ran no VM, and stands
 * above the zend_call_function that called it.
 */
static bool c_entry(const struct raw_interp *rr, uint32_t g, uint32_t rn)
{
	for (; g < rn; g++) {
		if (!(rr->frames[g].instr & PHP_FRAME_INTERNAL))
			return false;
		if (rr->frames[g].instr & INTERP_FRAME_ENTRY)
			return true;
	}
	return false;
}

/*
 * The VM's own frames at the leaf, run for the PHP frame above them: the
 * opcode handlers execute_ex (or JIT code) calls and their helpers,
 * unnamed frames of the engine's file from *from (past the kernel's and
 * what else is not user code) to execute_ex, with no other frame between
 * but JIT code's. Replaced as execute_ex is. How many; 0 if the leaf is
 * any other code.
 */
static uint32_t vm_handlers(const struct profile *p, const struct php_process *vm,
			    const uint32_t *frames, uint32_t n, uint32_t *from)
{
	uint32_t i, u, vm_mapping;

	for (u = 0; u < n && p->locations[frames[u]].kind != FRAME_USER; u++)
		;
	for (i = u; i < n && !in_range(p, frames[i], vm->execute_ex_lo, vm->execute_ex_hi); i++)
		;
	if (i == u || i >= n)
		return 0;
	vm_mapping = p->locations[frames[i]].mapping;
	for (i = u; i < n && !in_range(p, frames[i], vm->execute_ex_lo, vm->execute_ex_hi); i++) {
		const struct prof_location *l = &p->locations[frames[i]];

		if (runtime_frame_anonymous(p, frames[i]))
			continue;	/* JIT code, which runs in execute_ex's frame */
		if (l->kind != FRAME_USER || l->nlines || l->label || l->mapping != vm_mapping ||
		    !vm_mapping)
			return 0;
	}
	*from = u;
	return i - u;
}

uint32_t php_merge_frames(struct profile *p, const struct php_process *vm,
			  const struct raw_interp *rr, const struct merge_names *nm,
			  const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			  uint32_t *vms, uint32_t *unmatched)
{
	uint32_t m = 0, g = 0, i = 0, from, skip;
	uint32_t rn = rr->n < INTERP_MAX_FRAMES ? rr->n : INTERP_MAX_FRAMES;

	*vms = *unmatched = 0;
	if (rn && !(rr->frames[0].instr & PHP_FRAME_INTERNAL) &&
	    (skip = vm_handlers(p, vm, frames, n, &from)) && from + skip <= max) {
		for (; i < from; i++)
			out[m++] = frames[i];
		i += skip;
	}
	while (i < n && m < max) {
		if (g < rn && c_entry(rr, g, rn) && vm->call_hi &&
		    in_range(p, frames[i], vm->call_lo, vm->call_hi)) {
			/* Above the C that called it: its PHP name, then zend_call_function. */
			g = put_entry(p, nm, rr, g, rn, out, &m, max);
			if (m < max)
				out[m++] = frames[i];
			i++;
			continue;
		}
		if (g >= rn || !in_vm(p, vm, frames, i, n)) {
			out[m++] = frames[i++];
			continue;
		}
		/* JIT code and execute_ex: this entry's frames, newest first, in their place. */
		while (runtime_frame_anonymous(p, frames[i]))
			i++;
		i++;
		(*vms)++;
		g = put_entry(p, nm, rr, g, rn, out, &m, max);
	}
	if (!*vms)
		return m;
	/* Frames whose VM entries the native stack does not show (cut short): at its root. */
	*unmatched = rn - g;
	for (; g < rn && m < max; g++)
		out[m++] = nm->locate(nm->ctx, p, rr->frames, g, rr->n);
	return m;
}

/* merge_names.locate: a frame of process ctx (a struct php_proc). */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	(void)n;
	return frame_location(p, ctx, &frames[g]);
}

static uint32_t merge(void *rt, struct profile *p, uint32_t tgid, const struct raw_interp *rr,
		      uint32_t *frames, uint32_t n, uint32_t max)
{
	struct php *ph = rt;
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES], m, vms, unmatched;
	struct merge_names nm = { .locate = locate };
	const struct php_proc *pp;

	pthread_mutex_lock(&ph->b.lock);
	pp = find_proc(ph, tgid);
	if (!pp || !pp->known) {
		pthread_mutex_unlock(&ph->b.lock);
		return n;
	}
	if (max > ARRAY_SIZE(out))
		max = ARRAY_SIZE(out);
	nm.ctx = (void *)pp;
	m = php_merge_frames(p, &pp->bpf, rr, &nm, frames, n, out, max, &vms, &unmatched);
	if (!vms) {
		/* No VM on the native stack: the thread runs no PHP now, whatever its globals say. */
		ph->stats.no_vm_frame++;
		pthread_mutex_unlock(&ph->b.lock);
		return n;
	}
	ph->stats.unmatched += unmatched;
	ph->stats.merged++;
	pthread_mutex_unlock(&ph->b.lock);
	memcpy(frames, out, m * sizeof(*out));
	return m;
}

/* The runtime interface (runtime.h) --------------------------------------------- */

static const struct runtime_info php_info = {
	.name = "php",
	.kind = RUNTIME_PHP,
	.option = "php",
	.what = "PHP",
	.frame_type = "php",
	.versions = "PHP 8.2 and 8.4",
	.builds = "the CLI, php-fpm and php-cgi built without thread safety (NTS, Debian's and "
		  "php-fpm's default), stripped or not, opcache's JIT on (tracing or function) or off",
	.not_read = "7, 8.0, 8.1 and 8.3; thread-safe (ZTS) builds (warned: \"cannot read\"); PHP "
		    "embedded as a library (`libphp.so`, Apache's `mod_php`)",
	.layout = "a row by version (the binary's `X-Powered-By` string) in "
		  "`src/runtime/php_file.c`; `executor_globals` and `execute_ex` from `.dynsym`, no "
		  "debug information needed",
	.tested = "`e2e/php`: Debian's 8.2 CLI, JIT off and on, against Excimer in the same "
		  "process; trixie's 8.4 in the newer root; `e2e/php_fpm`: nginx and php-fpm under "
		  "`ab`, Composer",
	/* Violet: PHP's own elephant, apart from the native reds and the other runtimes. */
	.colour = { { 120, 60, 180 }, { 50, 40, 1 }, { 60, 40, 1 } },
};

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	static const struct runtime_desc kind = {
		.what = "PHP",
		.file_size = sizeof(struct php_file),
		.proc_size = sizeof(struct php_proc),
		.release = release_proc,
		.process_of = process_of,
		.proc_value_size = sizeof(struct php_process),
		.on_notice = on_notice,
		.file_opened = file_opened,
		.runtime = RUNTIME_PHP,
		.merge = merge,
	};
	struct runtime_maps m;

	sampler_runtime_maps(sampler, &php_info, &m);
	return runtime_base_new(sizeof(struct php), &kind, &m, gen, ctx);
}

static void rt_stats(void *rt, struct run_figures *f)
{
	struct php *ph = rt;

	pthread_mutex_lock(&ph->b.lock);
	*RUN_FIGURES_OF(f, RUNTIME_PHP, struct php_stats) = ph->stats;
	pthread_mutex_unlock(&ph->b.lock);
}

/* PHP processes: how many samples got their PHP frames, and why others did not. */
static void summarize_php(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_PHP(END)];
	const struct php_stats *ph = RUN_FIGURES_OF(f, RUNTIME_PHP, const struct php_stats);

	if (!(st->runtimes_on & 1u << RUNTIME_PHP) || !t[STAT_PHP(SAMPLES)])
		return;
	fprintf(stderr, "bpfprof: php: %llu samples of PHP processes, %llu with their PHP frames "
		"(cut: %llu at %u frames, %llu at an unreadable frame); without: %llu with no frame "
		"running, %llu of a version or build not read; %llu functions named, %llu not "
		"readable\n",
		(unsigned long long)t[STAT_PHP(SAMPLES)],
		(unsigned long long)(end[INTERP_WALK_WHOLE] + end[INTERP_WALK_DEPTH] + end[INTERP_WALK_FAULT]),
		(unsigned long long)end[INTERP_WALK_DEPTH], INTERP_MAX_FRAMES,
		(unsigned long long)end[INTERP_WALK_FAULT], (unsigned long long)t[STAT_PHP(NO_FRAME)],
		(unsigned long long)t[STAT_PHP(UNKNOWN_VERSION)], (unsigned long long)ph->funcs,
		(unsigned long long)ph->func_errors);
	debug("php: %u engine files (%u not read); %llu samples merged, %llu frames whose VM entry "
	      "the native stack did not show, %llu samples with no VM on it", ph->files,
	      ph->unknown_files, (unsigned long long)ph->merged, (unsigned long long)ph->unmatched,
	      (unsigned long long)ph->no_vm_frame);
}

const struct runtime_ops php_runtime = {
	.info = &php_info,
	.start = start,
	.file_opened = runtime_file_opened,
	.process_maps = runtime_process_maps,
	.take_notices = runtime_take_notices,
	.merge = runtime_merge,
	.after_drain = runtime_after_drain,
	.renumber = runtime_renumber_none,
	.stats = rt_stats,
	.summarize = summarize_php,
	.free = runtime_free,
};
