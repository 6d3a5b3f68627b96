/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * User stacks without frame pointers: unwound from a copy of the top of
 * the stack and the registers at the sample, with the binaries' call frame
 * information (.eh_frame, else .debug_frame), as perf --call-graph dwarf does. libdw parses
 * the CFI; the rules are evaluated here against the copied stack, and each
 * code address's frame is cached (the CFI itself is read once per file).
 */
#ifndef BPFPROF_UNWIND_H
#define BPFPROF_UNWIND_H

#include <elfutils/libdw.h>
#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/intern.h"

/* How an unwind ended. */
enum unwind_end {
	UNWIND_COMPLETE,	/* the outermost frame: the CFI says there is no caller */
	UNWIND_NO_CFI,		/* code without CFI (JIT, no .eh_frame nor .debug_frame), or unmapped */
	UNWIND_NO_STACK,	/* the next frame lies beyond the copied stack */
	UNWIND_DEPTH,		/* cut at the depth limit */
	UNWIND_BAD,		/* a rule we cannot follow, or a stack going the wrong way */
	UNWIND_END_MAX
};

/*
 * The CFI of the file pc is in, and pc's address in that file's own terms:
 * cfi[0] its .eh_frame, cfi[1] its .debug_frame for code the first lacks;
 * either may be NULL. false: pc is in no file.
 */
typedef bool unwind_cfi_fn(void *ctx, uint64_t pc, uint64_t *vaddr, Dwarf_CFI *cfi[2]);

struct unwind_regs {
	uint64_t ip, sp, bp;
	bool in_syscall;	/* sampled in the kernel: ip may be just past a syscall */
};

/* A register's rule in a frame, as dwarf_frame_register gives it. */
struct unwind_rule {
	enum { RULE_UNKNOWN, RULE_UNDEFINED, RULE_SAME, RULE_OPS } how;
	Dwarf_Op *ops;		/* RULE_OPS: into the CFI, or NULL when in mem */
	Dwarf_Op mem[3];
	size_t nops;
};

struct unwinder {
	struct cached_frame {
		Dwarf_CFI *cfi;
		uint64_t vaddr;
		Dwarf_Frame *frame;	/* owned; NULL: no CFI entry there */
		/* What an unwind step needs of it, asked of libdw once. */
		int ra_reg;
		bool signal;		/* a signal trampoline's ('S') */
		Dwarf_Op *cfa_ops;	/* into frame; NULL: no CFA rule */
		size_t cfa_nops;
		struct unwind_rule ra, rbp, rsp;
	} *frames;
	uint32_t nr_frames, frames_alloc;
	struct itab index;
};

void unwinder_init(struct unwinder *u);
void unwinder_release(struct unwinder *u);

/*
 * Unwinds from regs over stack (bytes copied from regs->sp up) into
 * ips[max], leaf first; returns how many and says how it ended. ips are
 * the addresses to name: the leaf's pc, and the pc a signal interrupted,
 * as they are; return addresses moved back one byte, into their call.
 */
uint32_t unwind_stack(struct unwinder *u, unwind_cfi_fn *cfi_at, void *ctx,
		      const struct unwind_regs *regs, const uint8_t *stack, uint32_t stack_bytes,
		      uint64_t *ips, uint32_t max, enum unwind_end *end);

const char *unwind_end_name(enum unwind_end end);

#endif
