/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * LuaJIT 2.1's frames (GC64, x86-64), read at the sample: the Lua stack
 * changes a moment later, so it is walked here and named in userspace
 * (src/runtime/luajit.c). A process is LuaJIT's when one of its executable
 * mappings is of a file userspace found to hold the VM (luajit_files).
 *
 * Its global state g is where the VM and its traces keep DISPATCH, r14, at
 * a fixed distance from g; a candidate is kept only if g's main thread
 * points back at g, and it is remembered per thread for samples in C code,
 * whose r14 may be anything. g says what the VM is doing (vmstate), which
 * lua_State runs (cur_L) and, in a trace, the base of its first frame
 * (jit_base). The frames are then walked down their links: a Lua frame's
 * link is the return address into its caller, whose call instruction says
 * how far down the caller's frame is; other links (called from C, pcall,
 * vararg, continuation) carry that distance. Where C called into the VM
 * the frame is marked, as Python marks an eval call's first frame, so that
 * userspace puts each run of frames in place of its VM's native frame. A
 * coroutine resumed from Lua continues with its resumer's frames: the VM's
 * C frame of the resume lies right below the resumer's, which records the
 * resumer's lua_State.
 *
 * A sample in a trace's machine code (which has no CFI) is stepped over to
 * the VM's C frame below it, spadjust bytes up (struct jit_frame): the
 * native walk then goes on through the VM and the C that called it.
 */
#ifndef BPFPROF_LUAJIT_BPF_H
#define BPFPROF_LUAJIT_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"
#include "settings.bpf.h"

/*
 * Code of a runtime's whose CFI does not hold where the sample is, and
 * how the native walk steps over it to the VM's C frame:
 *   a subroutine of the VM's that the VM called, at [lo, hi) (its frame
 *   is the VM's less a return address): before the CFI is asked, one
 *   return address popped, nothing recorded (the leaf is the VM's);
 *   a LuaJIT trace, code it made with no CFI: where the walk finds none,
 *   it goes on at the VM's C frame at vm_sp, recording vm_pc (an address
 *   in the VM's code, whose CFI the walk then follows) for it.
 */
struct jit_frame {
	__u64 lo, hi;		/* hi 0: none */
	__u64 vm_sp;		/* 0: none */
	__u64 vm_pc;
};

/* Files that hold a LuaJIT VM, by identity; written by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, struct unwind_file_key);
	__type(value, struct luajit_file);
	__uint(max_entries, 256);
} luajit_files SEC(".maps");

/* LuaJIT processes by tgid: from their mappings as read (scan_mappings), or by userspace. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__type(key, __u32);
	__type(value, struct luajit_process);
	__uint(max_entries, 16384);
	__uint(map_flags, BPF_F_NO_PREALLOC);
} luajit_procs SEC(".maps");

/* Each thread's global state (and each process's, by tgid), once found. */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__type(key, __u32);
	__type(value, __u64);
	__uint(max_entries, 65536);
} luajit_globals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} lua_notices SEC(".maps");

/* The walk's state, per CPU; its frames go into py_scratch's stack (python.bpf.h). */
struct lua_walk {
	struct user_regs regs;
	__u32 pid;		/* whose: lua_sample is for the same thread */
	__u64 vm_begin, vm_end;
	__u64 g, L;
	__u64 stack_lo;		/* the lua_State's stack: frames above it */
	__u64 f;		/* the next frame's link slot (its base - 8) */
	__u64 pc;		/* the next frame's pc (the instruction after the one running); 0: unknown */
	__u64 hash;
	__s32 vmstate;
	__u32 state;		/* enum lua_vm_state */
	__u32 end;		/* enum py_walk_end, once ended */
	__u32 recorded;		/* frames recorded since the last VM entry */
	__u32 resumes;		/* coroutines left for their resumers */
	bool ready;		/* lua_before_walk found g and L: lua_sample walks */
	bool skip;		/* the next frame is a vararg function's own: already recorded */
};

struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__type(key, __u32);
	__type(value, struct lua_walk);
	__uint(max_entries, 1);
} lua_scratch SEC(".maps");

