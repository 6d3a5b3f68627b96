// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LuaJIT's merge (luajit_merge_frames) on samples recorded from
 * tests/workloads/lua_split.lua under Debian's luajit (bpfprof -F 999,
 * with and without --no-lua): each native frame in the VM's code replaced
 * by the Lua frames of its entry into the VM, checked frame by frame
 * against the folded line bpfprof wrote: os.clock's C function above its
 * fast function's frame, a compiled trace (its anonymous machine code
 * goes); and, made in the same process's layout, a comparator table.sort
 * calls (C between two VM entries) and the VM collecting garbage
 * ("[lua: gc]" above the Lua frames).
 * Then the walks cut short: at INTERP_MAX_FRAMES and at an unreadable frame
 * (a VM entry left with none of its frames keeps its native frame), a
 * native stack cut short (the frames of the entries it did not reach at
 * its root, counted; none reached, and the sample keeps its native
 * frames); a prototype not named ("[lua: function not read]").
 */
#include <stdlib.h>
#include <string.h>

#include "bpfprof/luajit_trace.h"
#include "bpfprof/luajit_merge.h"
#include "bpfprof/sampler.h"
#include "runtime_stacks.h"
#include "unit.h"

#define SCRIPT "tests/workloads/lua_split.lua"

/* Where the recorded process had luajit (OpenResty's build, Debian's /usr/bin/luajit). */
#define LUAJIT	0x55e0b2c00000ull	/* its file's offset 0 */
#define VM_BEGIN (LUAJIT + 0x9b90)	/* luajit_file.vm_begin_rel, as test_luajit_file has it */
#define VM_END	(LUAJIT + 0xdc82)
#define PMAIN	(LUAJIT + 0x9a40)	/* luajit.c's pmain, the C function lua_cpcall runs */

/* lua_split.lua's prototypes: address, first line. */
#define MAIN_CHUNK	0x7f3b9e4a2a60, 0
#define MAIN		0x7f3b9e4a2718, 37
#define ALPHA		0x7f3b9e4a24f0, 26
#define BETA		0x7f3b9e4a2340, 32
#define WORK		0x7f3b9e4a2170, 18
/* Not lua_split's: a comparator table.sort (a C fast function) calls, by lua_call. */
#define BY_SCORE	0x7f3b9e4a3c40, 2
#define RANK		"rank.lua"
#define SORT_FFID	91

/* What its namer read of them, and the names their callers' call sites give them. */
static const struct proto {
	uint64_t addr;
	uint32_t firstline;
	const char *name;
	uint32_t line;		/* of the frame's position, as luajit_proto_line gives it */
} protos[] = {
	{ MAIN_CHUNK, "main chunk", 61 },
	{ MAIN, "main", 46 },
	{ ALPHA, "alpha", 28 },
	{ BETA, "beta", 34 },
	{ WORK, "work", 21 },
	{ BY_SCORE, "function", 3 },
};

/* merge_names.locate: as frame_location, from protos[]; one not there was not read. */
static uint32_t locate(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
		       uint32_t n)
{
	const struct interp_frame *f = &frames[g];
	char label[32];
	size_t i;

	(void)ctx;
	(void)n;
	if (f->instr & LUA_FRAME_BUILTIN) {
		snprintf(label, sizeof(label), "[builtin#%u]", f->instr & LUA_FRAME_POS_MASK);
		return profile_special_location(p, label);
	}
	for (i = 0; i < sizeof(protos) / sizeof(protos[0]); i++)
		if (protos[i].addr == f->code && protos[i].firstline == f->firstlineno)
			return rs_runtime(p, FRAME_INTERP + RUNTIME_LUAJIT, protos[i].name,
					  f->code == 0x7f3b9e4a3c40 ? RANK : SCRIPT,
					  protos[i].firstline, protos[i].line);
	return profile_special_location(p, "[lua: function not read]");
}

static const struct merge_names names = { .locate = locate };
static const struct luajit_process vm = { .vm_begin = VM_BEGIN, .vm_end = VM_END, .known = 1 };

/* A Lua frame of prototype proto at bytecode position pos (| flags). */
#define FRAME(proto, pos) FRAME_(proto, pos)
#define FRAME_(addr, firstline, pos) { addr, (pos), firstline }
#define ENTRY INTERP_FRAME_ENTRY
#define CALLED LUA_FRAME_CALLED
/* lua_cpcall's pmain, the first frame of the outermost VM entry. */
#define PMAIN_FRAME { PMAIN, LUA_FRAME_CFUNC | ENTRY, 0 }

