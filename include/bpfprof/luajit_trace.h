/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The Lua frames at a place in a LuaJIT trace's machine code, read from
 * the trace in another process's memory (GCtrace, LuaJIT 2.1 GC64 x86-64).
 *
 * A trace inlines the Lua functions it calls: their frames are on no
 * stack while it runs, so the BPF walk sees the trace's first function
 * only (bpf/luajit.bpf.h) and records where in the trace's code it was
 * (LUA_FRAME_TRACE). The trace's snapshots say what the stack would hold
 * at each of its exits: the functions called (IR constants in the frame
 * slots), the return pc below each (the link slots' constants), the pc
 * of the newest. Each snapshot also records where its code starts
 * (mcofs), so the snapshot at an offset is the last that starts at or
 * before it: its frames are those running there, as when LuaJIT itself
 * unwinds a trace (lj_trace_unwind).
 */
#ifndef BPFPROF_LUAJIT_TRACE_H
#define BPFPROF_LUAJIT_TRACE_H

#include <stdint.h>

#include "bpfprof/luajit_frames.h"
#include "bpfprof/interp_names.h"

/* Frames a trace inlines, at most (LuaJIT's own limit, maxinline depth, is lower). */
#define LUA_TRACE_INLINED_MAX 16

struct lua_trace_frame {
	uint64_t proto;		/* GCproto, or 0 for a fast function (LUA_FRAME_BUILTIN | id in pos) */
	uint32_t firstline;	/* the prototype's, as read */
	uint32_t pos;		/* as a walked frame's instr: position | LUA_FRAME_CALLED */
};

struct lua_trace_position {
	uint32_t n;		/* inlined frames, newest first */
	struct lua_trace_frame inlined[LUA_TRACE_INLINED_MAX];
	struct lua_trace_frame first;	/* the trace's first frame (at jit_base), where it is */
};

/*
 * The frames at offset ofs of trace number traceno at address trace,
 * whose first frame runs prototype first_proto: 0 with *out filled, or a
 * negative errno: -ESTALE when the address holds another trace now (it was
 * flushed), -EINVAL when what it holds is not a trace's, or its snapshot
 * cannot be followed (a function not a constant, a link not a return pc,
 * sizes out of range), -EFAULT etc. when unreadable.
 */
int luajit_trace_position(interp_read_fn *read, void *ctx, uint64_t trace, uint32_t traceno,
			  uint32_t ofs, uint64_t first_proto, struct lua_trace_position *out);

#endif
