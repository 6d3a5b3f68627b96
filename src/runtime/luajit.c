// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LuaJIT's frames in userspace: which files hold a LuaJIT VM (their layout
 * told to the BPF program, which walks the frames: bpf/luajit.bpf.h), the
 * prototypes of every Lua stack named while their process lives, and each
 * sample's Lua frames put in place of the VM's native frame that ran them.
 *
 *   files      a file holding the VM (libluajit-5.1.so, luajit) by the
 *              kernel's identity of it, and its layout
 *   processes  per tgid: where its VM's code is, its prototypes and the
 *              names its call sites give
 *   locations  (function, line) -> profile location (interp_location)
 *
 * A Lua function is named as LuaJIT's own debug information names it: by
 * the call instruction of a caller ("alpha", "M.serve", "M:method"),
 * "main chunk" for a chunk, "function" where nothing says. One name for a
 * prototype, the first a call site gave it, whatever calls it later: a
 * flame graph would split its total by call site otherwise. The frame is
 * NAME (FILE:FIRSTLINE), and pprof and callgrind carry the line running.
 */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "bpfprof/luajit_ffnames.h"
#include "bpfprof/luajit_file.h"
#include "bpfprof/luajit_proto.h"
#include "bpfprof/luajit_trace.h"
#include "bpfprof/interp_names.h"
#include "bpfprof/runtime.h"
#include "bpfprof/luajit_merge.h"
#include "bpfprof/runtime_shared.h"
#include "bpfprof/util.h"

/* A prototype of a process, as read (or not) when a stack first showed it. */
struct lj_proto {
	uint64_t addr;
	uint32_t firstline;	/* as the program read it: a reused address differs */
	bool ok;
	bool name_fixed;	/* a profile named it: name no longer changes */
	const char *name;	/* the first name a call site gave it (an lj_call's); NULL: none */
	struct lua_proto_info info;
};

/* What the call instruction at pos of prototype caller names the function it calls. */
struct lj_call {
	uint64_t caller;
	uint32_t pos;
	char *name;		/* NULL: it does not say */
};

/* Where in a trace a stack was: the frames there, read once (failures too). */
struct lj_trace_at {
	uint64_t trace;
	uint32_t traceno, ofs;
	bool ok;
	struct lua_trace_position pos;
};

struct lj_proc {
	struct runtime_proc base;	/* first: runtime_procs holds it */
	bool known;		/* bpf holds the program's view of it */
	struct luajit_process bpf;
	struct lj_proto *protos;
	uint32_t nr_protos, protos_alloc;
	struct itab proto_index;
	struct lj_call *calls;
	uint32_t nr_calls, calls_alloc;
	struct itab call_index;
	struct lj_trace_at *traces;
	uint32_t nr_traces, traces_alloc;
	struct itab trace_index;
};

struct luajit_stats {
	uint32_t files, unknown_files;	/* files holding a LuaJIT VM; of them, of a layout not read */
	uint64_t protos, proto_errors;	/* prototypes named; not readable (freed, bad, gone) */
	uint64_t names;			/* call sites that named the function they call */
	uint64_t trace_positions;	/* places in traces whose inlined frames were read */
	uint64_t trace_errors;		/* not readable (flushed, not a constant function) */
	uint64_t merged;		/* samples whose Lua frames were merged with native ones */
	uint64_t unmatched;		/* frames of VM entries not on the native stack: put at its root */
	uint64_t no_vm_frame;		/* samples whose native stack showed no VM: Lua frames left out */
};

struct luajit {
	struct runtime_base b;	/* first; its files struct luajit_file, its processes struct lj_proc */
	struct luajit_stats stats;
	struct luajit_ffnames *ffnames;	/* by luajit_file.ffnames - 1 */
	uint32_t nr_ffnames, ffnames_alloc;
};

/* Processes ------------------------------------------------------------------ */

