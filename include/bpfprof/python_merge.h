/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Python's merge apart from its processes (runtime_merge.h says how a merge goes). */
#ifndef BPFPROF_PYTHON_MERGE_H
#define BPFPROF_PYTHON_MERGE_H

#include <stdint.h>

#include "bpfprof/python_frames.h"
#include "bpfprof/runtime_merge.h"

/*
 * Python: each native frame of function eval_name (a string id of p), or
 * at an address in eval's code (NULL: none), is one eval call.
 */
uint32_t python_merge_frames(struct profile *p, uint32_t eval_name, const struct py_eval_code *eval,
			     const struct raw_interp *rp,
			     const struct merge_names *nm, const uint32_t *frames, uint32_t n,
			     uint32_t *out, uint32_t max, uint32_t *unmatched);

#endif
