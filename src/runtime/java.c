// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * Java's frames in userspace: which files hold a HotSpot JVM (libjvm.so,
 * its layout read from its own vmStructs: java_file.c), told to the BPF
 * program, which walks the frames (bpf/java_walk.bpf.h); every Java stack
 * named while its process lives (java_names.c: methods, lines, the methods
 * C1 and C2 inlined at a compiled frame's pc); and each sample's Java
 * frames put in place of the native frames they stand for, the return
 * addresses into the code cache the walk left in the native stack.
 *
 * A Java frame is "pkg.Class.method (File.java:FIRST)", FIRST the method's
 * first line; pprof and callgrind carry the line of the frame's bytecode.
 * A compiled frame is its inlined methods, innermost first, each a frame
 * of its own. The VM's stubs (the call stub, adapters) are "[jvm: NAME]".
 */
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/java_file.h"
#include "bpfprof/java_merge.h"
#include "bpfprof/java_names.h"
#include "bpfprof/runtime.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/util.h"

/* A method of a process, as read when a stack first showed it. */
struct jv_method {
	uint64_t addr;		/* its Method* */
	bool ok;
	char *name;		/* "pkg.Class.method" */
	char *file;		/* "Class.java"; NULL: none said */
	uint32_t first;		/* its first line (at bytecode 0); 0: none */
};

/* A (method, bytecode index) -> line, read once. */
struct jv_line {
	uint64_t method;
	uint32_t bci, line;
};

/* A compiled frame (nmethod, pc offset, compile id): its scopes, innermost first. */
struct jv_compiled {
	uint64_t nmethod;
	uint32_t pos, compile_id;
	uint32_t first, n;	/* in scopes; n 0: not readable */
};

/* A stub's name, by its blob. */
struct jv_stub {
	uint64_t blob;
	char *name;		/* NULL: not readable */
};

struct jv_proc {
	struct runtime_proc base;	/* first: runtime_procs holds it */
	bool known;
	struct java_process bpf;
	const struct java_vm *vm;	/* its file's layout; set when known */
	struct jv_method *methods;
	uint32_t nr_methods, methods_alloc;
	struct itab method_index;
	struct jv_line *lines;
	uint32_t nr_lines, lines_alloc;
	struct itab line_index;
	struct jv_compiled *compiled;
	uint32_t nr_compiled, compiled_alloc;
	struct itab compiled_index;
	struct java_scope *scopes;
	uint32_t nr_scopes, scopes_alloc;
	struct jv_stub *stubs;
	uint32_t nr_stubs, stubs_alloc;
	struct itab stub_index;
	struct java_method *read;	/* where a method is read into (big: its line table) */
};

struct java_stats {
	uint32_t files, unknown_files;	/* files holding a JVM; of them, of a layout not read */
	uint64_t methods, method_errors;	/* methods named; not readable (freed, unloaded) */
	uint64_t compiled, compiled_errors;	/* compiled frames named; their nmethod gone first */
	uint64_t inlined;		/* frames of inlined methods shown */
	uint64_t merged;		/* samples whose Java frames were merged with native ones */
	uint64_t unplaced;		/* samples whose Java frames' native places did not hold */
};

/* The layouts of the JVM files found, by java_file.vm. */
struct jv_vms {
	struct java_vm **vms;
	uint32_t nr, alloc;
};

struct java {
	struct runtime_base b;	/* first; its files struct java_file, its processes struct jv_proc */
	struct jv_vms vms;
	bool *vm_failed;	/* by file: its layout cannot be read (said once) */
	struct java_stats stats;
};

/* Processes ------------------------------------------------------------------ */

static void release_proc(struct runtime_proc *p)
{
	struct jv_proc *pp = (struct jv_proc *)p;
	uint32_t i;

	for (i = 0; i < pp->nr_methods; i++) {
		free(pp->methods[i].name);
		free(pp->methods[i].file);
	}
	for (i = 0; i < pp->nr_stubs; i++)
		free(pp->stubs[i].name);
	free(pp->methods);
	free(pp->lines);
	free(pp->compiled);
	free(pp->scopes);
	free(pp->stubs);
	free(pp->read);
	itab_release(&pp->method_index);
	itab_release(&pp->line_index);
	itab_release(&pp->compiled_index);
	itab_release(&pp->stub_index);
}

static struct jv_proc *find_proc(const struct java *jv, uint32_t tgid)
{
	return (struct jv_proc *)runtime_procs_find(&jv->b.procs, tgid);
}

/* A process's state; what the program knows of it read until its layout is known. */
static struct jv_proc *get_proc(struct java *jv, uint32_t tgid, uint32_t gen)
{
	bool made;
	struct jv_proc *pp = (struct jv_proc *)runtime_procs_get(&jv->b.procs, tgid, gen, &made);

	if (!pp->known && !bpf_map_lookup_elem(jv->b.procs_fd, &tgid, &pp->bpf) &&
	    pp->bpf.gen == gen && pp->bpf.vm < jv->vms.nr) {
		pp->vm = jv->vms.vms[pp->bpf.vm];
		pp->known = pp->vm->file.l.known && pp->vm->o.known;
	}
	return pp;
}

/*
 * The program asks for the layout of a process's libjvm.so (an empty
 * notice): its fields' offsets read from the process, once per file, and
 * the file told to the program again, now known.
 */
static void layout_wanted(struct java *jv, uint32_t tgid, uint32_t gen)
{
	struct jv_proc *pp = get_proc(jv, tgid, gen);
	struct java_file *kept;
	struct java_vm *vm;
	int err;

	if (pp->known || pp->bpf.gen != gen || pp->bpf.vm >= jv->vms.nr || jv->vm_failed[pp->bpf.vm])
		return;
	vm = jv->vms.vms[pp->bpf.vm];
	if (!vm->file.l.known) {
		err = java_vm_read_offsets(vm, runtime_proc_read, pp, pp->bpf.base);
		if (err == -EAGAIN)
			return;
		if (err || !vm->file.l.known) {
			jv->vm_failed[pp->bpf.vm] = true;
			warning("Java (pid %u): its JVM's layout cannot be read (%s; bpfprof reads "
				"OpenJDK 17, 21 and 25, x86-64); its samples keep their native frames", tgid,
				err ? strerror(-err) : "a field its walk needs is missing");
			return;
		}
		jv->stats.unknown_files--;
		if (bpf_map_update_elem(jv->b.files_fd, &pp->bpf.file, &vm->file, BPF_ANY))
			debug("java: cannot tell the program of a JVM's layout: %s", strerror(errno));
		kept = runtime_files_find(&jv->b.files, &pp->bpf.file);
		if (kept)
			*kept = vm->file;
	}
	pp->known = vm->o.known;
}

/* Naming --------------------------------------------------------------------- */

static bool method_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct jv_proc *)owner)->methods[idx].addr == *(const uint64_t *)key;
}

