/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * CPython's frames in userspace: which files are interpreters (their
 * layout told to the BPF program, which walks the frames: bpf/python.bpf.h),
 * the code objects of every Python stack named while their process lives,
 * and each sample's Python frames put in place of the native
 * _PyEval_EvalFrameDefault calls that ran them.
 *
 *   files      an interpreter file (python3.11, libpython3.12.so) by the
 *              kernel's identity of it; the version and layout it has
 *   processes  per tgid: where its runtime is, its code objects named
 *   locations  (process, code object, instruction) -> profile location
 *
 * The session reaches it through the runtimes set only (runtime.h:
 * python_runtime, at the end of python.c, adapts these calls).
 */
#ifndef BPFPROF_PYTHON_H
#define BPFPROF_PYTHON_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/profile.h"
#include "bpfprof/python_frames.h"
#include "bpfprof/sampler.h"

struct python;

/*
 * Python frames on, with the program's maps of interpreter files, of
 * Python processes and of processes' mappings, and its ring of new Python
 * stacks (sampler_runtime_maps); gen(ctx, tgid) is a process's generation as
 * the program counts it. A thread of its own names the code objects of each
 * new stack within milliseconds; every python_* call is safe beside it.
 */
struct python *python_new(const struct runtime_maps *m, uint32_t (*gen)(void *ctx, uint32_t tgid),
			  void *ctx);
void python_free(struct python *py);

/* Python frames named in userspace (src/runtime/python.c). */
struct python_stats {
	uint32_t files;			/* interpreter files seen */
	uint64_t codes, code_errors;	/* code objects named; not readable (freed, bad, gone) */
	uint64_t merged;		/* samples whose Python frames were merged with native ones */
	uint64_t unmatched;		/* frames of eval calls not on the native stack: put at its root */
	uint64_t unmatched_samples;	/* samples with such frames */
};

/*
 * A file just opened (fd, at path) with this identity: if it holds an
 * interpreter, the program is told, and a version bpfprof cannot read is
 * named on stderr once. True if it is an interpreter.
 */
bool python_file_opened(struct python *py, const struct unwind_file_key *key, int fd,
			const char *path);
/* A process maps code of file key at start (file offset offset): Python if the file is. */
void python_process_maps(struct python *py, uint32_t tgid, const struct unwind_file_key *key,
			 uint64_t start, uint64_t offset);
/* Every new Python stack the program has sent so far named now (before a drain merges them). */
void python_take_notices(struct python *py);
/*
 * frames[0..n) (leaf first, location ids) with each _PyEval_EvalFrameDefault
 * replaced by the Python frames its eval call ran, at most max in all;
 * returns the new count.
 */
uint32_t python_merge(struct python *py, struct profile *p, uint32_t tgid,
		      const struct raw_interp *rp, uint32_t *frames, uint32_t n, uint32_t max);
/* After a drain: processes gone since the drain before are forgotten. */
void python_after_drain(struct python *py);
/* The profile was folded (profile_fold): location ids changed. */
void python_renumber(struct python *py);
void python_stats(struct python *py, struct python_stats *out);

#endif