/* A process maps code of file at e: if the file holds a LuaJIT VM, the process is LuaJIT's. */
static __always_inline void luajit_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	struct luajit_process p = { .gen = gen };
	struct luajit_file *f;

	if (!settings.luajit_frames || !(f = bpf_map_lookup_elem(&luajit_files, &e->file)))
		return;
	p.vm_begin = e->start - e->offset + f->vm_begin_rel;
	p.vm_end = e->start - e->offset + f->vm_end_rel;
	p.known = f->known;
	p.dispatch_to_g = f->dispatch_to_g;
	p.g_j = f->g_j;
	bpf_map_update_elem(&luajit_procs, &tgid, &p, BPF_ANY);
}

static __always_inline __u64 lj_read(__u64 addr)
{
	__u64 v;

	return bpf_probe_read_user(&v, sizeof(v), (void *)addr) ? 0 : v;
}

static __always_inline __u32 lj_read_u32(__u64 addr)
{
	__u32 v;

	return bpf_probe_read_user(&v, sizeof(v), (void *)addr) ? 0 : v;
}

/* Whether g is a global state: its main thread's points back at it. */
static __always_inline bool is_global_state(__u64 g)
{
	__u64 L;

	if (!g || (g & 7))
		return false;
	L = lj_read(g + LJ_G_MAINTHREAD) & LJ_GCPTR_MASK;
	return L && lj_read(L + LJ_L_GLREF) == g;
}

/* The thread's global state: from r14 if it is DISPATCH now (kept), else as last found. */
static __always_inline __u64 global_state(const struct luajit_process *p, const struct user_regs *r,
					  __u32 tgid, __u32 pid)
{
	__u64 g = r->r14 - p->dispatch_to_g, *kept;

	kept = bpf_map_lookup_elem(&luajit_globals, &pid);
	if (kept && *kept == g)
		return g;
	if (is_global_state(g)) {
		bpf_map_update_elem(&luajit_globals, &pid, &g, BPF_ANY);
		bpf_map_update_elem(&luajit_globals, &tgid, &g, BPF_ANY);
		return g;
	}
	if (!kept)
		kept = bpf_map_lookup_elem(&luajit_globals, &tgid);
	return kept && is_global_state(*kept) ? *kept : 0;
}

/* What vmstate says the VM is doing (a trace number, or ~LJ_VMST_*). */
static __always_inline __u32 vm_state_of(__s32 vmstate)
{
	switch (vmstate) {
	case -1: return LUA_VM_INTERP;
	case -2: return LUA_VM_C;
	case -3: return LUA_VM_GC;
	case -4: return LUA_VM_EXIT;
	case -5: return LUA_VM_RECORD;
	case -6: return LUA_VM_OPT;
	case -7: return LUA_VM_ASM;
	default: return LUA_VM_TRACE;
	}
}

/*
 * A frame of function fn whose next instruction is at pc: whether pc lies
 * in fn's bytecode (a Lua function's). The top frame's registers are
 * trusted only then.
 */
static __always_inline bool pc_in_function(__u64 fn, __u64 pc)
{
	__u64 bc;
	__u32 sizebc;

	if (!fn || lj_read_u32(fn + LJ_FN_FFID) & 0xff)
		return false;
	bc = lj_read(fn + LJ_FN_PC);
	sizebc = lj_read_u32(bc - LJ_PROTO_SIZE + LJ_PROTO_SIZEBC);
	return bc && pc > bc && pc <= bc + (__u64)sizebc * 4;
}

/* The function of the frame whose base is base (its slot below the link), or 0. */
static __always_inline __u64 frame_function(__u64 base)
{
	__u64 tv = lj_read(base - 16);

	/* The tag is the top 17 bits, sign-extended: an arithmetic shift. */
	return (__u32)((__s64)tv >> 47) == LJ_ITYPE_FUNC ? tv & LJ_GCPTR_MASK : 0;
}

