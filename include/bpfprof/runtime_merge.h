/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A runtime's merge apart from its processes: where a sample's
 * interpreter frames go among its native frames, given what names them.
 * Each runtime's module declares its NAME_merge_frames in its own header
 * (NAME_merge.h) and merges through it with the
 * names its namer read from each process; the unit tests with names of
 * their own, on recorded stacks.
 */
#ifndef BPFPROF_RUNTIME_MERGE_H
#define BPFPROF_RUNTIME_MERGE_H

#include <stdint.h>

#include "bpfprof/interp.h"

struct profile;
struct raw_interp;

/* What names a sample's runtime frames, for a merge. */
struct merge_names {
	/* The profile location of frames[g] of the runtime's frames[0..n) (newest first). */
	uint32_t (*locate)(void *ctx, struct profile *p, const struct interp_frame *frames, uint32_t g,
			   uint32_t n);
	/*
	 * A frame that stands for several (compiled code with the methods
	 * inlined at its pc): the locations of frames[g], innermost first, into
	 * out (room for max); how many. NULL: locate's one.
	 */
	uint32_t (*locations)(void *ctx, struct profile *p, const struct interp_frame *frames,
			      uint32_t g, uint32_t n, uint32_t *out, uint32_t max);
	/* A runtime's own question: the C function its method entry me runs; 0: not known. */
	uint64_t (*cfunc)(void *ctx, uint64_t me);
	void *ctx;
};

/*
 * Each merge writes frames[0..n) (location ids, leaf first) with the
 * runtime's frames in place of the VM's native frames into out (room for
 * max), and returns how many it wrote; *unmatched: the runtime's frames
 * the native stack showed no VM frame for, put at its root.
 */

#endif