static void release_proc(struct runtime_proc *p)
{
	struct lj_proc *pp = (struct lj_proc *)p;
	uint32_t i;

	for (i = 0; i < pp->nr_protos; i++)
		luajit_proto_release(&pp->protos[i].info);
	for (i = 0; i < pp->nr_calls; i++)
		free(pp->calls[i].name);
	free(pp->protos);
	free(pp->calls);
	free(pp->traces);
	itab_release(&pp->proto_index);
	itab_release(&pp->call_index);
	itab_release(&pp->trace_index);
}

static struct lj_proc *find_proc(const struct luajit *lj, uint32_t tgid)
{
	return (struct lj_proc *)runtime_procs_find(&lj->b.procs, tgid);
}

/* The process's state, for its generation gen (made anew at an exec). */
static struct lj_proc *get_proc(struct luajit *lj, uint32_t tgid, uint32_t gen)
{
	bool made;
	struct lj_proc *pp = (struct lj_proc *)runtime_procs_get(&lj->b.procs, tgid, gen, &made);

	if (made)
		pp->known = !bpf_map_lookup_elem(lj->b.procs_fd, &tgid, &pp->bpf) && pp->bpf.known;
	return pp;
}


/* Prototypes and call sites ------------------------------------------------------ */

struct proto_key {
	uint64_t addr;
	uint32_t firstline;
};

static bool proto_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct lj_proto *p = &((const struct lj_proc *)owner)->protos[idx];
	const struct proto_key *k = key;

	return p->addr == k->addr && p->firstline == k->firstline;
}

static struct lj_proto *find_proto(const struct lj_proc *pp, uint64_t addr, uint32_t firstline)
{
	struct proto_key k = { addr, firstline };
	uint32_t idx = itab_find(&pp->proto_index, hash_mix(addr, firstline), proto_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->protos[idx];
}

/* A prototype a stack showed: read once (failures too, so they are not read again). */
static struct lj_proto *name_proto(struct luajit *lj, struct lj_proc *pp, uint64_t addr,
				   uint32_t firstline)
{
	struct lj_proto *p = find_proto(pp, addr, firstline);
	int err;

	if (p)
		return p;
	ALLOC_GROW(pp->protos, pp->nr_protos + 1, pp->protos_alloc);
	p = &pp->protos[pp->nr_protos];
	memset(p, 0, sizeof(*p));
	p->addr = addr;
	p->firstline = firstline;
	err = pp->known ? luajit_proto_read(runtime_proc_read, pp, addr, &p->info) : -ENOENT;
	/* Freed and made again since the sample: another function, not this one. */
	p->ok = !err && p->info.firstline == firstline;
	if (p->ok)
		lj->stats.protos++;
	else
		lj->stats.proto_errors++;
	itab_insert(&pp->proto_index, hash_mix(addr, firstline), pp->nr_protos++);
	return p;
}

static bool call_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct lj_call *c = &((const struct lj_proc *)owner)->calls[idx];
	const struct lj_call *k = key;

	return c->caller == k->caller && c->pos == k->pos;
}

static const struct lj_call *find_call(const struct lj_proc *pp, uint64_t caller, uint32_t pos)
{
	struct lj_call k = { caller, pos, NULL };
	uint32_t idx = itab_find(&pp->call_index, hash_mix(caller, pos), call_eq, pp, &k);

	return idx == ITAB_NONE ? NULL : &pp->calls[idx];
}

/*
 * The name the caller's call instruction at pos gives its callee: read
 * once; the callee's name if it has none yet.
 */
static void name_call(struct luajit *lj, struct lj_proc *pp, uint64_t caller, uint32_t pos,
		      struct lj_proto *callee)
{
	const struct lj_call *found = find_call(pp, caller, pos);
	struct lj_call *c;

	if (!found) {
		ALLOC_GROW(pp->calls, pp->nr_calls + 1, pp->calls_alloc);
		c = &pp->calls[pp->nr_calls];
		c->caller = caller;
		c->pos = pos;
		c->name = NULL;
		if (pp->known && !luajit_call_name(runtime_proc_read, pp, caller, pos, &c->name))
			lj->stats.names++;
		itab_insert(&pp->call_index, hash_mix(caller, pos), pp->nr_calls++);
		found = c;
	}
	if (callee->ok && !callee->name && !callee->name_fixed)
		callee->name = found->name;
}

