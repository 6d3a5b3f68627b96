/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The interpreters whose frames are read at a sample, side by side:
 * python.bpf.h now. A runtime is a header beside it, with a line in each
 * function below: its processes found from the mappings the walk reads,
 * its frames walked where a sample's stacks are (key.bpf.h).
 */
#ifndef BPFPROF_RUNTIMES_BPF_H
#define BPFPROF_RUNTIMES_BPF_H

#include "common.bpf.h"
#include "python.bpf.h"
#include "settings.bpf.h"

/* A process maps code of the file at e (unwind.bpf.h's scan): is it an interpreter's? */
static __always_inline void runtime_mapping_seen(__u32 tgid, __u32 gen, const struct exec_mapping *e)
{
	python_mapping_seen(tgid, gen, e);
}

/*
 * The thread's interpreter frames walked and stored into the set; *cause
 * set if a map had no room (the sample must go whole).
 */
static __always_inline void runtime_frames(struct sample_key *key, __u32 set, struct sample_stats *st,
					   int *cause)
{
	int py_cause;

	if (settings.python_frames) {
		py_cause = python_sample(key, set, st);
		/*
		 * The verifier knows nothing of what a global function
		 * returns: bounded where it sees it (-1, none, is 3 then).
		 */
		_Static_assert(CAUSE_MAX == 3, "the mask below is CAUSE_MAX");
		asm volatile("%[c] &= 3" : [c] "+r"(py_cause));
		if (py_cause < CAUSE_MAX)
			*cause = py_cause;
	}
}

#endif
