/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the BPF program's LuaJIT frame walk (bpf/luajit.bpf.h) and
 * userspace (src/runtime/luajit*.c) agree on: where a LuaJIT 2.1 build
 * (GC64, x86-64) keeps its VM code and global state, which files hold one,
 * and how a sample's Lua frames are recorded. Compiled by both sides.
 *
 * A sample's Lua frames travel as every runtime's do (struct interp_stack,
 * interp.h), with stack.runtime RUNTIME_LUAJIT, in these terms:
 *   frame.code        the function's GCproto address (Lua functions), or 0
 *                     with LUA_FRAME_BUILTIN in instr (a fast function);
 *   frame.instr       the bytecode position (instructions from the
 *                     prototype's first; LUA_NO_PC: not known), or the fast
 *                     function's id; | INTERP_FRAME_ENTRY on the first frame one
 *                     entry into the VM ran (its caller is C); | LUA_FRAME_CALLED when the frame below
 *                     called this one from Lua (its call site names it);
 *   frame.firstlineno the prototype's first line, read with it (a freed
 *                     and reused address reads another);
 *   a first frame with LUA_FRAME_TRACE: where in a trace the sample was.
 *   stack.state       enum lua_vm_state of the sample.
 */
#ifndef BPFPROF_LUAJIT_FRAMES_H
#define BPFPROF_LUAJIT_FRAMES_H

#include "bpfprof/interp.h"
#include "bpfprof/unwind_row.h"

/* LuaJIT's id among the runtimes (interp.h). */
#define RUNTIME_LUAJIT 1

/* A file holding a LuaJIT VM (libluajit-5.1.so, a luajit executable, or a host linking it in). */
struct luajit_file {
	/* Addresses less the code's (vaddr - offset). */
	__u64 vm_begin_rel;		/* the VM's code: lj_vm_asm_begin .. lj_vm_ffi_call's end */
	__u64 vm_end_rel;
	__u32 known;			/* 0: a LuaJIT build bpfprof cannot read (native frames only) */
	__u16 dispatch_to_g;		/* global_State = r14 (DISPATCH) - this, in the VM and traces */
	__u16 g_j;			/* jit_State's offset in global_State (GG_State.J - GG_State.g) */
	__u16 flavour;			/* enum luajit_flavour */
	__u16 ffnames;			/* userspace's: its fast functions' names (0: none) */
	__u16 reserved[2];
};

enum luajit_flavour {
	LUAJIT_UPSTREAM = 1,		/* LuaJIT/LuaJIT v2.1 */
	LUAJIT_OPENRESTY = 2,		/* openresty/luajit2 (lua_getexdata exported) */
};

/* Offsets the same in every supported 2.1 build (GC64, x86-64). */
#define LJ_G_VMSTATE	0xb8		/* global_State.vmstate: int32 ~LJ_VMST_* or a trace number */
#define LJ_G_MAINTHREAD	0xc0		/* global_State.mainthref */
#define LJ_G_CUR_L	0x170		/* global_State.cur_L */
#define LJ_G_JIT_BASE	0x178		/* global_State.jit_base */
#define LJ_J_TRACE	0x180		/* jit_State.trace: GCRef[] by trace number */
#define LJ_J_SIZETRACE	0x18c		/* jit_State.sizetrace */
#define LJ_L_GLREF	0x10		/* lua_State.glref */
#define LJ_L_BASE	0x20
#define LJ_L_STACK	0x38
#define LJ_L_CFRAME	0x50
#define LJ_L_STACKSIZE	0x58		/* in slots */
#define LJ_FN_FFID	0x0a		/* GCfunc.ffid: 0 Lua, 1 C, more a fast function */
#define LJ_FN_PC	0x20		/* GCfuncL.pc: the prototype's bytecode (proto + LJ_PROTO_SIZE) */
#define LJ_FN_F		0x28		/* GCfuncC.f */
#define LJ_PROTO_SIZE	0x68		/* sizeof(GCproto): the bytecode follows it */
#define LJ_PROTO_SIZEBC	0x0c
#define LJ_PROTO_CHUNKNAME 0x40
#define LJ_PROTO_FIRSTLINE 0x48
#define LJ_PROTO_NUMLINE 0x4c
#define LJ_PROTO_LINEINFO 0x50
#define LJ_TRACE_GCT	0x09		/* GCtrace's GC type: LJ_GCT_TRACE */
#define LJ_TRACE_NSNAP	0x0a		/* u16: snapshots */
#define LJ_TRACE_NINS	0x0c		/* the IR's end (biased by LJ_REF_BIAS) */
#define LJ_TRACE_IR	0x20		/* IRIns *, biased: ir[ref] is the IR at ref */
#define LJ_TRACE_NK	0x28		/* the lowest IR constant (biased) */
#define LJ_TRACE_NSNAPMAP 0x2c
#define LJ_TRACE_SNAP	0x30		/* SnapShot[nsnap] */
#define LJ_TRACE_SNAPMAP 0x38		/* SnapEntry[nsnapmap] */
#define LJ_TRACE_STARTPT 0x40		/* GCtrace.startpt */
#define LJ_TRACE_STARTPC 0x48
#define LJ_TRACE_SZMCODE 0x54
#define LJ_TRACE_MCODE	0x58
#define LJ_TRACE_SPADJUST 0x66		/* u16: how far the trace lowers the VM's stack pointer */
#define LJ_TRACE_TRACENO 0x68		/* u16 */
#define LJ_GCT_TRACE	9		/* ~LJ_TTRACE */
#define LJ_CFRAME_SIZE	0x50		/* the VM's C frame */
#define LJ_CFRAME_L	0x10		/* SAVE_L */
#define LJ_CFRAME_PC	0x18		/* SAVE_PC */
#define LJ_CFRAME_PREV	0x20		/* SAVE_CFRAME */
#define LJ_CFRAME_RET	0x48		/* the VM's return address into C */
#define LJ_GCPTR_MASK	0x7fffffffffffull
#define LJ_ITYPE_FUNC	0xfffffff7u	/* a TValue's tag (u64 >> 47) for a function */