/* The Lua stacks the BPF program sent, newest first. */
static const struct interp_stack clock_stack = {	/* main's os.clock() */
	.n = 4, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_LUAJIT, .state = LUA_VM_C,
	.frames = { { 0, LUA_FRAME_BUILTIN | CALLED | 128, 0 }, FRAME(MAIN, CALLED | 0x2d),
		    FRAME(MAIN_CHUNK, ENTRY | 0x5e), PMAIN_FRAME },
};

/* alpha's work() in a trace, as it stands once the trace's frame is read (untrace). */
static const struct interp_stack trace_stack = {
	.n = 5, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_LUAJIT, .state = LUA_VM_TRACE,
	.frames = { FRAME(WORK, CALLED | 0x0b), FRAME(ALPHA, CALLED | 0x07),
		    FRAME(MAIN, CALLED | 0x3c), FRAME(MAIN_CHUNK, ENTRY | 0x5e), PMAIN_FRAME },
};

/* main's table.sort(t, by_score), in the comparator: C between two VM entries. */
static const struct interp_stack sort_stack = {
	.n = 5, .end = INTERP_WALK_WHOLE, .runtime = RUNTIME_LUAJIT, .state = LUA_VM_INTERP,
	.frames = { FRAME(BY_SCORE, ENTRY | 0x04), { 0, LUA_FRAME_BUILTIN | CALLED | SORT_FFID, 0 },
		    FRAME(MAIN, CALLED | 0x2d), FRAME(MAIN_CHUNK, ENTRY | 0x5e), PMAIN_FRAME },
};

/* The process's mappings, where the recorded one had them. */
struct maps {
	uint32_t luajit, libc, vdso, traces;
};

static struct maps mappings(struct profile *p)
{
	return (struct maps){
		rs_mapping(p, "/usr/bin/luajit", LUAJIT + 0x8000, 0x8000, 0x6e000),
		rs_mapping(p, "/usr/lib/x86_64-linux-gnu/libc.so.6", 0x7f3b9e628000, 0x28000,
			   0x155000),
		rs_mapping(p, "[vdso]", 0x7ffd8a3f4000, 0, 0x2000),
		rs_mapping(p, "[anon]", 0x7f3b9e7e0000, 0, 0x10000),
	};
}

/* From the VM's frame under lua_pcall to _start, leaf first, into f. */
static uint32_t root_frames(struct profile *p, const struct maps *m, uint32_t *f)
{
	uint32_t n = 0;

	f[n++] = rs_native(p, m->luajit, LUAJIT + 0xb845, NULL);	/* the VM */
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x1d4e3, "lua_pcall", NULL);
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x892a, NULL);	/* docall */
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x9b3e, NULL);	/* pmain */
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0xb845, NULL);	/* the VM */
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x1d6b2, "lua_cpcall", NULL);
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x8633, "main", NULL);
	f[n++] = rs_native(p, m->libc, 0x7f3b9e64f249, "__libc_start_call_main", NULL);
	f[n++] = rs_native(p, m->libc, 0x7f3b9e64f304, "__libc_start_main", NULL);
	f[n++] = rs_native(p, m->luajit, LUAJIT + 0x8761, "_start", NULL);
	return n;
}

#define ROOT "luajit;_start;__libc_start_main;__libc_start_call_main;main;lua_cpcall;" \
	"[luajit+0x9b3e];[luajit+0x892a];lua_pcall"

/* os.clock's sample: lj_cf_os_clock, in clock_gettime's vDSO code. */
static uint32_t clock_frames(struct profile *p, uint32_t *f)
{
	struct maps m = mappings(p);
	uint32_t n = 0;

	f[n++] = rs_native(p, m.vdso, 0x7ffd8a3f4a1d, "__vdso_clock_gettime", NULL);
	f[n++] = rs_native(p, m.libc, 0x7f3b9e6fc0d5, "clock_gettime", NULL);
	f[n++] = rs_native(p, m.libc, 0x7f3b9e6b1e2e, "clock", NULL);
	f[n++] = rs_native(p, m.luajit, LUAJIT + 0x13198, NULL);	/* lj_cf_os_clock */
	return n + root_frames(p, &m, f + n);
}

#define CLOCK_LEAF "[builtin#128];[luajit+0x13198];clock;clock_gettime;__vdso_clock_gettime"