/* The lua_State L's frames from its saved base, the newest's pc from its C frame. */
static __always_inline void start_at_saved(struct lua_walk *w, __u64 L)
{
	__u64 cf = lj_read(L + LJ_L_CFRAME) & ~3ull;

	w->L = L;
	w->stack_lo = lj_read(L + LJ_L_STACK);
	w->f = lj_read(L + LJ_L_BASE) - 8;
	w->pc = cf ? lj_read(cf + LJ_CFRAME_PC) : 0;
	if (w->pc && !pc_in_function(frame_function(w->f + 8), w->pc))
		w->pc = 0;
}

/*
 * Before the native walk: is the sampled thread's process LuaJIT's, what is
 * its VM doing; in a trace, how the native walk steps over it (jit). A
 * global function: the verifier checks it once.
 */
__noinline int lua_before_walk(struct sample_key *key, const struct user_regs *r,
			       struct jit_frame *jit, struct sample_stats *st)
{
	struct luajit_process *p;
	struct lua_walk *w;
	__u32 zero = 0;
	__u64 g, L, T, base;

	if (!key || !r || !jit || !st)
		return 0;
	jit->hi = 0;
	jit->vm_sp = 0;
	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	if (!w)
		return 0;
	w->ready = false;
	if (!settings.luajit_frames || !(p = bpf_map_lookup_elem(&luajit_procs, &key->tgid)) ||
	    p->gen != key->gen)
		return 0;
	st->v[STAT_LUA_SAMPLES]++;
	if (!p->known) {
		st->v[STAT_LUA_UNKNOWN_BUILD]++;
		return 0;
	}
	g = global_state(p, r, key->tgid, key->pid);
	if (!g) {
		st->v[STAT_LUA_NO_STATE]++;
		return 0;
	}
	L = lj_read(g + LJ_G_CUR_L) & LJ_GCPTR_MASK;
	/* A lua_State outside every call into the VM has no C frame: the thread runs no Lua. */
	if (!L || !(lj_read(L + LJ_L_CFRAME) & ~3ull)) {
		st->v[STAT_LUA_NOT_RUNNING]++;
		return 0;
	}
	w->regs = *r;
	w->vm_begin = p->vm_begin;
	w->vm_end = p->vm_end;
	w->g = g;
	w->vmstate = (__s32)lj_read_u32(g + LJ_G_VMSTATE);
	w->state = vm_state_of(w->vmstate);
	w->ready = true;
	w->pid = key->pid;
	start_at_saved(w, L);
	base = lj_read(g + LJ_G_JIT_BASE);
	if (base) {
		/*
		 * In a trace, or in what it called (C through the FFI, a helper,
		 * the GC): the trace's code has no CFI, and it runs on the VM's C
		 * frame, L's, lowered by its own. Its frames start at jit_base.
		 */
		jit->vm_sp = lj_read(L + LJ_L_CFRAME) & ~3ull;
		jit->vm_pc = p->vm_begin + 1;
		w->f = base - 8;
		w->pc = 0;
	}
	if (w->state == LUA_VM_TRACE) {
		__u64 traces = lj_read(g + p->g_j + LJ_J_TRACE), mcode;
		__u32 sizetrace = lj_read_u32(g + p->g_j + LJ_J_SIZETRACE);

		T = (__u32)w->vmstate < sizetrace ? lj_read(traces + (__u64)w->vmstate * 8) & LJ_GCPTR_MASK
						  : 0;
		mcode = T ? lj_read(T + LJ_TRACE_MCODE) : 0;
		/* Not in the trace's own code: in C it called (FFI) or a helper of the VM's. */
		if (!mcode || r->ip < mcode || r->ip >= mcode + lj_read_u32(T + LJ_TRACE_SZMCODE))
			w->state = LUA_VM_C;
		/* The frames the trace inlined are on no stack: its first function, where it starts. */
		if (base && T)
			w->pc = lj_read(T + LJ_TRACE_STARTPC) + 4;
	} else if (w->state == LUA_VM_INTERP && r->ip >= p->vm_begin && r->ip < p->vm_end) {
		/*
		 * The VM's frame holds L: if not at sp, the VM called one of its
		 * subroutines (a modulo, a floor), whose frame the CFI does not know.
		 */
		if (lj_read(r->sp + LJ_CFRAME_L) != L && lj_read(r->sp + 8 + LJ_CFRAME_L) == L) {
			jit->lo = r->ip;
			jit->hi = r->ip + 1;
		}
		/* Interpreting: BASE and PC in their registers, newer than L's. */
		if (r->rdx > w->stack_lo && pc_in_function(frame_function(r->rdx), r->rbx)) {
			w->f = r->rdx - 8;
			w->pc = r->rbx;
		}
	}
	return 0;
}