static const struct jv_method *find_method(const struct jv_proc *pp, uint64_t addr)
{
	uint32_t idx = itab_find(&pp->method_index, hash_u64(addr), method_eq, pp, &addr);

	return idx == ITAB_NONE ? NULL : &pp->methods[idx];
}

static bool line_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct jv_line *l = &((const struct jv_proc *)owner)->lines[idx], *k = key;

	return l->method == k->method && l->bci == k->bci;
}

static const struct jv_line *find_line(const struct jv_proc *pp, uint64_t method, uint32_t bci)
{
	struct jv_line k = { method, bci, 0 };
	uint32_t idx = itab_find(&pp->line_index, hash_mix(method, bci), line_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->lines[idx];
}

/* Method addr read into pp->read: 0, or a negative errno. */
static int read_method(struct jv_proc *pp, uint64_t addr)
{
	if (!pp->read)
		pp->read = xmalloc(sizeof(*pp->read));
	return java_method_read(pp->vm, runtime_proc_read, pp, addr, pp->read);
}

/* A method read once: its name ("pkg.Class.method"), file and first line. */
static void name_method(struct java *jv, struct jv_proc *pp, uint64_t addr)
{
	struct jv_method *m;
	struct strbuf sb;

	if (find_method(pp, addr))
		return;
	ALLOC_GROW(pp->methods, pp->nr_methods + 1, pp->methods_alloc);
	m = &pp->methods[pp->nr_methods];
	memset(m, 0, sizeof(*m));
	m->addr = addr;
	if (!read_method(pp, addr)) {
		strbuf_init(&sb);
		strbuf_addf(&sb, "%s.%s", pp->read->klass, pp->read->name);
		m->ok = true;
		m->name = strbuf_detach(&sb);
		m->file = pp->read->file[0] ? xstrdup(pp->read->file) : NULL;
		m->first = java_method_line(pp->vm, pp->read, 0);
		jv->stats.methods++;
	} else {
		jv->stats.method_errors++;
	}
	itab_insert(&pp->method_index, hash_u64(addr), pp->nr_methods++);
}

/* The line of method at bytecode index bci, read once (0: not known). */
static void name_line(struct jv_proc *pp, uint64_t method, uint32_t bci)
{
	struct jv_line *l;
	uint32_t line = 0;

	if (find_line(pp, method, bci))
		return;
	if (bci != JAVA_BCI_NONE && !read_method(pp, method))
		line = java_method_line(pp->vm, pp->read, bci);
	ALLOC_GROW(pp->lines, pp->nr_lines + 1, pp->lines_alloc);
	l = &pp->lines[pp->nr_lines];
	l->method = method;
	l->bci = bci;
	l->line = line;
	itab_insert(&pp->line_index, hash_mix(method, bci), pp->nr_lines++);
}

static bool compiled_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct jv_compiled *c = &((const struct jv_proc *)owner)->compiled[idx], *k = key;

	return c->nmethod == k->nmethod && c->pos == k->pos && c->compile_id == k->compile_id;
}

