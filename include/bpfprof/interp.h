/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An interpreter's frames as every runtime's walk records them at a sample
 * (bpf/interp.bpf.h) and userspace reads them (src/runtime/): one shape for
 * all, each runtime saying in its own header what a frame's fields hold
 * (NAME_frames.h). Compiled by both sides.
 */
#ifndef BPFPROF_INTERP_H
#define BPFPROF_INTERP_H

#ifndef __bpf__
#include <linux/types.h>	/* the BPF side has them from vmlinux.h */
#endif

/* Interpreter frames walked per sample, at most; a longer stack is cut at its root. */
#define INTERP_MAX_FRAMES 64

/* One interpreter frame: what it runs (code), where in it (instr), and a check of code. */
struct interp_frame {
	__u64 code;			/* what it runs: a code object, a prototype, an iseq... */
	__u32 instr;			/* the instruction, with the runtime's flag bits */
	__u32 firstlineno;		/* read with code: tells a reused address */
};

/* In instr: the first frame of one entry into the interpreter (a C-level eval call). */
#define INTERP_FRAME_ENTRY 0x80000000u

/* How a walk of interpreter frames went: interp_stack.end. */
enum interp_walk_end {
	INTERP_WALK_WHOLE = 0,		/* to the thread's first frame */
	INTERP_WALK_DEPTH,		/* cut at INTERP_MAX_FRAMES */
	INTERP_WALK_FAULT,		/* a frame could not be read (freed under the walk, scribbled) */
	INTERP_WALK_END_MAX
};

/*
 * Which interpreter a stack of frames is of (interp_stack.runtime): an id
 * below RUNTIME_KINDS that each runtime's header defines (RUNTIME_NAME
 * in its NAME_frames.h), and the userspace table checks is its own.
 */
#define RUNTIME_KINDS 8

/*
 * Each runtime's counters: a block of RUNTIME_STATS in the per-CPU stats
 * (sample.h's STAT_RUNTIME), at its id's place; their meaning is the
 * runtime's (its header's enum of them).
 */
#define RUNTIME_STATS 24
#define RUNTIME_STAT(kind, i) (STAT_RUNTIME + (kind) * RUNTIME_STATS + (i))

/* A sample's interpreter frames, newest first; stored by a hash of them, as walked stacks. */
struct interp_stack {
	__u32 n;			/* frames */
	__u8 end;			/* enum interp_walk_end */
	__u8 runtime;			/* enum runtime_kind */
	__u16 state;			/* what the runtime's VM was doing, in its own terms */
	struct interp_frame frames[INTERP_MAX_FRAMES];
};

/* A stack new to the drain, sent at once: userspace names its frames while the process lives. */
struct interp_notice {
	__u32 tgid;
	__u32 gen;			/* the process's generation (sample_key.gen) */
	struct interp_stack stack;
};

#endif