static __always_inline long lua_walk_end(struct lua_walk *w, __u32 end)
{
	w->end = end;
	return 1;
}

/* Marks the newest frame recorded: the first the VM ran since C called it. */
static __always_inline void mark_entry(struct lua_walk *w, struct py_stack *s)
{
	__u32 n = s->n;

	if (n && w->recorded)
		s->frames[(n - 1) & (PY_MAX_FRAMES - 1)].instr |= PY_FRAME_ENTRY;
	w->recorded = 0;
}

static __always_inline void record(struct lua_walk *w, struct py_stack *s, __u64 code, __u32 instr,
				   __u32 line)
{
	__u32 n = s->n;
	struct py_frame *fr = &s->frames[n & (PY_MAX_FRAMES - 1)];

	fr->code = code;
	fr->instr = instr;
	fr->firstlineno = line;
	s->n = n + 1;
	w->recorded++;
	w->hash = (w->hash ^ code) * 0x9e3779b97f4a7c15ull;
	w->hash = (w->hash ^ ((__u64)instr << 32 | line)) * 0x9e3779b97f4a7c15ull;
	w->hash ^= w->hash >> 29;
}

/*
 * At the bottom of a lua_State's stack: a coroutine resumed from Lua goes
 * on with its resumer's frames. Its resume's C frame (flagged in the
 * cframe chain) returns into the VM's code, and the resumer's own C frame
 * lies right above it, holding the resumer's lua_State.
 */
static __always_inline bool to_resumer(struct lua_walk *w)
{
	__u64 cf = lj_read(w->L + LJ_L_CFRAME), raw, ret, L;
	int i;

	for (i = 0; i < 4 && cf && !(cf & 1); i++)
		cf = lj_read((cf & ~3ull) + LJ_CFRAME_PREV);
	if (!(cf & 1) || w->resumes >= 8)
		return false;
	raw = cf & ~3ull;
	ret = lj_read(raw + LJ_CFRAME_RET);
	if (ret < w->vm_begin || ret >= w->vm_end)
		return false;
	/* The resumer's VM called the resume: its C frame starts where the resume's ends. */
	L = lj_read(raw + LJ_CFRAME_SIZE + LJ_CFRAME_L);
	if (!L || L == w->L || lj_read(L + LJ_L_GLREF) != w->g)
		return false;
	w->resumes++;
	start_at_saved(w, L);
	w->pc = 0;
	return true;
}