/* A sample in a trace's machine code: its frame, then the VM's C frame it runs on. */
static uint32_t trace_frames(struct profile *p, uint32_t *f)
{
	struct maps m = mappings(p);

	f[0] = rs_native(p, m.traces, 0x7f3b9e7effe4, NULL);
	return 1 + root_frames(p, &m, f + 1);
}

/* The comparator's sample, interpreted: the VM, lua_call from table.sort's C, the VM. */
static uint32_t sort_frames(struct profile *p, uint32_t *f, bool cut)
{
	struct maps m = mappings(p);
	uint32_t n = 0;

	f[n++] = rs_native(p, m.luajit, LUAJIT + 0xa3d7, NULL);	/* the VM, interpreting */
	f[n++] = rs_native(p, m.luajit, LUAJIT + 0x1d39c, "lua_call", NULL);
	f[n++] = rs_native(p, m.luajit, LUAJIT + 0x2f8e1, NULL);	/* auxsort */
	f[n++] = rs_native(p, m.luajit, LUAJIT + 0x2fc52, NULL);	/* lj_cf_table_sort */
	return cut ? n : n + root_frames(p, &m, f + n);
}

#define SORT_LEAF "[builtin#91];[luajit+0x2fc52];[luajit+0x2f8e1];lua_call;function (rank.lua:2)"

/* Merges st's frames into frames[0..n); the folded line, *vms and *unmatched as they say. */
static char *merged(struct profile *p, const struct interp_stack *st, const uint32_t *frames,
		    uint32_t n, uint32_t *vms, uint32_t *unmatched)
{
	uint32_t out[2 * BPFPROF_MAX_DEPTH + INTERP_MAX_FRAMES + LUA_TRACE_INLINED_MAX], m;

	m = luajit_merge_frames(p, &vm, st->state, st->frames, st->n, &names, frames, n, out,
				sizeof(out) / sizeof(out[0]), vms, unmatched);
	return rs_folded(p, "luajit", out, m);
}

static void typical(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched;
	struct interp_stack st;
	struct profile p;
	char *got;

	profile_init(&p);
	n = clock_frames(&p, frames);
	got = merged(&p, &clock_stack, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";main chunk (lua_split.lua:0);main (lua_split.lua:37);" CLOCK_LEAF,
		    "luajit: os.clock's C above its fast function, above main; pmain its own "
		    "native frames");
	CHECK(vms == 2 && unmatched == 0,
	      "luajit: both VM entries met, every frame placed (%u, %u)", vms, unmatched);
	free(got);
	profile_release(&p);

	profile_init(&p);
	n = trace_frames(&p, frames);
	got = merged(&p, &trace_stack, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";main chunk (lua_split.lua:0);main (lua_split.lua:37);"
		    "alpha (lua_split.lua:26);work (lua_split.lua:18)",
		    "luajit: a trace's anonymous code replaced by its Lua frames");
	free(got);

	n = sort_frames(&p, frames, false);
	got = merged(&p, &sort_stack, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";main chunk (lua_split.lua:0);main (lua_split.lua:37);" SORT_LEAF,
		    "luajit: a comparator table.sort calls: each VM entry replaced by its frames");
	CHECK(vms == 3 && unmatched == 0, "luajit: three VM entries met (%u), every frame placed "
	      "(%u)", vms, unmatched);
	free(got);

	/* Collecting garbage from the interpreter: said above the Lua frames, under the GC's. */
	{
		struct maps m = mappings(&p);
		uint32_t k = 0;

		frames[k++] = rs_native(&p, m.luajit, LUAJIT + 0x1b7e2, NULL);	/* gc_sweep */
		frames[k++] = rs_native(&p, m.luajit, LUAJIT + 0x1c3a9, NULL);	/* lj_gc_step */
		/* lj_gc_step_fixtop, called by the VM */
		frames[k++] = rs_native(&p, m.luajit, LUAJIT + 0x1c6f1, NULL);
		n = k + root_frames(&p, &m, frames + k);
	}
	st = trace_stack;
	st.state = LUA_VM_GC;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";main chunk (lua_split.lua:0);main (lua_split.lua:37);"
		    "alpha (lua_split.lua:26);work (lua_split.lua:18);[lua: gc];[luajit+0x1c6f1];"
		    "[luajit+0x1c3a9];[luajit+0x1b7e2]",
		    "luajit: collecting garbage: [lua: gc] above the Lua frames, the GC's above");
	free(got);
	profile_release(&p);
}