static bool is_lua(const struct interp_frame *f)
{
	return f->code && !(f->instr & (LUA_FRAME_BUILTIN | LUA_FRAME_CFUNC | LUA_FRAME_TRACE));
}

/* Traces ------------------------------------------------------------------------ */

static bool trace_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct lj_trace_at *t = &((const struct lj_proc *)owner)->traces[idx];
	const struct lj_trace_at *k = key;

	return t->trace == k->trace && t->traceno == k->traceno && t->ofs == k->ofs;
}

/* The frames at trace position f (LUA_FRAME_TRACE) whose first frame runs first_proto. */
static const struct lj_trace_at *trace_at(struct luajit *lj, struct lj_proc *pp,
					  const struct interp_frame *f, uint64_t first_proto)
{
	struct lj_trace_at k = { f->code, f->firstlineno, f->instr & LUA_TRACE_OFS_MASK }, *t;
	uint64_t h = hash_mix(f->code ^ (uint64_t)k.traceno << 48, k.ofs);
	uint32_t idx = itab_find(&pp->trace_index, h, trace_eq, pp, &k);

	if (idx != ITAB_NONE)
		return &pp->traces[idx];
	ALLOC_GROW(pp->traces, pp->nr_traces + 1, pp->traces_alloc);
	t = &pp->traces[pp->nr_traces];
	*t = k;
	t->ok = pp->known && !luajit_trace_position(runtime_proc_read, pp, k.trace, k.traceno, k.ofs,
						    first_proto, &t->pos);
	if (t->ok)
		lj->stats.trace_positions++;
	else
		lj->stats.trace_errors++;
	itab_insert(&pp->trace_index, h, pp->nr_traces++);
	return t;
}

/*
 * The frames in as they would stand with no trace running: where a first
 * frame says a trace was (LUA_FRAME_TRACE), the functions it inlined
 * there, above its first frame at its place; the trace's first frame
 * alone where the trace could not be read. Into out (room for
 * INTERP_MAX_FRAMES + LUA_TRACE_INLINED_MAX); how many.
 */
static uint32_t untrace(struct luajit *lj, struct lj_proc *pp, const struct interp_frame *in,
			uint32_t n, struct interp_frame *out)
{
	const struct lj_trace_at *t;
	uint32_t m = 0, i;

	if (!n || !(in[0].instr & LUA_FRAME_TRACE)) {
		memcpy(out, in, n * sizeof(*in));
		return n;
	}
	if (n < 2 || !is_lua(&in[1]) || !(t = trace_at(lj, pp, &in[0], in[1].code))->ok) {
		memcpy(out, in + 1, (n - 1) * sizeof(*in));
		return n - 1;
	}
	for (i = 0; i < t->pos.n; i++)
		out[m++] = (struct interp_frame){ t->pos.inlined[i].proto, t->pos.inlined[i].pos,
					      t->pos.inlined[i].firstline };
	out[m++] = (struct interp_frame){ t->pos.first.proto,
				      (in[1].instr & (INTERP_FRAME_ENTRY | LUA_FRAME_CALLED)) | t->pos.first.pos,
				      t->pos.first.firstline };
	memcpy(out + m, in + 2, (n - 2) * sizeof(*in));
	return m + n - 2;
}

/* A new stack: its prototypes read, and the call sites that name its functions. */
static void stack_seen(struct luajit *lj, uint32_t tgid, uint32_t gen,
		       const struct interp_stack *st)
{
	struct interp_frame frames[INTERP_MAX_FRAMES + LUA_TRACE_INLINED_MAX];
	struct lj_proc *pp = get_proc(lj, tgid, gen);
	uint32_t i, n;

	n = untrace(lj, pp, st->frames, st->n < INTERP_MAX_FRAMES ? st->n : INTERP_MAX_FRAMES, frames);
	for (i = 0; i < n; i++) {
		const struct interp_frame *f = &frames[i];
		struct lj_proto *p;

		if (!is_lua(f))
			continue;
		p = name_proto(lj, pp, f->code, f->firstlineno);
		if ((f->instr & LUA_FRAME_CALLED) && i + 1 < n && is_lua(&frames[i + 1]))
			name_call(lj, pp, frames[i + 1].code, frames[i + 1].instr & LUA_FRAME_POS_MASK,
				  p);
	}
}

