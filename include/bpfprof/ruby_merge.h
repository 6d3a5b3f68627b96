/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* Ruby's merge apart from its processes (runtime_merge.h says how a merge goes). */
#ifndef BPFPROF_RUBY_MERGE_H
#define BPFPROF_RUBY_MERGE_H

#include <stdint.h>

#include "bpfprof/ruby_frames.h"
#include "bpfprof/runtime_merge.h"

/* Ruby: the frames of rr, vm_exec_core and rb_vm_exec where vm says; *vms: the VM's native frames met. */
uint32_t ruby_merge_frames(struct profile *p, const struct ruby_process *vm,
			   const struct raw_interp *rr, const struct merge_names *nm,
			   const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			   uint32_t *vms, uint32_t *unmatched);

#endif
