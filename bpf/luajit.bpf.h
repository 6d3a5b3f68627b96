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
 * the frame is marked (INTERP_FRAME_ENTRY), so that
 * userspace puts each run of frames in place of its VM's native frame. A
 * coroutine resumed from Lua continues with its resumer's frames: the VM's
 * C frame of the resume lies right below the resumer's, which records the
 * resumer's lua_State.
 *
 * A sample in a trace's machine code (which has no CFI), or in what the
 * trace called, is stepped over to the VM's C frame the trace runs on
 * (struct jit_frame): the native walk then goes on through the VM and the
 * C that called it.
 *
 * Each read of the process's memory costs (some 100 ns): what one struct
 * holds is read at once, and a frame costs three or four reads.
 */
#ifndef BPFPROF_LUAJIT_BPF_H
#define BPFPROF_LUAJIT_BPF_H

#include "common.bpf.h"
#include "interp.bpf.h"
#include "bpfprof/luajit_frames.h"
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
	__u32 below;		/* enum below_vm: the walk below the VM's frame (unwind.bpf.h) */
	__u32 vm_leaf;		/* enum vm_leaf: the leaf is the VM's, where its CFI does not hold */
	__u64 edge_ra_at;	/* VM_LEAF_EDGE: where the return address is */
	__u64 edge_rbp_at;	/* VM_LEAF_EDGE: where the caller's rbp is saved; 0: rbp holds it */
};

enum vm_leaf {
	VM_LEAF_NONE = 0,
	VM_LEAF_OFF_FRAME,	/* off its C frame: on at vm_sp at once */
	VM_LEAF_EDGE,		/* in an entry's pushes or an exit's pops: on at edge_ra_at */
};

enum below_vm {
	BELOW_VM_NONE = 0,
	BELOW_VM_AT,		/* the walk stops at the VM's frame: walk_below_vm() goes on */
	BELOW_VM_WALKING,	/* from there */
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
	__uint(max_entries, 16384);
} luajit_globals SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, 1 << 20);
} luajit_notices SEC(".maps");

/* A function's header as one read gives it: GCfunc from two bytes before its ffid to its pc. */
struct lj_func_head {
	__u8 unused[2];
	__u8 ffid;		/* LJ_FN_FFID */
	__u8 nupvalues;
	__u8 pad[20];
	__u64 pc;		/* LJ_FN_PC */
};
#define LJ_FUNC_HEAD_AT (LJ_FN_FFID - 2)
_Static_assert(__builtin_offsetof(struct lj_func_head, pc) == LJ_FN_PC - LJ_FUNC_HEAD_AT,
	       "struct lj_func_head is GCfunc's");

/* A lua_State as one read gives it: from its glref to its cframe. */
struct lj_state {
	__u64 glref, gclist, base, top, maxstack, stack, openupval, env, cframe;
};
#define LJ_STATE_AT LJ_L_GLREF
_Static_assert(__builtin_offsetof(struct lj_state, base) == LJ_L_BASE - LJ_STATE_AT &&
	       __builtin_offsetof(struct lj_state, stack) == LJ_L_STACK - LJ_STATE_AT &&
	       __builtin_offsetof(struct lj_state, cframe) == LJ_L_CFRAME - LJ_STATE_AT,
	       "struct lj_state is lua_State's");

/* The global state's fields the walk reads, as one read gives them: vmstate to jit_base. */
#define LJ_GLOBAL_AT LJ_G_VMSTATE
#define LJ_GLOBAL_BYTES (LJ_G_JIT_BASE + 8 - LJ_G_VMSTATE)
#define LJ_GLOBAL(w, type, field) (*(type *)&(w)->global[(field) - LJ_GLOBAL_AT])

/*
 * What one walk has read, so that it reads each thing once: the Lua stack
 * below the frame it is at, a window of slots read at once (frames lie a
 * few slots apart); the functions met (a recursion meets one many times),
 * in a small table of their own. Only for the one walk: the stack and its
 * functions are what they are at the sample, but not a moment later.
 */
#define LJ_WINDOW_SLOTS 64
/* How far below its C frame the VM's code may run: the exit handler's ExitState and more. */
#define LJ_OFF_FRAME_MAX 1024
#define LJ_FUNCS_SEEN 4