static int on_notice(void *ctx, void *data, size_t size)
{
	const struct interp_notice *n = data;

	if (size >= sizeof(*n) && n->stack.n <= INTERP_MAX_FRAMES && n->stack.runtime == RUNTIME_LUAJIT)
		stack_seen(ctx, n->tgid, n->gen, &n->stack);
	return 0;
}

/* Files ---------------------------------------------------------------------- */

/* What the program is told of a process mapping file f at start (runtime_proc_fn). */
static void process_of(const void *file, uint64_t start, uint64_t offset, uint32_t gen, void *proc)
{
	const struct luajit_file *f = file;
	struct luajit_process *p = proc;

	p->vm_begin = start - offset + f->vm_begin_rel;
	p->vm_end = start - offset + f->vm_end_rel;
	p->gen = gen;
	p->known = f->known;
	p->dispatch_to_g = f->dispatch_to_g;
	p->g_j = f->g_j;
	p->ffnames = f->ffnames;
}

/* The names of the fast functions of the build in f (on fd): into f->ffnames. */
static void name_fast_functions(struct luajit *lj, int fd, const char *root, const char *path,
				struct luajit_file *f)
{
	struct luajit_ffnames names;
	int err;

	if (lj->nr_ffnames >= UINT16_MAX)
		return;
	err = luajit_ffnames_read(fd, root, path, &names);
	if (err) {
		debug("LuaJIT in '%s': fast functions stay [builtin#N]: %s", path,
		      err == -ESRCH ? "no jit/vmdef.lua found matches the build" :
		      err == -ENOENT ? "no jit/vmdef.lua found" : strerror(-err));
		return;
	}
	ALLOC_GROW(lj->ffnames, lj->nr_ffnames + 1, lj->ffnames_alloc);
	lj->ffnames[lj->nr_ffnames++] = names;
	f->ffnames = lj->nr_ffnames;
}

static bool file_opened(void *rt, const struct unwind_file_key *key, int fd, const char *path,
			const char *root)
{
	struct luajit *lj = rt;
	struct luajit_file f;

	if (runtime_files_find(&lj->b.files, key))
		return true;
	if (luajit_file_identify(fd, path, &f) != 1)
		return false;
	if (f.known)
		name_fast_functions(lj, fd, root, path, &f);
	else
		warning("LuaJIT in '%s': a build whose layout bpfprof cannot read (it reads LuaJIT "
			"2.1, GC64, x86-64); its samples keep their native frames", path);
	runtime_base_file_found(&lj->b, key, &f, path);
	lj->stats.files++;
	lj->stats.unknown_files += !f.known;
	debug("LuaJIT VM in '%s' (%s), code at 0x%llx..0x%llx", path,
	      f.flavour == LUAJIT_OPENRESTY ? "OpenResty" : "upstream",
	      (unsigned long long)f.vm_begin_rel, (unsigned long long)f.vm_end_rel);
	return true;
}

/* Merging --------------------------------------------------------------------- */

static const char *const state_frames[LUA_VM_STATE_MAX] = {
	[LUA_VM_GC] = "[lua: gc]",
	[LUA_VM_EXIT] = "[lua: trace exit]",
	[LUA_VM_RECORD] = "[lua: record]",
	[LUA_VM_OPT] = "[lua: optimise]",
	[LUA_VM_ASM] = "[lua: assemble]",
};

/*
 * The name of prototype p, whatever called it: the first a call site gave
 * it (the notices of a drain are read before its samples are merged), or
 * what the prototype is. Fixed once a profile shows it.
 */
static const char *proto_name(struct lj_proto *p)
{
	p->name_fixed = true;
	if (p->name)
		return p->name;
	return p->info.firstline == 0 ? "main chunk" : "function";
}