static uint64_t compiled_hash(uint64_t nmethod, uint32_t pos, uint32_t compile_id)
{
	return hash_mix(nmethod, (uint64_t)pos << 32 | compile_id);
}

static const struct jv_compiled *find_compiled(const struct jv_proc *pp, uint64_t nmethod,
					       uint32_t pos, uint32_t compile_id)
{
	struct jv_compiled k = { .nmethod = nmethod, .pos = pos, .compile_id = compile_id };
	uint32_t idx = itab_find(&pp->compiled_index, compiled_hash(nmethod, pos, compile_id),
				 compiled_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->compiled[idx];
}

/* A compiled frame read once: the methods at its pc, innermost first, and their lines. */
static void name_compiled(struct java *jv, struct jv_proc *pp, uint64_t nmethod, uint32_t pos,
			  uint32_t compile_id)
{
	struct java_scope scopes[JAVA_MAX_SCOPES];
	struct jv_compiled *c;
	int n, i;

	if (find_compiled(pp, nmethod, pos, compile_id))
		return;
	n = java_compiled_scopes(pp->vm, runtime_proc_read, pp, nmethod, pos, compile_id, scopes,
				 JAVA_MAX_SCOPES);
	ALLOC_GROW(pp->compiled, pp->nr_compiled + 1, pp->compiled_alloc);
	c = &pp->compiled[pp->nr_compiled];
	c->nmethod = nmethod;
	c->pos = pos;
	c->compile_id = compile_id;
	c->first = pp->nr_scopes;
	c->n = n > 0 ? n : 0;
	if (n > 0) {
		jv->stats.compiled++;
		ALLOC_GROW(pp->scopes, pp->nr_scopes + n, pp->scopes_alloc);
		memcpy(&pp->scopes[pp->nr_scopes], scopes, n * sizeof(*scopes));
		pp->nr_scopes += n;
		for (i = 0; i < n; i++) {
			name_method(jv, pp, scopes[i].method);
			name_line(pp, scopes[i].method, scopes[i].bci);
		}
	} else {
		jv->stats.compiled_errors++;
	}
	itab_insert(&pp->compiled_index, compiled_hash(nmethod, pos, compile_id), pp->nr_compiled++);
}

static bool stub_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct jv_proc *)owner)->stubs[idx].blob == *(const uint64_t *)key;
}