struct lj_func_seen {
	__u64 fn;		/* 0: empty */
	__u64 pc;		/* its bytecode (a Lua function's), as its header says */
	__u64 f;		/* a C function's address */
	__u32 firstline;	/* a Lua function's prototype's */
	__u8 ffid;
};

/*
 * The walk's state, per CPU, and its frames (an interp_stack, which
 * interp_store stores).
 */
struct lua_walk {
	__u64 window[LJ_WINDOW_SLOTS];
	__u64 window_lo;	/* the address of window[0] */
	__u32 window_n;		/* slots read into it; 0: none */
	__u32 funcs_next;	/* where the next function seen goes */
	struct lj_func_seen funcs[LJ_FUNCS_SEEN];
	__u64 calls_pc[LJ_FUNCS_SEEN];	/* return pcs met, and their call's A (the caller's frame) */
	__u8 calls_a[LJ_FUNCS_SEEN];
	__u32 calls_next;
	struct interp_stack stack;
	struct user_regs regs;
	__u32 pid;		/* whose: lua_sample is for the same thread */
	__u64 vm_begin, vm_end;
	__u64 g, L;
	__u64 stack_lo;		/* the lua_State's stack: frames above it */
	__u64 f;		/* the next frame's link slot (its base - 8) */
	__u64 pc;		/* the next frame's pc (the instruction after the one running); 0: unknown */
	__u64 hash;
	__u64 trace;		/* the trace the sample is in (or called from), 0: none */
	__u32 trace_ofs;	/* where in its code */
	__u32 traceno;
	__s32 vmstate;
	__u32 state;		/* enum lua_vm_state */
	__u32 end;		/* enum interp_walk_end, once ended */
	__u32 recorded;		/* frames recorded since the last VM entry */
	__u32 resumes;		/* coroutines left for their resumers */
	bool ready;		/* lua_before_walk found g and L: lua_sample walks */
	bool skip;		/* the next frame is a vararg function's own: already recorded */
	__u8 global[LJ_GLOBAL_BYTES];
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