/* A fast function's location: its library name, as jit.p's, where its build's are known. */
static uint32_t builtin_location(struct profile *p, const struct luajit *lj,
				 const struct lj_proc *pp, uint32_t ffid)
{
	const char *name = NULL;
	char label[32];

	if (pp && pp->bpf.ffnames && pp->bpf.ffnames <= lj->nr_ffnames)
		name = luajit_ffname(&lj->ffnames[pp->bpf.ffnames - 1], ffid);
	/* A fast function: a Lua frame of no file, as jit.p names it. */
	if (name)
		return interp_location(p, RUNTIME_LUAJIT, interp_function(p, name, NULL, 0), 0);
	snprintf(label, sizeof(label), "[builtin#%u]", ffid);
	return profile_special_location(p, label);
}

/* The profile location of frame f: its function's, at its line. */
static uint32_t frame_location(struct profile *p, const struct luajit *lj, const struct lj_proc *pp,
			       const struct interp_frame *f)
{
	struct lj_proto *proto;

	if (f->instr & LUA_FRAME_BUILTIN)
		return builtin_location(p, lj, pp, f->instr & LUA_FRAME_POS_MASK);
	proto = pp ? find_proto(pp, f->code, f->firstlineno) : NULL;
	if (!proto || !proto->ok)
		return profile_special_location(p, "[lua: function not read]");
	return interp_location(p, RUNTIME_LUAJIT,
			       interp_function(p, proto_name(proto), proto->info.file,
					       proto->info.firstline),
			       luajit_proto_line(&proto->info, f->instr & LUA_FRAME_POS_MASK));
}

static bool in_vm(const struct profile *p, const struct luajit_process *vm, uint32_t loc)
{
	const struct prof_location *l = &p->locations[loc];

	return l->kind == FRAME_USER && l->address >= vm->vm_begin && l->address < vm->vm_end;
}

uint32_t luajit_merge_frames(struct profile *p, const struct luajit_process *vm, uint32_t state,
			     const struct interp_frame *lf, uint32_t ln, const struct merge_names *nm,
			     const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			     uint32_t *vms, uint32_t *unmatched)
{
	uint32_t m = 0, g = 0, i;

	*vms = *unmatched = 0;
	for (i = 0; i < n && m < max; i++) {
		if (g >= ln || !in_vm(p, vm, frames[i])) {
			out[m++] = frames[i];
			continue;
		}
		if (!(*vms)++) {
			/*
			 * The trace the walk stepped over to this VM frame is named by
			 * its Lua frames: its machine code's own frame goes.
			 */
			while (m && runtime_frame_anonymous(p, out[m - 1]))
				m--;
			/* What the VM did when not running Lua code: above the Lua frames. */
			if (state < LUA_VM_STATE_MAX && state_frames[state])
				out[m++] = profile_special_location(p, state_frames[state]);
		}
		/* This VM entry's frames: up to its first, newest first as the stack is. */
		for (; g < ln && m < max; g++) {
			if (!(lf[g].instr & LUA_FRAME_CFUNC))
				out[m++] = nm->locate(nm->ctx, p, lf, g, ln);
			if (lf[g].instr & INTERP_FRAME_ENTRY) {
				g++;
				break;
			}
		}
	}
	if (!*vms)
		return m;
	/* Frames whose VM entries the native stack does not show (cut short): at its root. */
	*unmatched = ln - g;
	for (; g < ln && m < max; g++)
		if (!(lf[g].instr & LUA_FRAME_CFUNC))
			out[m++] = nm->locate(nm->ctx, p, lf, g, ln);
	return m;
}

/* Whose frames a merge names: the runtime's state and the process's. */
struct lj_naming {
	const struct luajit *lj;
	const struct lj_proc *pp;
};

