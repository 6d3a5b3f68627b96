/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The runtimes' merges apart from their processes: where a sample's
 * Python, Lua or Ruby frames go among its native frames, given what names
 * them. python.c, luajit.c and ruby.c merge through these with the names
 * their namers read from each process; the unit tests with names of their
 * own, on recorded stacks.
 */
#ifndef BPFPROF_RUNTIME_MERGE_H
#define BPFPROF_RUNTIME_MERGE_H

#include <stdint.h>

#include "bpfprof/lua_frames.h"
#include "bpfprof/py_frames.h"
#include "bpfprof/rb_frames.h"

struct profile;
struct raw_interp;

/* What names a sample's runtime frames, for a merge. */
struct merge_names {
	/* The profile location of frames[g] of the runtime's frames[0..n) (newest first). */
	uint32_t (*locate)(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
			   uint32_t n);
	/* Ruby's: the C function C method entry me runs; 0 when not known. */
	uint64_t (*cfunc)(void *ctx, uint64_t me);
	void *ctx;
};

/*
 * Each merge writes frames[0..n) (location ids, leaf first) with the
 * runtime's frames in place of the VM's native frames into out (room for
 * max), and returns how many it wrote; *unmatched: the runtime's frames
 * the native stack showed no VM frame for, put at its root.
 */

/* Python: each native frame of function eval_name (a string id of p) is one eval call. */
uint32_t python_merge_frames(struct profile *p, uint32_t eval_name, const struct raw_interp *rp,
			     const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			     uint32_t *out, uint32_t max, uint32_t *unmatched);

/*
 * LuaJIT: frames lf[0..ln) as they stand with no trace running, state the
 * VM's (enum lua_vm_state), its code where vm says. *vms: the VM's native
 * frames met; none, and out is not to be taken (the thread runs no Lua).
 */
uint32_t luajit_merge_frames(struct profile *p, const struct luajit_process *vm, uint32_t state,
			     const struct interp_frame *lf, uint32_t ln, const struct merge_names *nm,
			     const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			     uint32_t *vms, uint32_t *unmatched);

/* Ruby: the frames of rr, vm_exec_core and rb_vm_exec where vm says; *vms as LuaJIT's. */
uint32_t ruby_merge_frames(struct profile *p, const struct ruby_process *vm,
			   const struct raw_interp *rr, const struct merge_names *nm,
			   const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			   uint32_t *vms, uint32_t *unmatched);

#endif