static const struct jv_stub *find_stub(const struct jv_proc *pp, uint64_t blob)
{
	uint32_t idx = itab_find(&pp->stub_index, hash_u64(blob), stub_eq, pp, &blob);

	return idx == ITAB_NONE ? NULL : &pp->stubs[idx];
}

static void name_stub(struct jv_proc *pp, uint64_t blob)
{
	struct jv_stub *s;
	char name[128];

	if (find_stub(pp, blob))
		return;
	ALLOC_GROW(pp->stubs, pp->nr_stubs + 1, pp->stubs_alloc);
	s = &pp->stubs[pp->nr_stubs];
	s->blob = blob;
	s->name = java_blob_name(pp->vm, runtime_proc_read, pp, blob, name, sizeof(name)) ? NULL :
		  xstrdup(name);
	itab_insert(&pp->stub_index, hash_u64(blob), pp->nr_stubs++);
}

/* Notices ---------------------------------------------------------------------- */

/* A new stack: its methods, lines, compiled frames' scopes and stubs read. */
static void stack_seen(struct java *jv, uint32_t tgid, uint32_t gen, const struct interp_stack *st)
{
	struct jv_proc *pp = get_proc(jv, tgid, gen);
	uint32_t i, n = st->n < INTERP_MAX_FRAMES ? st->n : INTERP_MAX_FRAMES;

	if (!pp->known)
		return;
	for (i = 0; i < n; i++) {
		const struct interp_frame *f = &st->frames[i];
		uint32_t pos = f->instr & JAVA_FRAME_POS_MASK;

		switch (JAVA_FRAME_KIND_OF(f->instr)) {
		case JAVA_INTERPRETED:
			name_method(jv, pp, f->code);
			name_line(pp, f->code, pos);
			break;
		case JAVA_COMPILED:
			name_compiled(jv, pp, f->code, pos, f->firstlineno);
			break;
		default:
			name_stub(pp, f->code);
			break;
		}
	}
}

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct interp_notice *n = data;

	if (size < sizeof(*n) || n->stack.n > INTERP_MAX_FRAMES || n->stack.runtime != RUNTIME_JAVA)
		return 0;
	if (!n->stack.n)
		layout_wanted(ctx, n->tgid, n->gen);
	else
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

/* Files ---------------------------------------------------------------------- */

/* What the program is told of a process mapping file f at start (runtime_proc_fn). */
static void process_of(const void *file, uint64_t start, uint64_t offset, uint32_t gen, void *proc)
{
	const struct java_file *f = file;
	struct java_process *p = proc;

	memset(p, 0, sizeof(*p));
	p->gen = gen;
	p->known = f->l.known;
	p->version = f->version;
	p->vm = f->vm;
	p->file = f->file;
	p->base = start - offset;
	p->l = f->l;
}

static bool is_libjvm(const char *path)
{
	const char *base = strrchr(path, '/');

	return !strcmp(base ? base + 1 : path, "libjvm.so");
}