/* In py_frame.instr of a Lua frame. */
#define LUA_FRAME_BUILTIN 0x40000000u	/* a fast function: the low bits are its id */
#define LUA_FRAME_CALLED  0x20000000u	/* called from the Lua frame below (by a call instruction) */
#define LUA_FRAME_CFUNC   0x10000000u	/* a C function (code: its address): its native frames show it */
/*
 * Where in a trace's machine code the sample was (the first frame, above
 * the trace's first function's): code the GCtrace's address, firstlineno
 * its number, the low 16 bits the offset in its code (of the instruction
 * running, or of the call into what runs). Userspace puts the functions
 * the trace inlined there (luajit_trace.h).
 */
#define LUA_FRAME_TRACE   0x08000000u
#define LUA_TRACE_OFS_MASK 0x0000ffffu
#define LUA_FRAME_POS_MASK 0x00ffffffu
#define LUA_NO_PC         0x00ffffffu

/* What the VM was doing at the sample: interp_stack.state of a LuaJIT stack. */
enum lua_vm_state {
	LUA_VM_INTERP = 0,		/* interpreting bytecode */
	LUA_VM_TRACE,			/* running a compiled trace */
	LUA_VM_C,			/* in a C function (C API, or FFI from a trace) */
	LUA_VM_GC,			/* collecting garbage */
	LUA_VM_EXIT,			/* leaving a trace */
	LUA_VM_RECORD,			/* recording a trace */
	LUA_VM_OPT,			/* optimising it */
	LUA_VM_ASM,			/* assembling it */
	LUA_VM_STATE_MAX
};

/* LuaJIT's counters in its stats block (interp.h's RUNTIME_STAT). */
enum lua_stat {
	LUA_STAT_SAMPLES,	/* recorded samples of LuaJIT processes */
	LUA_STAT_UNKNOWN_BUILD,	/* a LuaJIT whose layout bpfprof cannot read */
	LUA_STAT_NO_STATE,	/* its global state not found yet (no sample in the VM so far) */
	LUA_STAT_NOT_RUNNING,	/* the thread runs no Lua (outside every call into the VM) */
	LUA_STAT_NO_FRAME,	/* walked, no frame found */
	LUA_STAT_STATE,		/* walks by what the VM was doing (enum lua_vm_state) */
	LUA_STAT_END = LUA_STAT_STATE + LUA_VM_STATE_MAX,	/* walks that found frames, by their end */
	LUA_STAT_MAX = LUA_STAT_END + INTERP_WALK_END_MAX
};
#define STAT_LUA(what) RUNTIME_STAT(RUNTIME_LUAJIT, LUA_STAT_##what)
_Static_assert(LUA_STAT_MAX <= RUNTIME_STATS, "its counters fit its block");

/* A LuaJIT process: its file's layout, where its VM code is, its global state once found. */
struct luajit_process {
	__u64 vm_begin, vm_end;		/* the VM's code in the process */
	__u32 gen;			/* the process's generation it holds for */
	__u32 known;
	__u16 dispatch_to_g, g_j;
	__u16 ffnames;			/* its VM file's luajit_file.ffnames */
	__u16 reserved;
};

#endif