	if (!runtime_on(RUNTIME_LUAJIT) || !(f = bpf_map_lookup_elem(&luajit_files, &e->file)))
		return;
	p.vm_begin = e->start - e->offset + f->vm_begin_rel;
	p.vm_end = e->start - e->offset + f->vm_end_rel;
	p.known = f->known;
	p.dispatch_to_g = f->dispatch_to_g;
	p.g_j = f->g_j;
	p.ffnames = f->ffnames;
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

/* The function of the frame whose base is base (its slot below the link), or 0. */
static __always_inline __u64 frame_function(__u64 base)
{
	__u64 tv = lj_read(base - 16);

	/* The tag is the top 17 bits, sign-extended: an arithmetic shift. */
	return (__u32)((__s64)tv >> 47) == LJ_ITYPE_FUNC ? tv & LJ_GCPTR_MASK : 0;
}

/*
 * A frame of function fn whose next instruction is at pc: whether pc lies
 * in fn's bytecode (a Lua function's; at its first while the VM enters it).
 * The top frame's registers are trusted only then.
 */
static __always_inline bool pc_in_function(__u64 fn, __u64 pc)
{
	struct lj_func_head h;
	__u32 sizebc;

	if (!fn || bpf_probe_read_user(&h, sizeof(h), (void *)(fn + LJ_FUNC_HEAD_AT)) || h.ffid ||
	    !h.pc || pc < h.pc)
		return false;
	sizebc = lj_read_u32(h.pc - LJ_PROTO_SIZE + LJ_PROTO_SIZEBC);
	return pc <= h.pc + (__u64)sizebc * 4;
}

/*
 * Whether the frame at base is a fast function's or a C function's whose
 * link checks out: the VM calling it (PC already the callee's pseudo
 * bytecode, in the global state) or running a fast function's code, some
 * 4 % of an interpreted run's samples. A Lua caller's return pc must lie
 * in the function its call's A finds.
 */
static __always_inline bool builtin_frame(__u64 base, __u64 stack_lo)
{
	struct lj_func_head h;
	__u64 fn = frame_function(base), link, caller;
	__u8 a = 0;

	if (!fn || bpf_probe_read_user(&h, sizeof(h), (void *)(fn + LJ_FUNC_HEAD_AT)) || !h.ffid)
		return false;
	link = lj_read(base - 8);
	if (link & 3)
		return link > 7 && (link & ~7ull) <= base - 8 - stack_lo;
	if (!link || bpf_probe_read_user(&a, 1, (void *)(link - 3)))
		return false;
	caller = base - (2 + (__u64)a) * 8;
	return caller > stack_lo && pc_in_function(frame_function(caller), link);
}

/*
 * The lua_State L's frames from its saved base, the newest's pc from its C
 * frame (*cframe); false if L cannot be read or is in no call into the VM
 * (no C frame: the thread runs no Lua on it).
 */
static __always_inline bool start_at_saved(struct lua_walk *w, __u64 L, __u64 *cframe)
{
	struct lj_state s;
	__u64 cf;

	if (bpf_probe_read_user(&s, sizeof(s), (void *)(L + LJ_STATE_AT)) || !(cf = s.cframe & ~3ull))
		return false;
	w->L = L;
	w->stack_lo = s.stack;
	w->f = s.base - 8;
	w->pc = lj_read(cf + LJ_CFRAME_PC);
	if (w->pc && !pc_in_function(frame_function(s.base), w->pc))
		w->pc = 0;
	if (cframe)
		*cframe = cf;
	return true;
}

/* A trace's fields the walk reads, as one read gives them: startpt to traceno. */
struct lj_trace {
	__u64 startpt, startpc;
	__u32 startins, szmcode;
	__u64 mcode;
	__u32 mcloop;
	__u16 nchild, spadjust;
	__u16 traceno, link;
	__u32 more;
};
_Static_assert(__builtin_offsetof(struct lj_trace, startpc) == LJ_TRACE_STARTPC - LJ_TRACE_STARTPT &&
	       __builtin_offsetof(struct lj_trace, szmcode) == LJ_TRACE_SZMCODE - LJ_TRACE_STARTPT &&
	       __builtin_offsetof(struct lj_trace, mcode) == LJ_TRACE_MCODE - LJ_TRACE_STARTPT &&
	       __builtin_offsetof(struct lj_trace, spadjust) == LJ_TRACE_SPADJUST - LJ_TRACE_STARTPT &&
	       __builtin_offsetof(struct lj_trace, traceno) == LJ_TRACE_TRACENO - LJ_TRACE_STARTPT,
	       "struct lj_trace is GCtrace's");

/*
 * Where in trace T (read as t) the sample is: the instruction running, or
 * the call to the C (FFI) or VM helper running. The trace runs with the
 * VM's stack pointer (its C frame) lowered by spadjust, so a call from it
 * left its return address right below that. 0 with w->trace_ofs, or -1.
 */
static __always_inline int trace_position(struct lua_walk *w, __u64 T, const struct lj_trace *t,
					  __u64 ip, __u64 cframe)
{
	__u64 at = ip;

	if (at < t->mcode || at >= t->mcode + t->szmcode) {
		at = lj_read(cframe - t->spadjust - 8) - 1;
		if (at < t->mcode || at >= t->mcode + t->szmcode)
			return -1;
	}
	if (at - t->mcode > LUA_TRACE_OFS_MASK)
		return -1;
	w->trace = T;
	w->trace_ofs = at - t->mcode;
	w->traceno = t->traceno;
	return 0;
}

/*
 * Whether the VM's code at the sample runs with its stack pointer off its
 * C frame cframe (whose L is the running lua_State): entering a trace
 * (BC_JLOOP lowers it 16 bytes before the jump) or leaving one (the exit
 * handler's saved registers, until it is back on the C frame), where the
 * VM's CFI (its C frame at sp) does not hold. Not a subroutine's (its
 * return address: the C frame 8 bytes up).
 */
static __always_inline bool off_vm_frame(const struct user_regs *r, __u64 L, __u64 cframe)
{
	return cframe > r->sp && cframe - r->sp <= LJ_OFF_FRAME_MAX &&
	       lj_read(cframe + LJ_CFRAME_L) == L && lj_read(r->sp + LJ_CFRAME_L) != L &&
	       lj_read(r->sp + 8 + LJ_CFRAME_L) != L;
}

/*
 * The VM's entries (lj_vm_pcall and the others: push rbp, rbx, r15, r14;
 * sub rsp, N) and its exit (add rsp, N; pop r14, r15, rbx, rbp; ret) run
 * with part of the C frame its CFI describes: a sample there walked on by
 * it from a heap address (seen: 2 to 9 of jit.bc's 110,000 samples at
 * 4999 Hz, their Lua frames on [truncated]). Its return address is where
 * the pushes done or the pops left put it. The code around pc matched
 * against both sequences, pc at each instruction of them in turn.
 */
static const __u8 vm_entry_code[] = { 0x55, 0x53, 0x41, 0x57, 0x41, 0x56, 0x48, 0x83, 0xec };
static const __u8 vm_exit_code[] = { 0x48, 0x83, 0xc4, 0, 0x41, 0x5e, 0x41, 0x5f, 0x5b, 0x5d, 0xc3 };
#define VM_EDGE_BEFORE 10	/* bytes read before pc: the longest way into either */

/* Whether code (read from pc - VM_EDGE_BEFORE) holds seq with pc at seq[at]; seq[skip] any. */
static __always_inline bool vm_code_is(const __u8 *code, const __u8 *seq, __u32 len, __u32 at,
				       __u32 skip)
{
	__u32 t;

	for (t = 0; t < len; t++)
		if (t != skip && code[VM_EDGE_BEFORE - at + t] != seq[t])
			return false;
	return true;
}

static __always_inline bool vm_edge(const struct user_regs *r, struct jit_frame *jit)
{
	/* pc's place in each sequence, and the words then between sp and the return address */
	static const __u8 entry_at[] = { 0, 1, 2, 4, 6 }, exit_at[] = { 4, 6, 8, 9, 10 };
	__u8 code[VM_EDGE_BEFORE + sizeof(vm_exit_code)];
	__u32 i;

	if (bpf_probe_read_user(code, sizeof(code), (void *)(r->ip - VM_EDGE_BEFORE)))
		return false;
	for (i = 0; i < sizeof(entry_at); i++)
		if (vm_code_is(code, vm_entry_code, sizeof(vm_entry_code), entry_at[i], 99)) {
			/* i pushes done; rbp not yet changed */
			jit->edge_ra_at = r->sp + 8 * i;
			jit->edge_rbp_at = 0;
			return true;
		}
	for (i = 0; i < sizeof(exit_at); i++)
		if (vm_code_is(code, vm_exit_code, sizeof(vm_exit_code), exit_at[i], 3)) {
			/* 4 - i pops left, rbp's the last */
			jit->edge_ra_at = r->sp + 8 * (4 - i);
			jit->edge_rbp_at = i < 4 ? jit->edge_ra_at - 8 : 0;
			return true;
		}
	return false;
}

/*
 * Before the native walk: is the sampled thread's process LuaJIT's, what is
 * its VM doing; how the native walk steps over code whose CFI does not
 * hold (jit). A global function: the verifier checks it once.
 */
__noinline int lua_before_walk(struct sample_key *key, const struct user_regs *r,
			       struct jit_frame *jit, struct sample_stats *st)
{
	struct luajit_process *p;
	struct lj_trace t;
	struct lua_walk *w;
	__u32 zero = 0;
	__u64 g, L, base, cframe = 0;

