/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * A file's unwind table for the BPF program (struct unwind_row), built from
 * its call frame information: .eh_frame, then .debug_frame (its own, or its
 * separate debug file's) for the code .eh_frame lacks. Our own parser, one
 * pass over each FDE's CFA program. A reader of untrusted input: every read
 * bounds-checked, a malformed FDE skipped and counted; never prints.
 */
#ifndef BPFPROF_CFI_ROWS_H
#define BPFPROF_CFI_ROWS_H

#include <libelf.h>
#include <linux/types.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/unwind_row.h"

/* What one section may make us hold, whatever its header claims (inflated, if compressed). */
#define CFI_MAX_SECTION_BYTES (64u << 20)	/* LLVM's .eh_frame: 5 MB */

struct cfi_rows {
	struct unwind_row *rows;	/* sorted by addr, no two neighbours alike */
	size_t nr, alloc;
	struct cfi_rows_stats {
		/* FDEs used: in an executable segment, not covered by a better section. */
		uint32_t fdes;
		/* The rows their CFA programs gave, one per location: before merging, and before
		 * the ROW_CFA_NONE rows where an FDE ends and no other starts. */
		uint32_t rows_in;
		/* Of those, made ROW_CFA_NONE: rules the row format cannot express. */
		uint32_t unsupported;
		/* Malformed CIEs and FDEs skipped (a section cut short counts once). */
		uint32_t bad;
	} stats;
};

/*
 * elf: the file as mapped (its executable PT_LOAD segments turn addresses
 * into file offsets); debug: its separate debug file or NULL (its
 * .debug_frame is used for the code elf's own .eh_frame and .debug_frame
 * lack; its addresses are elf's). Returns 0 or a negative errno (-ENOEXEC:
 * not an x86-64 executable or shared object); out is empty on error.
 */
int cfi_rows_build(Elf *elf, Elf *debug, struct cfi_rows *out);
void cfi_rows_free(struct cfi_rows *t);
/*
 * The row covering file offset off (a ROW_CFA_NONE one between FDEs and past
 * the last), or NULL before the first (binary search; what the BPF program does).
 */
const struct unwind_row *cfi_rows_find(const struct cfi_rows *t, uint32_t off);

/*
 * An FDE of an .eh_frame and the rules of its first row (before its
 * location first advances), for a reader that knows a frame by its rules
 * (a runtime's file reader). Registers by their x86-64 DWARF numbers.
 */
#define CFI_HEAD_REGS 17		/* up to the return address's column */
struct cfi_fde_head {
	uint64_t start, end;		/* its code, vaddrs */
	size_t offset, next;		/* where it and the next entry start in the section */
	/* false: the row has a rule other than the CFA's and offsets (restore, remember...) */
	bool row_ok;
	uint64_t cfa_reg;		/* CFA = cfa_reg + cfa_off */
	int64_t cfa_off;
	bool saved[CFI_HEAD_REGS];	/* register r saved at CFA + saved_at[r] */
	int64_t saved_at[CFI_HEAD_REGS];
	bool other;			/* a register past CFI_HEAD_REGS saved */
};

typedef void cfi_fde_head_fn(void *ctx, const struct cfi_fde_head *fde);
/*
 * Each FDE of an .eh_frame (size bytes at data, at vaddr addr) that can be
 * read, in order, to fn: the same parser as cfi_rows_build()'s.
 */
void cfi_fde_heads(const void *data, size_t size, uint64_t addr, cfi_fde_head_fn *fn, void *ctx);

#endif
