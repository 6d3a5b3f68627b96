/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* LuaJIT's merge apart from its processes (runtime_merge.h says how a merge goes). */
#ifndef BPFPROF_LUAJIT_MERGE_H
#define BPFPROF_LUAJIT_MERGE_H

#include <stdint.h>

#include "bpfprof/luajit_frames.h"
#include "bpfprof/runtime_merge.h"

/*
 * LuaJIT: frames lf[0..ln) as they stand with no trace running, state the
 * VM's (enum lua_vm_state), its code where vm says. *vms: the VM's native
 * frames met; none, and out is not to be taken (the thread runs no Lua).
 */
uint32_t luajit_merge_frames(struct profile *p, const struct luajit_process *vm, uint32_t state,
			     const struct interp_frame *lf, uint32_t ln, const struct merge_names *nm,
			     const uint32_t *frames, uint32_t n, uint32_t *out, uint32_t max,
			     uint32_t *vms, uint32_t *unmatched);

#endif
