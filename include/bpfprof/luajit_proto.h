/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A LuaJIT 2.1 function prototype (GCproto, GC64 x86-64) named from
 * another process's memory: its file, lines and line table, the line of
 * a bytecode position, and the name a call site gives the function it
 * calls, as LuaJIT's own debug info derives it (lj_debug_funcname). The
 * Lua frames of a sample (luajit_frames.h) carry prototype addresses and
 * bytecode positions; this turns them into names and lines. Memory is
 * read through one callback, so the same code names a live process and a
 * test's own memory; everything read is bounded and checked, so a freed
 * or scribbled address gives an error, never a made-up name. Never prints.
 *
 * Opcode numbers differ between LuaJIT versions. The ones used here are
 * LuaJIT 2.1's (97 opcodes, ISLT = 0 ... FUNCCW = 96), which both Debian
 * 12 builds share (upstream 2.1.0-beta3+git20220320 and OpenResty
 * 2.1-20230119: checked in both binaries). A build numbering them
 * otherwise would need its table passed in.
 */
#ifndef BPFPROF_LUAJIT_PROTO_H
#define BPFPROF_LUAJIT_PROTO_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/luajit_frames.h"
#include "bpfprof/interp_names.h"

/* Bounds on what is read: a prototype's size, a chunk name's bytes, a name's. */
#define LJ_PROTO_MAX (64u << 20)
#define LJ_CHUNKNAME_MAX 4096
#define LJ_NAME_MAX 256

struct lua_proto_info {
	char *chunkname;	/* as stored: "@/srv/x.lua", "=stdin", source (cut) */
	char *file;		/* as a frame shows it: luajit_chunk_file(chunkname) */
	bool builtin;		/* one of LuaJIT's own (firstline ~0): no lines */
	uint32_t firstline;	/* the "function" keyword's line; 0 for a main chunk */
	uint32_t numline;	/* lines after firstline the function spans */
	uint32_t sizebc;	/* instructions, the header (position 0) included */
	void *lineinfo;		/* offsets of positions 1.. from firstline; NULL: none */
	uint8_t line_width;	/* of lineinfo's entries: 1, 2 or 4 bytes */
};

/*
 * The GCproto at proto: 0 with *out filled (release it), or a negative
 * errno: -EINVAL when it is not a prototype (its type byte, sizes out of
 * range, no function header first, debug info outside it, a chunk name
 * that is not a string), -EFAULT etc. when unreadable.
 */
int luajit_proto_read(interp_read_fn *read, void *ctx, uint64_t proto, struct lua_proto_info *out);
void luajit_proto_release(struct lua_proto_info *p);

/*
 * The source line of bytecode position pos (instructions from the
 * header; in a frame, the instruction running or the call it made);
 * firstline when unknown: LUA_NO_PC, out of range, no line table.
 */
uint32_t luajit_proto_line(const struct lua_proto_info *p, uint32_t pos);

/*
 * The name the instruction at position pos of caller_proto gives the
 * function it calls, as LuaJIT's lj_debug_funcname/lj_debug_slotname
 * derive it, with the table a field came from where the bytecode says
 * it: "alpha" (a global), "M.serve" (a field; "serve" when the table's
 * name is not known), "obj:method" (a method call), "helper" (a local,
 * from varinfo), "up" (an upvalue, from uvinfo), "__index" etc. (a
 * metamethod run by that instruction; a generic for's generator is
 * "(for generator)", as LuaJIT says). 0 with *name (malloc'd; at most
 * LJ_NAME_MAX bytes of each part read, and invalid UTF-8 and control
 * characters as U+FFFD), -ENOENT when the bytecode does not say (an
 * anonymous function, a call's result; LUA_NO_PC), -EINVAL for a
 * position out of range, or a negative errno as luajit_proto_read's.
 */
int luajit_call_name(interp_read_fn *read, void *ctx, uint64_t caller_proto, uint32_t pos,
		     char **name);

/*
 * A chunk name as a frame shows it (malloc'd): "@/srv/app/x.lua" ->
 * "/srv/app/x.lua" (whole), "=stdin" -> "stdin", source text ->
 * [string "first line..."] as LuaJIT's short_src; builtin: LuaJIT's
 * "[builtin:name]".
 */
char *luajit_chunk_file(const char *chunkname, bool builtin);

/* LuaJIT 2.1's number of the opcode called name ("CALL"), or -1. For tests and callers' checks. */
int luajit_bc_op(const char *name);

#endif