/* merge_names.locate: a frame of the process ctx (a struct lj_naming) says. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	const struct lj_naming *naming = ctx;

	(void)n;
	return frame_location(p, naming->lj, naming->pp, &frames[g]);
}

static uint32_t merge(void *rt, struct profile *p, uint32_t tgid, const struct raw_interp *rl,
		      uint32_t *frames, uint32_t n, uint32_t max)
{
	struct luajit *lj = rt;
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES + LUA_TRACE_INLINED_MAX];
	struct interp_frame lf[INTERP_MAX_FRAMES + LUA_TRACE_INLINED_MAX];
	struct merge_names nm = { .locate = locate };
	struct lj_naming naming = { lj, NULL };
	struct lj_proc *pp;
	uint32_t ln, m, vms, unmatched;

	pthread_mutex_lock(&lj->b.lock);
	pp = find_proc(lj, tgid);
	if (!pp || !pp->known) {
		pthread_mutex_unlock(&lj->b.lock);
		return n;
	}
	ln = untrace(lj, pp, rl->frames, rl->n < INTERP_MAX_FRAMES ? rl->n : INTERP_MAX_FRAMES, lf);
	if (max > sizeof(out) / sizeof(out[0]))
		max = sizeof(out) / sizeof(out[0]);
	naming.pp = pp;
	nm.ctx = &naming;
	m = luajit_merge_frames(p, &pp->bpf, rl->state, lf, ln, &nm, frames, n, out, max, &vms,
				&unmatched);
	if (!vms) {
		/* No VM on the native stack: the thread runs no Lua now, whatever L says. */
		lj->stats.no_vm_frame++;
		pthread_mutex_unlock(&lj->b.lock);
		return n;
	}
	lj->stats.unmatched += unmatched;
	lj->stats.merged++;
	pthread_mutex_unlock(&lj->b.lock);
	memcpy(frames, out, m * sizeof(*out));
	return m;
}

/* The runtime interface (runtime.h) --------------------------------------------- */

/* The label lua_vm's values: what LuaJIT's VM was doing at the sample. */
static const char *const lua_vm_names[LUA_VM_STATE_MAX] = {
	[LUA_VM_INTERP] = "interp", [LUA_VM_TRACE] = "trace", [LUA_VM_C] = "c",
	[LUA_VM_GC] = "gc", [LUA_VM_EXIT] = "exit", [LUA_VM_RECORD] = "record",
	[LUA_VM_OPT] = "opt", [LUA_VM_ASM] = "asm",
};

static const struct runtime_info luajit_info = {
	.name = "luajit",
	.kind = RUNTIME_LUAJIT,
	.option = "lua",
	.what = "Lua",
	.frame_type = "luajit",
	.versions = "LuaJIT 2.1",
	.builds = "GC64 builds (the default on x86-64) that export the C API (`luaJIT_setmode`): "
		  "the `luajit` executable or `libluajit-5.1.so`, OpenResty's and upstream's",
	.not_read = "2.0, and 2.1 builds without GC64; a VM that exports no `luaJIT_setmode`; "
		    "a build whose code does not confirm the layout",
	.layout = "from the file's code: the VM's bounds from its `.eh_frame`, the global state's "
		  "offsets from exported functions' instructions, each confirmed by another "
		  "(Debian's four files also by build ID)",
	.tested = "`e2e/luajit`, `e2e/luajit_jitp`, `e2e/luajit_bc`: Debian's two builds "
		  "(OpenResty's `luajit2` and upstream's), the JIT on and off, nginx's Lua module",
	.colour = { { 150, 50, 0 }, { 90, 50, 1 }, { 200, 55, 0 } },	/* violet */
	.state_label = "lua_vm",
	.state_names = lua_vm_names,
	.nr_states = LUA_VM_STATE_MAX,
};

static void *start(struct sampler *sampler, uint32_t (*gen)(void *ctx, uint32_t tgid), void *ctx)
{
	static const struct runtime_desc desc = {
		.what = "Lua",
		.file_size = sizeof(struct luajit_file),
		.proc_size = sizeof(struct lj_proc),
		.release = release_proc,
		.process_of = process_of,
		.proc_value_size = sizeof(struct luajit_process),
		.on_notice = on_notice,
		.file_opened = file_opened,
		.runtime = RUNTIME_LUAJIT,
		.merge = merge,
	};
	struct runtime_maps m;

	sampler_runtime_maps(sampler, &luajit_info, &m);
	return runtime_base_new(sizeof(struct luajit), &desc, &m, gen, ctx);
}

