/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * DWARF through libdw: for an ELF virtual address, the chain of functions
 * the code there belongs to, innermost first (inlined calls, then the
 * function they were inlined into), each with its source file and line.
 *
 * Built lazily: the compile units' address ranges read on the first
 * lookup, one unit's functions and inlined calls (flattened into sorted,
 * disjoint address ranges) and line table on the first lookup that falls
 * in it, each copied out of libdw. A file with .debug_aranges has that
 * alone read first, and a unit's bytes read when a lookup reaches it:
 * compressed sections inflated only up to the furthest unit needed. A
 * lookup is then three binary searches and a walk up the inline chain;
 * libdw, and the debug sections it reads (inflated by us, only those it
 * needs), go once the file was not looked up for a while
 * (dwarf_index_trim()).
 *
 * A reader: never prints; 0 or a negative errno.
 */
#ifndef BPFPROF_DWARF_H
#define BPFPROF_DWARF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/*
 * Limits on what a file can make us do: the debug sections we hold in
 * memory for libdw (inflated), and how deep functions, inlined calls and
 * blocks may nest.
 */
#define DWARF_MAX_BYTES		(1ull << 30)
#define DWARF_MAX_NESTING	256

/* One frame; strings belong to the index, valid until the next call on it. */
struct dwarf_frame {
	const char *name;	/* linkage name if any, else the DWARF name; NULL: unknown */
	const char *file;	/* source file, or NULL */
	uint32_t line;		/* 0 when unknown */
};

struct dwarf_index;

/*
 * Opens the ELF file on fd for its DWARF, through a descriptor of its own:
 * the caller's fd may be closed afterwards. -ENODATA when the file has no
 * .debug_info, -EOPNOTSUPP when its DWARF refers to another file's (dwz's
 * .gnu_debugaltlink, .debug_sup; split units' .dwo files are never
 * opened), -EFBIG past DWARF_MAX_BYTES.
 */
int dwarf_index_open(struct dwarf_index **out, int fd);
void dwarf_index_free(struct dwarf_index *d);
/* Once a drain: lets libdw and the debug sections go once no unit needed them for this many. */
#define DWARF_IDLE_TRIMS 10
/* Units a drain reads by themselves, from their own bytes of the sections, before all of them. */
#define DWARF_ALONE_PER_DRAIN 3
void dwarf_index_trim(struct dwarf_index *d);

/*
 * The frames at vaddr, innermost first, into out[max]; a deeper chain
 * keeps its outermost max frames. Returns how many, 0 when no compile
 * unit covers vaddr. The outermost frame's name is NULL when only the
 * line table knows the address (assembly, say).
 */
int dwarf_index_frames(struct dwarf_index *d, uint64_t vaddr, struct dwarf_frame *out, int max);

/* How many times the sections were read: whole, and for one unit alone. */
void dwarf_index_reads(const struct dwarf_index *d, size_t *whole, size_t *alone);
/* Units read by need (dwarf_index_by_need()), none of them whole. */
size_t dwarf_index_reads_by_need(const struct dwarf_index *d);
/*
 * Whether a file with .debug_aranges has its units read by need, as
 * lookups reach them (the default), or all on the first lookup, as a
 * file without it has; before the first lookup.
 */
void dwarf_index_by_need(struct dwarf_index *d, bool on);

#endif