static bool file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			const char *root)
{
	struct java *jv = rt;
	struct java_vm *vm;
	Elf *elf;
	int err;

	(void)root;	/* everything it reads is in the file */
	if (runtime_files_find(&jv->b.files, key))
		return true;
	if (!is_libjvm(path) || elf_version(EV_CURRENT) == EV_NONE ||
	    !(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return false;
	vm = xcalloc(1, sizeof(*vm));
	err = java_file_read(elf, fd, vm);
	elf_end(elf);
	if (err == -ENOENT) {
		free(vm);
		return false;
	}
	/* Its fields' offsets are read from its first process (layout_wanted). */
	if (err)
		warning("Java in '%s': a JVM whose layout bpfprof cannot read (%s; it reads OpenJDK "
			"17, 21 and 25, x86-64); its samples keep their native frames", path, strerror(-err));
	vm->file.vm = jv->vms.nr;
	vm->file.file = *key;
	vm->file.l.known = 0;
	ALLOC_GROW(jv->vms.vms, jv->vms.nr + 1, jv->vms.alloc);
	jv->vm_failed = xrealloc(jv->vm_failed, jv->vms.alloc * sizeof(*jv->vm_failed));
	jv->vm_failed[jv->vms.nr] = err != 0;
	jv->vms.vms[jv->vms.nr++] = vm;
	runtime_base_file_found(&jv->b, key, &vm->file, path);
	jv->stats.files++;
	jv->stats.unknown_files += !vm->file.l.known;
	return true;
}

/* Merging --------------------------------------------------------------------- */

/* A method's frame at line (the method not read: said so). */
static uint32_t method_location(struct profile *p, const struct jv_proc *pp, uint64_t method,
				uint32_t bci)
{
	const struct jv_method *m = find_method(pp, method);
	const struct jv_line *l;

	if (!m || !m->ok)
		return profile_special_location(p, "[java: method not read]");
	l = find_line(pp, method, bci);
	return interp_location(p, RUNTIME_JAVA,
			       interp_function(p, m->name, m->file ? m->file : "", m->first),
			       l && l->line ? l->line : m->first);
}

/*
 * Java frame f's locations into out (innermost first), at most max:
 * a compiled frame's inlined methods each, an interpreted frame's
 * method, a stub's name. How many.
 */
static uint32_t frame_locations(struct java *jv, struct profile *p, const struct jv_proc *pp,
				const struct interp_frame *f, uint32_t *out, uint32_t max)
{
	uint32_t pos = f->instr & JAVA_FRAME_POS_MASK, i, n = 0;
	const struct jv_compiled *c;
	const struct jv_stub *s;
	struct strbuf label;

	if (!max)
		return 0;
	switch (JAVA_FRAME_KIND_OF(f->instr)) {
	case JAVA_INTERPRETED:
		out[0] = method_location(p, pp, f->code, pos);
		return 1;
	case JAVA_COMPILED:
		c = find_compiled(pp, f->code, pos, f->firstlineno);
		if (!c || !c->n) {
			out[0] = profile_special_location(p, "[java: compiled method freed before it was named]");
			return 1;
		}
		for (i = 0; i < c->n && n < max; i++)
			out[n++] = method_location(p, pp, pp->scopes[c->first + i].method,
						   pp->scopes[c->first + i].bci);
		jv->stats.inlined += n - 1;
		return n;
	default:
		s = find_stub(pp, f->code);
		strbuf_init(&label);
		strbuf_addf(&label, "[jvm: %s]", s && s->name ? s->name : "stub");
		out[0] = profile_special_location(p, label.buf);
		strbuf_release(&label);
		return 1;
	}
}

uint32_t java_merge_frames(struct profile *p, const struct raw_interp *ri, uint32_t user_base,
			   const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			   uint32_t *out, uint32_t max)
{
	uint32_t rn = ri->n < INTERP_MAX_FRAMES ? ri->n : INTERP_MAX_FRAMES, m = 0, i, g;

	/* Each frame's place must be a user frame, in order: else the stacks do not go together. */
	for (g = 0; g < rn; g++) {
		uint32_t at = JAVA_FRAME_AT_OF(ri->frames[g].instr);

		if (user_base + at >= n || (g && at <= JAVA_FRAME_AT_OF(ri->frames[g - 1].instr)))
			return 0;
	}
	for (i = 0, g = 0; i < n && m < max; i++) {
		if (g < rn && i == user_base + JAVA_FRAME_AT_OF(ri->frames[g].instr)) {
			if (nm->locations)
				m += nm->locations(nm->ctx, p, ri->frames, g, rn, out + m, max - m);
			else
				out[m++] = nm->locate(nm->ctx, p, ri->frames, g, rn);
			g++;
		} else {
			out[m++] = frames[i];
		}
	}
	return m;
}

/* What names a process's Java frames in a merge. */
struct jv_merge {
	struct java *jv;
	const struct jv_proc *pp;
};

/* merge_names.locations: frame_locations of process ctx. */
static uint32_t locations(void *ctx, struct profile *p, const struct interp_frame *frames,
			  uint32_t g, uint32_t n, uint32_t *out, uint32_t max)
{
	struct jv_merge *jm = ctx;

	(void)n;
	return frame_locations(jm->jv, p, jm->pp, &frames[g], out, max);
}

/* merge_names.locate: its first location alone. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	uint32_t loc = 0;

	locations(ctx, p, frames, g, n, &loc, 1);
	return loc;
}

/*
 * frames[0..n) with each Java frame in place of the native frame it stands
 * for: the user stack is the last rs->ustack.n of them, and each Java
 * frame says which of its frames it is (JAVA_FRAME_AT).
 */
static uint32_t merge(void *rt, struct profile *p, const struct raw_sample *rs, uint32_t *frames,
		      uint32_t n, uint32_t max)
{
	struct java *jv = rt;
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES * 4], m;
	const struct raw_interp *ri = &rs->interp;
	struct jv_merge jm = { jv, NULL };
	struct merge_names nm = { .locate = locate, .locations = locations, .ctx = &jm };

	if (!ri->n || ri->runtime != RUNTIME_JAVA)
		return n;
	pthread_mutex_lock(&jv->b.lock);
	jm.pp = find_proc(jv, rs->tgid);
	if (!jm.pp || !jm.pp->known) {
		pthread_mutex_unlock(&jv->b.lock);
		return n;
	}
	if (max > ARRAY_SIZE(out))
		max = ARRAY_SIZE(out);
	m = java_merge_frames(p, ri, rs->ustack.n <= n ? n - rs->ustack.n : n, &nm, frames, n, out,
			      max);
	if (!m) {
		jv->stats.unplaced++;
		pthread_mutex_unlock(&jv->b.lock);
		return n;
	}
	jv->stats.merged++;
	pthread_mutex_unlock(&jv->b.lock);
	memcpy(frames, out, m * sizeof(*out));
	return m;
}

/* The runtime interface (runtime.h) --------------------------------------------- */

static const struct runtime_info java_info = {
	.name = "java",
	.kind = RUNTIME_JAVA,
	.option = "java",
	.what = "Java",
	.frame_type = "jvm",
	.jit_library = "libjvm.so",
	.jit_comm = "java",
	.jit_hint = "a JVM's compiled code; 'jcmd PID Compiler.perfmap' writes /tmp/perf-PID.map "
		    "of its code as it is then, which bpfprof reads (or "
		    "-XX:+UnlockDiagnosticVMOptions -XX:+DumpPerfMapAtExit, or perf-map-agent), "
		    "-XX:+PreserveFramePointer keeps its stacks whole",
	.versions = "OpenJDK 17, 21 and 25",
	.builds = "HotSpot's `libjvm.so` as Debian and Temurin ship it, in a container too: "
		  "interpreted, C1 and C2 compiled (each inlined method a frame), the VM's stubs; "
		  "no agent, flag or restart",
	.not_read = "JVMs that are not HotSpot (OpenJ9, GraalVM native images; their native "
		    "frames only); HotSpot before 17; 18 to 20 and 22 to 24 are not tested",
	.layout = "the JVM's description of itself for debuggers: its tables' names, sizes and "
		  "statics (`gHotSpotVMStructs` and its siblings) from `libjvm.so`, the fields' "
		  "offsets once from a running JVM (`src/runtime/java_file.c`); no debug information "
		  "needed",
	.tested = "`e2e/java`: Debian's 17; 21 and 25 from Debian's trixie, in a root built once "
		  "per machine (`tests/tools/newer_root.sh`), compiled and `-Xint`",
	/* Java's frames in greens, as async-profiler draws them. */
	.colour = { { 50, 60, 1 }, { 170, 60, 0 }, { 50, 60, 2 } },
};

static void release(struct java *jv)
{
	uint32_t i;

	for (i = 0; i < jv->vms.nr; i++)
		free(jv->vms.vms[i]);
	free(jv->vms.vms);
	free(jv->vm_failed);
}

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	static const struct runtime_desc kind = {
		.what = "Java",
		.file_size = sizeof(struct java_file),
		.proc_size = sizeof(struct jv_proc),
		.release = release_proc,
		.process_of = process_of,
		.proc_value_size = sizeof(struct java_process),
		.on_notice = on_notice,
		.file_opened = file_opened,
		.runtime = RUNTIME_JAVA,
	};
	struct runtime_maps m;

	sampler_runtime_maps(sampler, &java_info, &m);
	return runtime_base_new(sizeof(struct java), &kind, &m, gen, ctx);
}

