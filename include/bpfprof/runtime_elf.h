/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What the runtimes' file readers (src/runtime/NAME_file.c and the like)
 * read of an ELF file through libelf: the symbols they look for
 * by name, its loadable segments, and bytes at a virtual address of the file
 * (pread, never mapped). A reader of untrusted files: a table it cannot read
 * is skipped; never prints; errors are negative errnos.
 */
#ifndef BPFPROF_RUNTIME_ELF_H
#define BPFPROF_RUNTIME_ELF_H

#include <gelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* PT_LOAD headers kept: a runtime's file has four or five. */
#define RUNTIME_ELF_MAX_SEGMENTS 16

struct runtime_segment {
	uint64_t vaddr, offset, filesz;
	bool exec;
};

struct runtime_segments {
	struct runtime_segment seg[RUNTIME_ELF_MAX_SEGMENTS];
	size_t nr;
};

/* A section's bytes, uncompressed, within max bytes; NULL if none. */
Elf_Data *runtime_elf_section_data(Elf_Scn *scn, uint64_t max);
/* The string at off in a string table's data, or NULL if it does not end inside. */
const char *runtime_elf_string(const Elf_Data *strings, uint64_t off);

/* One symbol of a table; index: its place in the table (a relocation's symbol number). */
typedef void runtime_elf_symbol_fn(void *ctx, const char *name, const GElf_Sym *sym,
				   size_t index);

/*
 * Each defined symbol (not SHN_UNDEF, its name inside the string table) of
 * the symbol table scn (.dynsym or .symtab; sh its header) to fn, in order.
 * A table compressed, too big or unreadable gives none.
 */
void runtime_elf_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 runtime_elf_symbol_fn *fn, void *ctx);

/*
 * The file's PT_LOAD segments with bytes in the file (only the executable
 * ones if exec_only), the first RUNTIME_ELF_MAX_SEGMENTS; none if libelf
 * cannot read the program headers.
 */
void runtime_elf_segments(Elf *elf, bool exec_only, struct runtime_segments *out);
/* The first segment whose file bytes hold vaddr, or NULL. */
const struct runtime_segment *runtime_segment_of(const struct runtime_segments *segs,
						 uint64_t vaddr);
/* The first executable segment (what mappings' addresses are relative to), or NULL. */
const struct runtime_segment *runtime_code_segment(const struct runtime_segments *segs);
/*
 * len bytes of the file (fd) at vaddr: 1; 0 if one segment's file bytes do
 * not hold them all (or the file ends first); or -errno from the read.
 */
int runtime_elf_read(const struct runtime_segments *segs, int fd, uint64_t vaddr, void *buf,
		     size_t len);

/*
 * The bounds [*lo, *hi) of the function holding vaddr, from the
 * .eh_frame_hdr section eh_frame_hdr (NULL: none): its sorted table (pairs
 * of datarel sdata4 offsets) and the FDE it points at (pcrel sdata4 start,
 * sdata4 length, as GCC and ld write them); false if vaddr is in none or
 * the table or the FDE is of another form.
 */
bool runtime_elf_function_bounds(Elf_Scn *eh_frame_hdr, const struct runtime_segments *segs, int fd,
				 uint64_t vaddr, uint64_t *lo, uint64_t *hi);

#endif
