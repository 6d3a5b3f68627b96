/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * An ELF file's function symbols, loadable segments and build ID, read once
 * through libelf from an fd or a memory image (the vDSO). A reader: never
 * prints, returns 0 or a negative errno.
 */
#ifndef BPFPROF_ELF_H
#define BPFPROF_ELF_H

#include <libelf.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define BUILD_ID_MAX 64		/* bytes; GNU build IDs are 20 */

/*
 * What one file may make us allocate, whatever its headers claim (a
 * sparse file can claim terabytes): a file with more sections or program
 * headers is not read at all, a bigger table is left out. Names are cut
 * at ELF_MAX_NAME bytes.
 */
#define ELF_MAX_SECTIONS	(1u << 16)
#define ELF_MAX_SEGMENTS	(1u << 16)
#define ELF_MAX_SHSTRTAB_BYTES	(1u << 20)	/* section names */
#define ELF_MAX_SYMTAB_BYTES	(256u << 20)	/* a symbol table: 11 M symbols */
#define ELF_MAX_STRTAB_BYTES	(256u << 20)	/* its names */
#define ELF_MAX_NOTE_BYTES	(64u << 10)
#define ELF_MAX_PLT_STUBS	(1u << 16)
#define ELF_MAX_NAME		4096

struct elf_sym {
	uint64_t addr;		/* st_value: ELF virtual address */
	uint64_t size;		/* 0 when the symbol table does not say */
	uint32_t name;		/* offset into names */
};

struct elf_segment {		/* a PT_LOAD header */
	uint64_t offset, filesz, vaddr, memsz;
};

struct elf_symtab {
	struct elf_sym *syms;	/* sorted by addr, one per address */
	size_t nr;
	char *names;
	size_t names_len;
	struct elf_segment *segs;
	size_t nsegs;
	char build_id[2 * BUILD_ID_MAX + 1];	/* hex, "" if none */
	bool from_symtab;	/* .symtab (full) rather than .dynsym (exports) */
};

/*
 * An ELF file opened for libelf within the limits above, or NULL. Files
 * are read, never mapped: a file its owner truncates under us makes a
 * read fail, not the profiler fault (SIGBUS). The fd must stay open as
 * long as the handle; elf_end() it.
 */
Elf *elf_open_fd(int fd);
Elf *elf_open_mem(const void *image, size_t size);
/* A section's data if it has at most max bytes in the file, else NULL. */
Elf_Data *elf_section_data(Elf_Scn *scn, uint64_t max);

int elf_symtab_read_fd(struct elf_symtab *t, int fd);
/*
 * The symbols of a separate debug file (fd) of the binary on bin_fd: its
 * PLT stubs named from the binary's relocations, which the debug file
 * keeps only as headers.
 */
int elf_symtab_read_debug_fd(struct elf_symtab *t, int fd, int bin_fd);
/* The GNU build ID in a note section, as hex into hex[2 * BUILD_ID_MAX + 1]; false if none. */
bool elf_note_build_id(Elf_Scn *scn, char *hex);
int elf_symtab_read_mem(struct elf_symtab *t, const void *image, size_t size);
void elf_symtab_release(struct elf_symtab *t);

/* The ELF virtual address of a file offset inside a loadable segment. */
int elf_symtab_offset_to_vaddr(const struct elf_symtab *t, uint64_t offset, uint64_t *vaddr);
/* The function containing vaddr, or NULL. */
const struct elf_sym *elf_symtab_lookup(const struct elf_symtab *t, uint64_t vaddr);
static inline const char *elf_sym_name(const struct elf_symtab *t, const struct elf_sym *s)
{
	return t->names + s->name;
}

#endif