static void cut(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched, i;
	struct interp_stack st;
	struct profile p;
	struct strbuf want;
	char *got;

	/* work recursing past INTERP_MAX_FRAMES: the newest 64, the outer VM entry's frame stays. */
	profile_init(&p);
	n = trace_frames(&p, frames);
	memset(&st, 0, sizeof(st));
	st.n = INTERP_MAX_FRAMES;
	st.end = INTERP_WALK_DEPTH;
	st.runtime = RUNTIME_LUAJIT;
	st.state = LUA_VM_TRACE;
	for (i = 0; i < INTERP_MAX_FRAMES; i++)
		st.frames[i] = (struct interp_frame)FRAME(WORK, CALLED | 0x0b);
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	strbuf_init(&want);
	strbuf_addstr(&want, "luajit;_start;__libc_start_main;__libc_start_call_main;main;"
		      "lua_cpcall;[luajit+0xb845];[luajit+0x9b3e];[luajit+0x892a];lua_pcall");
	for (i = 0; i < INTERP_MAX_FRAMES; i++)
		strbuf_addstr(&want, ";work (lua_split.lua:18)");
	expect_text(got, want.buf, "luajit: cut at 64 frames: all in the newest VM entry, the "
		    "oldest entry's VM frame native");
	CHECK(unmatched == 0, "luajit: cut at 64, nothing at the root (%u)", unmatched);
	strbuf_release(&want);
	free(got);

	/* main's frame unreadable: work and alpha read, the rest lost. */
	st = trace_stack;
	st.n = 2;
	st.end = INTERP_WALK_FAULT;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, "luajit;_start;__libc_start_main;__libc_start_call_main;main;lua_cpcall;"
		    "[luajit+0xb845];[luajit+0x9b3e];[luajit+0x892a];lua_pcall;"
		    "alpha (lua_split.lua:26);work (lua_split.lua:18)",
		    "luajit: a walk cut at an unreadable frame: what was read in its VM entry");
	free(got);
	profile_release(&p);

	/* The native walk stopped in pmain: the outer entry's frames (pmain's, C) counted. */
	profile_init(&p);
	n = clock_frames(&p, frames) - 6;
	got = merged(&p, &clock_stack, frames, n, &vms, &unmatched);
	expect_text(got, "luajit;[luajit+0x9b3e];[luajit+0x892a];lua_pcall;"
		    "main chunk (lua_split.lua:0);main (lua_split.lua:37);" CLOCK_LEAF,
		    "luajit: a native stack cut short below its first VM entry");
	CHECK(vms == 1 && unmatched == 1, "luajit: one VM entry met, pmain's frame unmatched (%u, "
	      "%u)", vms, unmatched);
	free(got);

	/* Stopped in table.sort's C: the outer entries' frames at the root, counted. */
	n = sort_frames(&p, frames, true);
	got = merged(&p, &sort_stack, frames, n, &vms, &unmatched);
	expect_text(got, "luajit;main chunk (lua_split.lua:0);main (lua_split.lua:37);" SORT_LEAF,
		    "luajit: a native stack cut short: the unreached entries' frames at its root");
	CHECK(vms == 1 && unmatched == 4, "luajit: one VM entry met (%u), four frames unmatched "
	      "(%u)", vms, unmatched);
	free(got);

	/* Stopped in os.clock's C, short of the VM: no VM entry met, the Lua frames not taken. */
	clock_frames(&p, frames);
	got = merged(&p, &clock_stack, frames, 4, &vms, &unmatched);
	CHECK(vms == 0, "luajit: a native stack with no VM frame: none met (%u), native kept",
	      vms);
	free(got);
	profile_release(&p);
}

static void freed(void)
{
	uint32_t frames[BPFPROF_MAX_DEPTH], n, vms, unmatched;
	struct interp_stack st = trace_stack;
	struct profile p;
	char *got;

	/* alpha's prototype freed before it was named; main's address reused (first line) */
	profile_init(&p);
	n = trace_frames(&p, frames);
	st.frames[1].code = 0x7f3b9e4a3a88;
	st.frames[2].firstlineno = 40;
	got = merged(&p, &st, frames, n, &vms, &unmatched);
	expect_text(got, ROOT ";main chunk (lua_split.lua:0);[lua: function not read];"
		    "[lua: function not read];work (lua_split.lua:18)",
		    "luajit: prototypes not named are [lua: function not read], in their place");
	free(got);
	profile_release(&p);
}

void test_merge_luajit(void)
{
	typical();
	cut();
	freed();
}
