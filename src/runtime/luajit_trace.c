// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The Lua frames at a place in a LuaJIT trace, from its snapshots
 * (luajit_trace.h). The layout is LuaJIT 2.1's with GC64 (two-slot
 * frames, LJ_FR2): a frame's function in one slot, its link above it; a
 * snapshot lists the slots it restores, each with the IR reference of the
 * value, and ends with one 64-bit word: the newest frame's pc << 8 | its
 * function's slot.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/luajit_trace.h"
#include "bpfprof/util.h"

#define SNAPSHOT_SIZE	12		/* SnapShot: mapofs u32, ref u16, mcofs u16, nslots, topslot, nent, count */
#define SNAP_MAPOFS	0
#define SNAP_MCOFS	6
#define SNAP_NENT	10
#define SNAPSHOTS_MAX	8192		/* LuaJIT stops a trace at 500 (maxsnap) */
#define SNAP_FRAME	0x010000u	/* SnapEntry: a frame link's slot */
#define REF_BIAS	0x8000u		/* IR constants below it */
#define IR_KGC		24		/* IR opcodes (lj_ir.h IRDEF order) */
#define IR_KNUM		28
#define IRT_FUNC	8
#define GCT_FUNC	8		/* a GC object's type byte (~LJ_TFUNC) */
#define GCT_PROTO	7
#define FRAME_TYPE	7		/* a frame link's low bits: 0 a Lua frame's return pc, 3 vararg */
#define FRAME_LUA	0
#define FRAME_VARG	3
#define SLOTS		256		/* a snapshot's slots are bytes */

struct trace {
	interp_read_fn *read;
	void *ctx;
	uint64_t ir;
	uint32_t nk;
};

static uint64_t u64_at(const uint8_t *b, size_t at)
{
	uint64_t v;

	memcpy(&v, b + at, 8);
	return v;
}

static uint32_t u32_at(const uint8_t *b, size_t at)
{
	uint32_t v;

	memcpy(&v, b + at, 4);
	return v;
}

static uint16_t u16_at(const uint8_t *b, size_t at)
{
	uint16_t v;

	memcpy(&v, b + at, 2);
	return v;
}

/* The 64-bit constant at IR reference ref, of opcode op (GC64 keeps it in the next slot). */
static int ir_constant(const struct trace *t, uint32_t ref, uint8_t op, uint64_t *v)
{
	uint8_t ins[16];
	int err;

	if (ref < t->nk || ref + 1 >= REF_BIAS)
		return -EINVAL;
	if ((err = t->read(t->ctx, t->ir + (uint64_t)ref * 8, ins, sizeof(ins))))
		return err;
	if (ins[5] != op || (op == IR_KGC && (ins[4] & 0x1f) != IRT_FUNC))
		return -EINVAL;
	*v = u64_at(ins, 8);
	return 0;
}

/* What a function constant runs: its prototype (first line, size), or its fast function's id. */
static int function_at(const struct trace *t, uint64_t fn, struct lua_trace_frame *f,
		       uint32_t *sizebc)
{
	uint8_t b[0x28], p[LJ_PROTO_FIRSTLINE + 4];
	uint64_t pc;
	int err;

	fn &= LJ_GCPTR_MASK;
	if (!fn || (fn & 7))
		return -EINVAL;
	if ((err = t->read(t->ctx, fn, b, sizeof(b))))
		return err;
	if (b[9] != GCT_FUNC)
		return -EINVAL;
	memset(f, 0, sizeof(*f));
	*sizebc = 0;
	if (b[LJ_FN_FFID] != 0) {
		/* A C function's own frames show it; a fast function is named by its id. */
		f->pos = b[LJ_FN_FFID] == 1 ? LUA_FRAME_CFUNC : LUA_FRAME_BUILTIN | b[LJ_FN_FFID];
		return 0;
	}
	pc = u64_at(b, LJ_FN_PC);
	if (pc < LJ_PROTO_SIZE || (err = t->read(t->ctx, pc - LJ_PROTO_SIZE, p, sizeof(p))))
		return err ? err : -EINVAL;
	if (p[9] != GCT_PROTO)
		return -EINVAL;
	f->proto = pc - LJ_PROTO_SIZE;
	f->firstline = u32_at(p, LJ_PROTO_FIRSTLINE);
	*sizebc = u32_at(p, LJ_PROTO_SIZEBC);
	return 0;
}

/*
 * The position of pc in a prototype of sizebc instructions: the
 * instruction at pc (the newest frame's, which runs next), or the call
 * before it (a return pc); LUA_NO_PC when not inside.
 */
static uint32_t position(const struct lua_trace_frame *f, uint32_t sizebc, uint64_t pc, bool ret)
{
	uint64_t bc = f->proto + LJ_PROTO_SIZE, at;

	if (!f->proto || !pc || pc < bc || (pc - bc) % 4)
		return LUA_NO_PC;
	at = (pc - bc) / 4 - ret;
	return at >= 1 && at < sizebc ? (uint32_t)at : LUA_NO_PC;
}

