/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* PHP's merge apart from its processes (runtime_merge.h says how a merge goes). */
#ifndef BPFPROF_PHP_MERGE_H
#define BPFPROF_PHP_MERGE_H

#include <stdint.h>

#include "bpfprof/php_frames.h"
#include "bpfprof/runtime_merge.h"

/*
 * PHP: the frames of rr where vm says: each entry's frames in place of its
 * execute_ex (and the JIT code running in its frame), an entry of C
 * functions alone above the zend_call_function that called them; *vms:
 * the VM's native frames met.
 */
uint32_t php_merge_frames(struct profile *p, const struct php_process *vm,
			  const struct raw_interp *rr, const struct merge_names *nm,
			  const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			  uint32_t *vms, uint32_t *unmatched);

#endif
