/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The interpreters whose frames are read at a sample, side by side:
 * python.bpf.h, luajit.bpf.h and ruby.bpf.h. A runtime is a header beside them, with a
 * line in each function below: its processes found from the mappings the
 * walk reads, what it needs before the native walk (LuaJIT: where a trace
 * puts the VM's frame), its frames walked where a sample's stacks are
 * (key.bpf.h). A sample is of one process, so of one runtime at most:
 * its frames go in the key's interp_hash, whichever runtime walked them.
 */
#ifndef BPFPROF_RUNTIMES_BPF_H
#define BPFPROF_RUNTIMES_BPF_H

#include "common.bpf.h"
#include "luajit.bpf.h"
#include "python.bpf.h"
#include "ruby.bpf.h"
#include "settings.bpf.h"

/* A process maps code of the file at e (unwind.bpf.h's scan): is it an interpreter's? */
static __always_inline void runtime_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	python_mapping_seen(tgid, gen, e);
	luajit_mapping_seen(tgid, gen, e);
	ruby_mapping_seen(tgid, gen, e);
}

/* Before the native walk from regs: code of a runtime's the walk is to step over (jit). */
static __always_inline void runtime_before_walk(struct sample_key *key, const struct user_regs *regs,
						struct jit_frame *jit, struct sample_stats *st)
{
	jit->hi = 0;
	jit->vm_sp = 0;
	jit->below = 0;
	if (runtime_on(RUNTIME_LUAJIT))
		lua_before_walk(key, regs, jit, st);
}

/* A global function's result, bounded where the verifier sees it (-1, none, is 3 then). */
static __always_inline void take_cause(int c, int *cause)
{
	_Static_assert(CAUSE_MAX == 3, "the mask below is CAUSE_MAX");
	asm volatile("%[c] &= 3" : [c] "+r"(c));
	if (c < CAUSE_MAX)
		*cause = c;
}

/*
 * The thread's interpreter frames walked and stored into the set; *cause
 * set if a map had no room (the sample must go whole).
 */
static __always_inline void runtime_frames(struct sample_key *key, __u32 set, struct sample_stats *st,
					   int *cause)
{
	if (runtime_on(RUNTIME_PYTHON))
		take_cause(python_sample(key, set, st), cause);
	if (runtime_on(RUNTIME_LUAJIT) && !key->interp_hash)
		take_cause(luajit_sample(key, set, st), cause);
	if (runtime_on(RUNTIME_RUBY) && !key->interp_hash)
		take_cause(ruby_sample(key, set, st), cause);
}

#endif