int luajit_trace_position(interp_read_fn *read, void *ctx, uint64_t trace, uint32_t traceno,
			  uint32_t ofs, uint64_t first_proto, struct lua_trace_position *out)
{
	uint16_t fn_ref[SLOTS] = { 0 }, link_ref[SLOTS] = { 0 };
	uint8_t head[LJ_TRACE_TRACENO + 2], snap[SNAPSHOT_SIZE], *snaps;
	struct trace t = { read, ctx, 0, 0 };
	uint32_t nsnap, nsnapmap, lo, hi, mapofs, nent, i, sizebc, first_sizebc = 0;
	uint64_t snapmap, pcbase, pc, link;
	uint32_t entries[SLOTS + 2];
	bool ret = false, skip = false;
	int slot, top, err;

	memset(out, 0, sizeof(*out));
	if (!trace || (trace & 7))
		return -EINVAL;
	if ((err = read(ctx, trace, head, sizeof(head))))
		return err;
	if (head[LJ_TRACE_GCT] != LJ_GCT_TRACE || u16_at(head, LJ_TRACE_TRACENO) != traceno)
		return -ESTALE;
	nsnap = u16_at(head, LJ_TRACE_NSNAP);
	nsnapmap = u32_at(head, LJ_TRACE_NSNAPMAP);
	snapmap = u64_at(head, LJ_TRACE_SNAPMAP);
	t.ir = u64_at(head, LJ_TRACE_IR);
	t.nk = u32_at(head, LJ_TRACE_NK);
	if (!nsnap || nsnap > SNAPSHOTS_MAX || ofs >= u32_at(head, LJ_TRACE_SZMCODE))
		return -EINVAL;

	/* The last snapshot whose code starts at or before ofs (their offsets ascend). */
	snaps = xmalloc((size_t)nsnap * SNAPSHOT_SIZE);
	err = read(ctx, u64_at(head, LJ_TRACE_SNAP), snaps, (size_t)nsnap * SNAPSHOT_SIZE);
	for (lo = 0, hi = nsnap; !err && lo < hi;) {
		uint32_t mid = (lo + hi) / 2;

		if (ofs < u16_at(snaps + mid * SNAPSHOT_SIZE, SNAP_MCOFS))
			hi = mid;
		else
			lo = mid + 1;
	}
	if (!err)
		memcpy(snap, snaps + (lo ? lo - 1 : 0) * SNAPSHOT_SIZE, sizeof(snap));
	free(snaps);
	if (err)
		return err;
	mapofs = u32_at(snap, SNAP_MAPOFS);
	nent = snap[SNAP_NENT];
	if (mapofs > nsnapmap || nent + 2 > nsnapmap - mapofs)
		return -EINVAL;
	if ((err = read(ctx, snapmap + (uint64_t)mapofs * 4, entries, (nent + 2) * 4)))
		return err;

	/* Each frame above the first: its function's slot and its link's, above it. */
	for (i = 0; i < nent; i++) {
		slot = entries[i] >> 24;
		if (slot >= 2 && (entries[i] & SNAP_FRAME))
			link_ref[slot] = entries[i] & 0xffff;
		fn_ref[slot] = entries[i] & 0xffff;
	}
	pcbase = entries[nent] | (uint64_t)entries[nent + 1] << 32;
	pc = pcbase >> 8;
	top = pcbase & 0xff;
	if (top && !link_ref[top + 1])
		return -EINVAL;

	/* Newest first: each frame at its pc, then down its link to the frame below. */
	for (slot = top; slot >= 2; slot--) {
		struct lua_trace_frame f;

		if (!link_ref[slot + 1])
			continue;
		if ((err = ir_constant(&t, fn_ref[slot], IR_KGC, &link)) ||
		    (err = function_at(&t, link, &f, &sizebc)))
			return err;
		if (!skip) {
			if (out->n == LUA_TRACE_INLINED_MAX)
				return -EINVAL;
			if (f.proto)
				f.pos = position(&f, sizebc, pc, ret);
			out->inlined[out->n++] = f;
		}
		skip = false;
		if ((err = ir_constant(&t, link_ref[slot + 1], IR_KNUM, &link)))
			return err;
		ret = (link & FRAME_TYPE) == FRAME_LUA;
		pc = ret ? link : 0;
		if (ret)
			out->inlined[out->n - 1].pos |= LUA_FRAME_CALLED;
		/* A vararg function's frame: the same function's below it, made by its caller. */
		skip = (link & FRAME_TYPE) == FRAME_VARG;
	}

	/*
	 * The first frame: the trace's, unless a tail call there put another
	 * function constant in slot 0 (a side trace may hold there what it
	 * inherited: not a constant, the same function).
	 */
	if (!fn_ref[0] || ir_constant(&t, fn_ref[0], IR_KGC, &link) ||
	    function_at(&t, link, &out->first, &first_sizebc)) {
		uint8_t p[LJ_PROTO_FIRSTLINE + 4];

		if ((err = read(ctx, first_proto, p, sizeof(p))))
			return err;
		if (p[9] != GCT_PROTO)
			return -EINVAL;
		out->first.proto = first_proto;
		out->first.firstline = u32_at(p, LJ_PROTO_FIRSTLINE);
		first_sizebc = u32_at(p, LJ_PROTO_SIZEBC);
	}
	if (out->first.proto)
		out->first.pos = position(&out->first, first_sizebc, pc, ret);
	return 0;
}