static void rt_stats(void *rt, struct run_figures *f)
{
	struct luajit *lj = rt;

	pthread_mutex_lock(&lj->b.lock);
	*RUN_FIGURES_OF(f, RUNTIME_LUAJIT, struct luajit_stats) = lj->stats;
	pthread_mutex_unlock(&lj->b.lock);
}

/* LuaJIT processes: how many samples got their Lua frames, what the VM did, why others did not. */
static void summarize_luajit(const struct sampler_stats *st, const struct run_figures *f)
{
	const uint64_t *t = st->total, *end = &st->total[STAT_LUA(END)], *s = &t[STAT_LUA(STATE)];
	const struct luajit_stats *lj = RUN_FIGURES_OF(f, RUNTIME_LUAJIT, const struct luajit_stats);

	if (!(st->runtimes_on & 1u << RUNTIME_LUAJIT) || !t[STAT_LUA(SAMPLES)])
		return;
	fprintf(stderr, "bpfprof: luajit: %llu samples of LuaJIT processes, %llu with their Lua "
		"frames (cut: %llu at %u frames, %llu at an unreadable frame); without: %llu running "
		"no Lua, %llu before the VM's state was found, %llu of a build not read\n",
		(unsigned long long)t[STAT_LUA(SAMPLES)],
		(unsigned long long)(end[INTERP_WALK_WHOLE] + end[INTERP_WALK_DEPTH] + end[INTERP_WALK_FAULT]),
		(unsigned long long)end[INTERP_WALK_DEPTH], INTERP_MAX_FRAMES,
		(unsigned long long)end[INTERP_WALK_FAULT],
		(unsigned long long)(t[STAT_LUA(NOT_RUNNING)] + t[STAT_LUA(NO_FRAME)]),
		(unsigned long long)t[STAT_LUA(NO_STATE)], (unsigned long long)t[STAT_LUA(UNKNOWN_BUILD)]);
	fprintf(stderr, "bpfprof: luajit: the VM was interpreting %llu, in a trace %llu, in C or FFI "
		"%llu, collecting garbage %llu, leaving a trace %llu, recording %llu, optimising %llu, "
		"assembling %llu; %llu prototypes named, %llu not readable; %llu places in traces "
		"read for the functions they inline, %llu not readable\n",
		(unsigned long long)s[LUA_VM_INTERP], (unsigned long long)s[LUA_VM_TRACE],
		(unsigned long long)s[LUA_VM_C], (unsigned long long)s[LUA_VM_GC],
		(unsigned long long)s[LUA_VM_EXIT], (unsigned long long)s[LUA_VM_RECORD],
		(unsigned long long)s[LUA_VM_OPT], (unsigned long long)s[LUA_VM_ASM],
		(unsigned long long)lj->protos, (unsigned long long)lj->proto_errors,
		(unsigned long long)lj->trace_positions, (unsigned long long)lj->trace_errors);
	debug("luajit: %u VM files (%u not read); %llu samples merged, %llu frames whose VM entry "
	      "the native stack did not show, %llu samples with no VM on it; %llu call sites named",
	      lj->files, lj->unknown_files, (unsigned long long)lj->merged,
	      (unsigned long long)lj->unmatched, (unsigned long long)lj->no_vm_frame,
	      (unsigned long long)lj->names);
}

static void luajit_free(void *rt)
{
	struct luajit *lj = rt;
	uint32_t i;

	if (!lj)
		return;
	for (i = 0; i < lj->nr_ffnames; i++)
		luajit_ffnames_release(&lj->ffnames[i]);
	free(lj->ffnames);
	runtime_free(rt);
}

const struct runtime_ops luajit_runtime = {
	.info = &luajit_info,
	.start = start,
	.file_opened = runtime_file_opened,
	.process_maps = runtime_process_maps,
	.take_notices = runtime_take_notices,
	.merge = runtime_merge,
	.after_drain = runtime_after_drain,
	.renumber = runtime_renumber_none,
	.stats = rt_stats,
	.summarize = summarize_luajit,
	.free = luajit_free,
};
