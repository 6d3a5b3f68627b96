/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Java's merge apart from its processes (runtime_merge.h says how a merge goes). */
#ifndef BPFPROF_JAVA_MERGE_H
#define BPFPROF_JAVA_MERGE_H

#include <stdint.h>

#include "bpfprof/java_frames.h"
#include "bpfprof/runtime_merge.h"

/*
 * Java: each of ri's frames in place of the native frame it stands for
 * (JAVA_FRAME_AT: an index into the user stack, frames[user_base..n)),
 * with nm->locations' locations (a compiled frame's inlined methods,
 * innermost first), or nm->locate's one; the other frames as they are.
 * How many written into out; 0 if the places do not hold (a frame's
 * place outside the user stack, or not below the frame before it's): the
 * sample is then left alone.
 */
uint32_t java_merge_frames(struct profile *p, const struct raw_interp *ri, uint32_t user_base,
			   const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			   uint32_t *out, uint32_t max);

#endif