static void rt_stats(void *rt, struct run_figures *f)
{
	struct java *jv = rt;

	pthread_mutex_lock(&jv->b.lock);
	*RUN_FIGURES_OF(f, RUNTIME_JAVA, struct java_stats) = jv->stats;
	pthread_mutex_unlock(&jv->b.lock);
}

/* JVM processes: how many samples got their Java frames, and why others did not. */
static void summarize_java(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_JAVA(END)];
	const struct java_stats *jv = RUN_FIGURES_OF(f, RUNTIME_JAVA, const struct java_stats);

	if (!(st->runtimes_on & 1u << RUNTIME_JAVA) ||
	    !(t[STAT_JAVA(SAMPLES)] + t[STAT_JAVA(NOT_READY)] + t[STAT_JAVA(UNKNOWN_VERSION)]))
		return;
	fprintf(stderr, "bpfprof: java: %llu samples in Java code, %llu with their Java frames "
		"whole (cut: %llu at %u frames, %llu at a frame not readable: %llu in no code blob, "
		"%llu leading nowhere); without: %llu before the JVM's code cache was read, %llu of "
		"a JVM not read; %llu methods and %llu compiled frames named (%llu inlined frames "
		"shown), %llu and %llu freed before they could be\n",
		(unsigned long long)t[STAT_JAVA(SAMPLES)], (unsigned long long)end[INTERP_WALK_WHOLE],
		(unsigned long long)end[INTERP_WALK_DEPTH], INTERP_MAX_FRAMES,
		(unsigned long long)end[INTERP_WALK_FAULT], (unsigned long long)t[STAT_JAVA(NO_BLOB)],
		(unsigned long long)t[STAT_JAVA(BAD_FRAME)], (unsigned long long)t[STAT_JAVA(NOT_READY)],
		(unsigned long long)t[STAT_JAVA(UNKNOWN_VERSION)], (unsigned long long)jv->methods,
		(unsigned long long)jv->compiled, (unsigned long long)jv->inlined,
		(unsigned long long)jv->method_errors, (unsigned long long)jv->compiled_errors);
	debug("java: %u JVM files (%u not read); %llu samples merged, %llu whose Java frames' "
	      "places did not hold; %llu Java frames walked", jv->files, jv->unknown_files,
	      (unsigned long long)jv->merged, (unsigned long long)jv->unplaced,
	      (unsigned long long)t[STAT_JAVA(FRAMES)]);
}

static void rt_free(void *rt)
{
	struct java *jv = rt;

	/* Its namer stopped first: it reads the layouts. */
	runtime_base_release(&jv->b);
	release(jv);
	free(jv);
}

const struct runtime_ops java_runtime = {
	.info = &java_info,
	.start = start,
	.file_opened = runtime_file_opened,
	.process_maps = runtime_process_maps,
	.take_notices = runtime_take_notices,
	.merge = merge,
	.after_drain = runtime_after_drain,
	.renumber = runtime_renumber_none,
	.stats = rt_stats,
	.summarize = summarize_java,
	.free = rt_free,
};