/* One frame: its function recorded (if Lua's, or a fast function), then down its link. */
static long lua_walk_step(__u32 i, void *unused)
{
	__u64 fn, ftsz, bc, proto, delta;
	__u32 zero = 0, ffid, pos, line;
	struct lua_walk *w;
	struct py_walk *pw;
	struct py_stack *s;

	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	pw = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w || !pw)
		return 1;
	s = &pw->stack;
	if (w->f <= w->stack_lo + 8) {
		mark_entry(w, s);
		return to_resumer(w) ? 0 : lua_walk_end(w, PY_WALK_WHOLE);
	}
	if (s->n >= PY_MAX_FRAMES)
		return lua_walk_end(w, PY_WALK_DEPTH);
	fn = frame_function(w->f + 8);
	ftsz = lj_read(w->f);
	if (!fn || !ftsz)
		return lua_walk_end(w, PY_WALK_FAULT);
	ffid = lj_read_u32(fn + LJ_FN_FFID) & 0xff;
	if (!w->skip) {
		if (ffid == 0) {
			bc = lj_read(fn + LJ_FN_PC);
			proto = bc - LJ_PROTO_SIZE;
			line = lj_read_u32(proto + LJ_PROTO_FIRSTLINE);
			pos = w->pc > bc && w->pc - bc <= (__u64)lj_read_u32(proto + LJ_PROTO_SIZEBC) * 4
				? (__u32)((w->pc - bc) / 4 - 1) : LUA_NO_PC;
			record(w, s, proto, pos, line);
		} else if (ffid == 1) {
			/* A C function: its native frames show it; kept for where the VM was entered. */
			record(w, s, lj_read(fn + LJ_FN_F), LUA_FRAME_CFUNC, 0);
		} else {
			record(w, s, 0, LUA_FRAME_BUILTIN | ffid, 0);
		}
	}
	w->skip = false;
	if (!(ftsz & 3)) {
		/* Called from Lua: ftsz is the return pc; the call's A says where the caller's frame is. */
		__u8 a;

		if (bpf_probe_read_user(&a, 1, (void *)(ftsz - 3)))
			return lua_walk_end(w, PY_WALK_FAULT);
		delta = (2 + (__u64)a) * 8;
		w->pc = ftsz;
		/* The frame recorded last (a vararg function's, for its own frame) is the callee. */
		if (s->n) {
			s->frames[(s->n - 1) & (PY_MAX_FRAMES - 1)].instr |= LUA_FRAME_CALLED;
			w->hash = (w->hash ^ LUA_FRAME_CALLED) * 0x9e3779b97f4a7c15ull;
		}
	} else {
		delta = ftsz & ~7ull;
		w->pc = 0;
		switch (ftsz & 7) {
		case 3:	/* vararg: the same function's frame below, the one its caller made */
			w->skip = true;
			break;
		case 1:	/* called from C */
		case 5:	/* a protected call from C */
			mark_entry(w, s);
			break;
		}
	}
	if (!delta || delta > w->f - w->stack_lo)
		return lua_walk_end(w, PY_WALK_FAULT);
	w->f -= delta;
	return 0;
}

/*
 * After the native walk: the Lua frames into py_scratch's stack and their
 * hash into key->py_hash, as Python's; nothing when lua_before_walk found
 * no Lua running.
 */
__noinline int lua_sample(struct sample_key *key, struct sample_stats *st)
{
	struct lua_walk *w;
	struct py_walk *pw;
	__u32 zero = 0;

	if (!key || !st)
		return 0;
	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	pw = bpf_map_lookup_elem(&py_scratch, &zero);
	if (!w || !pw || !w->ready || w->pid != key->pid)
		return 0;
	w->ready = false;
	w->hash = 0x84222325cbf29ce4ull ^ w->state;
	w->end = PY_WALK_DEPTH;
	w->recorded = 0;
	w->resumes = 0;
	w->skip = false;
	pw->stack.n = 0;
	bpf_loop(PY_MAX_FRAMES * 2, lua_walk_step, NULL, 0);
	pw->stack.end = w->end;
	pw->stack.runtime = RUNTIME_LUAJIT;
	pw->stack.state = w->state;
	st->v[STAT_LUA_STATE + (w->state < LUA_VM_STATE_MAX ? w->state : 0)]++;
	if (!pw->stack.n) {
		st->v[STAT_LUA_NO_FRAME]++;
		return 0;
	}
	st->v[STAT_LUA_END + (w->end < PY_WALK_END_MAX ? w->end : PY_WALK_FAULT)]++;
	key->py_hash = (w->hash ^ w->end) ? w->hash ^ w->end : 1;
	return 1;
}

/* The sample's Lua frames walked and stored; the fallback's cause, or -1 (python_sample's twin). */
__noinline int luajit_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	int cause = -1;

	if (!key || !st || !lua_sample(key, st))
		return -1;
	store_interp_stack(set & 1, key, st, &cause, &lua_notices);
	return cause;
}

#endif