	if (!key || !r || !jit || !st)
		return 0;
	jit->hi = 0;
	jit->vm_sp = 0;
	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	if (!w)
		return 0;
	w->ready = false;
	if (!runtime_on(RUNTIME_LUAJIT) || !(p = bpf_map_lookup_elem(&luajit_procs, &key->tgid)) ||
	    p->gen != key->gen)
		return 0;
	st->v[STAT_LUA(SAMPLES)]++;
	if (!p->known) {
		st->v[STAT_LUA(UNKNOWN_BUILD)]++;
		return 0;
	}
	g = global_state(p, r, key->tgid, key->pid);
	if (!g || bpf_probe_read_user(w->global, sizeof(w->global), (void *)(g + LJ_GLOBAL_AT))) {
		st->v[STAT_LUA(NO_STATE)]++;
		return 0;
	}
	L = LJ_GLOBAL(w, __u64, LJ_G_CUR_L) & LJ_GCPTR_MASK;
	/* A lua_State outside every call into the VM has no C frame: the thread runs no Lua. */
	if (!L || !start_at_saved(w, L, &cframe)) {
		st->v[STAT_LUA(NOT_RUNNING)]++;
		return 0;
	}
	w->regs = *r;
	w->vm_begin = p->vm_begin;
	w->vm_end = p->vm_end;
	w->g = g;
	w->vmstate = LJ_GLOBAL(w, __s32, LJ_G_VMSTATE);
	w->state = vm_state_of(w->vmstate);
	w->ready = true;
	w->pid = key->pid;
	w->trace = 0;
	base = LJ_GLOBAL(w, __u64, LJ_G_JIT_BASE);
	if (base) {
		/*
		 * In a trace, or in what it called (C through the FFI, a helper,
		 * the GC): the trace's code has no CFI, and it runs on the VM's C
		 * frame, L's, lowered by its own. Its frames start at jit_base.
		 */
		jit->vm_sp = cframe;
		jit->vm_pc = p->vm_begin + 1;
		w->f = base - 8;
		w->pc = 0;
	}
	if (r->ip >= p->vm_begin && r->ip < p->vm_end && off_vm_frame(r, L, cframe)) {
		/* Seen: 0.1 % of jit.bc's samples walked on from a heap address, under their Lua. */
		jit->vm_sp = cframe;
		jit->vm_pc = p->vm_begin + 1;
		jit->vm_leaf = VM_LEAF_OFF_FRAME;
	} else if (r->ip >= p->vm_begin && r->ip < p->vm_end && vm_edge(r, jit)) {
		jit->vm_leaf = VM_LEAF_EDGE;
	}
	if (w->state == LUA_VM_TRACE) {
		__u64 traces = lj_read(g + p->g_j + LJ_J_TRACE), T = 0;
		__u32 sizetrace = lj_read_u32(g + p->g_j + LJ_J_SIZETRACE);

		if ((__u32)w->vmstate < sizetrace)
			T = lj_read(traces + (__u64)w->vmstate * 8) & LJ_GCPTR_MASK;
		if (!T || bpf_probe_read_user(&t, sizeof(t), (void *)(T + LJ_TRACE_STARTPT)))
			t.mcode = t.szmcode = t.startpc = 0;
		/* Not in the trace's own code: in C it called (FFI) or a helper of the VM's. */
		if (!t.mcode || r->ip < t.mcode || r->ip >= t.mcode + t.szmcode)
			w->state = LUA_VM_C;
		/*
		 * The frames the trace inlined are on no stack: its first function,
		 * where it starts; userspace finds the rest from where in the trace.
		 */
		if (base && t.startpc) {
			w->pc = t.startpc + 4;
			trace_position(w, T, &t, r->ip, cframe);
		}
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
		} else if (r->rdx > w->stack_lo && builtin_frame(r->rdx, w->stack_lo)) {
			w->f = r->rdx - 8;
			w->pc = 0;
		} else if (r->rdx > w->stack_lo) {
			/*
			 * Between frames: returning, BASE still the callee's, its function's slot
			 * already given a result, PC the caller's return pc; or calling, BASE
			 * the callee's, PC not yet its. Either way PC is after the caller's
			 * CALL, whose A says where the caller's frame is: the sample is the
			 * caller's at that call (over 1 % of an interpreted run's samples).
			 */
			__u8 a = 0;
			__u64 caller;

			bpf_probe_read_user(&a, 1, (void *)(r->rbx - 3));
			caller = r->rdx - (2 + (__u64)a) * 8;
			if (caller > w->stack_lo && pc_in_function(frame_function(caller), r->rbx)) {
				w->f = caller - 8;
				w->pc = r->rbx;
			}
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
static __always_inline void mark_entry(struct lua_walk *w)
{
	__u32 n = w->stack.n;

	if (n && w->recorded)
		w->stack.frames[(n - 1) & (INTERP_MAX_FRAMES - 1)].instr |= INTERP_FRAME_ENTRY;
	w->recorded = 0;
}

static __always_inline void record(struct lua_walk *w, __u64 code, __u32 instr, __u32 line)
{
	__u32 n = w->stack.n;
	struct interp_frame *fr = &w->stack.frames[n & (INTERP_MAX_FRAMES - 1)];

	fr->code = code;
	fr->instr = instr;
	fr->firstlineno = line;
	w->stack.n = n + 1;
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
	__u64 cf, raw, ret, L;
	int i;

	/* The main thread is no coroutine. */
	if (w->L == (LJ_GLOBAL(w, __u64, LJ_G_MAINTHREAD) & LJ_GCPTR_MASK))
		return false;
	cf = lj_read(w->L + LJ_L_CFRAME);
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
	if (!L || L == w->L || lj_read(L + LJ_L_GLREF) != w->g || !start_at_saved(w, L, NULL))
		return false;
	w->resumes++;
	w->pc = 0;
	return true;
}

/*
 * The two slots at addr (a frame's function and its link), from the
 * window if it holds them, else from a new window: the slots up to them,
 * down to the stack's start, in one read.
 */
static __always_inline bool frame_slots(struct lua_walk *w, __u64 addr, __u64 *tv, __u64 *link)
{
	__u64 lo, idx, bytes;

	if (addr & 7)
		return false;
	if (addr >= w->window_lo && addr + 16 <= w->window_lo + (__u64)w->window_n * 8) {
		idx = (addr - w->window_lo) / 8;
		if (idx > LJ_WINDOW_SLOTS - 2)
			return false;
		*tv = w->window[idx];
		*link = w->window[idx + 1];
		return true;
	}
	lo = addr + 16 - LJ_WINDOW_SLOTS * 8;
	if (lo < w->stack_lo && w->stack_lo < addr)
		lo = w->stack_lo & ~7ull;
	bytes = addr + 16 - lo;
	w->window_n = 0;
	if (bytes > LJ_WINDOW_SLOTS * 8 || bytes < 16 ||
	    bpf_probe_read_user(w->window, bytes, (void *)lo)) {
		/* The window could not be had (its low end unmapped): the two slots alone. */
		__u64 two[2];

		if (bpf_probe_read_user(two, sizeof(two), (void *)addr))
			return false;
		*tv = two[0];
		*link = two[1];
		return true;
	}
	w->window_lo = lo;
	w->window_n = bytes / 8;
	*tv = w->window[(bytes / 8 - 2) & (LJ_WINDOW_SLOTS - 1)];
	*link = w->window[(bytes / 8 - 1) & (LJ_WINDOW_SLOTS - 1)];
	return true;
}

/* What the walk needs of function fn: from those this walk met, else read (and kept). */
static __always_inline struct lj_func_seen *function_seen(struct lua_walk *w, __u64 fn)
{
	struct lj_func_head h;
	struct lj_func_seen *s;
	__u32 i;

	for (i = 0; i < LJ_FUNCS_SEEN; i++)
		if (w->funcs[i].fn == fn)
			return &w->funcs[i];
	if (bpf_probe_read_user(&h, sizeof(h), (void *)(fn + LJ_FUNC_HEAD_AT)))
		return NULL;
	s = &w->funcs[w->funcs_next++ & (LJ_FUNCS_SEEN - 1)];
	s->fn = fn;
	s->pc = h.pc;
	s->ffid = h.ffid;
	s->f = 0;
	s->firstline = 0;
	if (h.ffid == 0)
		s->firstline = lj_read_u32(h.pc - LJ_PROTO_SIZE + LJ_PROTO_FIRSTLINE);
	else if (h.ffid == 1)
		s->f = lj_read(fn + LJ_FN_F);
	return s;
}

/* The A operand of the call instruction before return pc ret: as this walk read it, else read. */
static __always_inline bool call_a(struct lua_walk *w, __u64 ret, __u8 *a)
{
	__u32 i;

	for (i = 0; i < LJ_FUNCS_SEEN; i++)
		if (w->calls_pc[i] == ret) {
			*a = w->calls_a[i];
			return true;
		}
	if (bpf_probe_read_user(a, 1, (void *)(ret - 3)))
		return false;
	i = w->calls_next++ & (LJ_FUNCS_SEEN - 1);
	w->calls_pc[i] = ret;
	w->calls_a[i] = *a;
	return true;
}

/* One frame: its function recorded (if Lua's, or a fast function), then down its link. */
static long lua_walk_step(__u32 i, void *unused)
{
	struct lj_func_seen *s;
	__u64 tv, fn, ftsz, delta;
	__u32 zero = 0, pos;
	struct lua_walk *w;

	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	if (!w)
		return 1;
	if (w->f <= w->stack_lo + 8) {
		mark_entry(w);
		return to_resumer(w) ? 0 : lua_walk_end(w, INTERP_WALK_WHOLE);
	}
	if (w->stack.n >= INTERP_MAX_FRAMES)
		return lua_walk_end(w, INTERP_WALK_DEPTH);
	/* The frame's function and its link, side by side. */
	if (!frame_slots(w, w->f - 8, &tv, &ftsz))
		return lua_walk_end(w, INTERP_WALK_FAULT);
	fn = (__u32)((__s64)tv >> 47) == LJ_ITYPE_FUNC ? tv & LJ_GCPTR_MASK : 0;
	if (!fn || !ftsz || !(s = function_seen(w, fn)))
		return lua_walk_end(w, INTERP_WALK_FAULT);
	if (!w->skip) {
		if (s->ffid == 0) {
			/* Where in the bytecode; userspace checks it against the prototype's size. */
			pos = w->pc > s->pc && w->pc - s->pc < (__u64)LUA_NO_PC * 4
				? (__u32)((w->pc - s->pc) / 4 - 1) : LUA_NO_PC;
			record(w, s->pc - LJ_PROTO_SIZE, pos, s->firstline);
		} else if (s->ffid == 1) {
			/* A C function: its native frames show it; kept for where the VM was entered. */
			record(w, s->f, LUA_FRAME_CFUNC, 0);
		} else {
			record(w, 0, LUA_FRAME_BUILTIN | s->ffid, 0);
		}
	}
	w->skip = false;
	if (!(ftsz & 3)) {
		/* Called from Lua: ftsz is the return pc; the call's A says where the caller's frame is. */
		__u8 a;

		if (!call_a(w, ftsz, &a))
			return lua_walk_end(w, INTERP_WALK_FAULT);
		delta = (2 + (__u64)a) * 8;
		w->pc = ftsz;
		/* The frame recorded last (a vararg function's, for its own frame) is the callee. */
		if (w->stack.n) {
			w->stack.frames[(w->stack.n - 1) & (INTERP_MAX_FRAMES - 1)].instr |= LUA_FRAME_CALLED;
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
			mark_entry(w);
			break;
		}
	}
	if (!delta || delta > w->f - w->stack_lo)
		return lua_walk_end(w, INTERP_WALK_FAULT);
	w->f -= delta;
	return 0;
}

/*
 * After the native walk: the Lua frames into the scratch's stack and their
 * hash into key->interp_hash; nothing when lua_before_walk found no Lua running.
 */
__noinline int lua_sample(struct sample_key *key, struct sample_stats *st)
{
	struct lua_walk *w;
	__u32 zero = 0;

	if (!key || !st)
		return 0;
	w = bpf_map_lookup_elem(&lua_scratch, &zero);
	if (!w)
		return 0;
	if (!w->ready || w->pid != key->pid)
		return 0;
	w->ready = false;
	w->hash = 0x84222325cbf29ce4ull ^ w->state;
	w->end = INTERP_WALK_DEPTH;
	w->recorded = 0;
	w->resumes = 0;
	w->skip = false;
	w->stack.n = 0;
	w->window_n = 0;
	w->funcs_next = 0;
	w->calls_next = 0;
	__builtin_memset(w->funcs, 0, sizeof(w->funcs));
	__builtin_memset(w->calls_pc, 0, sizeof(w->calls_pc));
	if (w->trace) {
		record(w, w->trace, LUA_FRAME_TRACE | w->trace_ofs, w->traceno);
		w->recorded = 0;
	}
	bpf_loop(INTERP_MAX_FRAMES * 2, lua_walk_step, NULL, 0);
	w->stack.end = w->end;
	w->stack.runtime = RUNTIME_LUAJIT;
	w->stack.state = w->state;
	st->v[STAT_LUA(STATE) + (w->state < LUA_VM_STATE_MAX ? w->state : 0)]++;
	if (!w->stack.n) {
		st->v[STAT_LUA(NO_FRAME)]++;
		return 0;
	}
	st->v[STAT_LUA(END) + (w->end < INTERP_WALK_END_MAX ? w->end : INTERP_WALK_FAULT)]++;
	key->interp_hash = (w->hash ^ w->end) ? w->hash ^ w->end : 1;
	return 1;
}

/* The sample's Lua frames walked and stored; the fallback's cause, or -1. */
__noinline int luajit_sample(struct sample_key *key, __u32 set, struct sample_stats *st)
{
	struct lua_walk *w;
	__u32 zero = 0;
	int cause = -1;

	if (!key || !st || !lua_sample(key, st) || !(w = bpf_map_lookup_elem(&lua_scratch, &zero)))
		return -1;
	interp_store(set & 1, key, st, &cause, &luajit_notices, &w->stack);
	return cause;
}

#endif
