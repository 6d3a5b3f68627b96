// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The unwind-table builder: on an ELF file (an input starting with the ELF
 * magic), with and without itself as its debug file, or on a CFI section
 * wrapped into a minimal ELF file (any other input: its first byte's low
 * bit picks .debug_frame over .eh_frame, the rest is the section). The
 * rows must be what the BPF program can search and read: sorted, merged,
 * only known rules, each found where it starts; built twice, the same.
 */
#include <elf.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"
#include "fuzz.h"

void *fuzz_cfi_elf(const uint8_t *cfi, size_t len, bool debug_frame, size_t *size)
{
	/* Names at 1, 11 and 24. */
	static const char names[] = "\0.eh_frame\0.debug_frame\0.shstrtab";
	size_t data_off = sizeof(Elf64_Ehdr) + sizeof(Elf64_Phdr), names_off = data_off + len;
	size_t sh_off = (names_off + sizeof(names) + 7) & ~(size_t)7;
	uint8_t *image = xcalloc(1, sh_off + 3 * sizeof(Elf64_Shdr));
	Elf64_Ehdr *eh = (Elf64_Ehdr *)image;
	Elf64_Phdr *ph = (Elf64_Phdr *)(image + sizeof(*eh));
	Elf64_Shdr *sh = (Elf64_Shdr *)(image + sh_off);

	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_machine = EM_X86_64;
	eh->e_version = EV_CURRENT;
	eh->e_phoff = sizeof(*eh);
	eh->e_shoff = sh_off;
	eh->e_ehsize = sizeof(*eh);
	eh->e_phentsize = sizeof(*ph);
	eh->e_phnum = 1;
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 3;
	eh->e_shstrndx = 2;
	*ph = (Elf64_Phdr){ .p_type = PT_LOAD, .p_flags = PF_R | PF_X,
			    .p_offset = FUZZ_CFI_TEXT_OFFSET, .p_vaddr = FUZZ_CFI_TEXT_VADDR,
			    .p_paddr = FUZZ_CFI_TEXT_VADDR, .p_filesz = FUZZ_CFI_TEXT_SIZE,
			    .p_memsz = FUZZ_CFI_TEXT_SIZE, .p_align = 0x1000 };
	if (len)
		memcpy(image + data_off, cfi, len);
	memcpy(image + names_off, names, sizeof(names));
	sh[1] = (Elf64_Shdr){ .sh_name = debug_frame ? 11 : 1, .sh_type = SHT_PROGBITS,
			      .sh_flags = debug_frame ? 0 : SHF_ALLOC,
			      .sh_addr = debug_frame ? 0 : FUZZ_CFI_SECTION_ADDR, .sh_offset = data_off,
			      .sh_size = len, .sh_addralign = 1 };
	sh[2] = (Elf64_Shdr){ .sh_name = 24, .sh_type = SHT_STRTAB, .sh_offset = names_off,
			      .sh_size = sizeof(names), .sh_addralign = 1 };
	*size = sh_off + 3 * sizeof(Elf64_Shdr);
	return image;
}

static bool same_row(const struct unwind_row *a, const struct unwind_row *b)
{
	return a->cfa_off == b->cfa_off && a->rbp_off == b->rbp_off && a->rules == b->rules;
}

/* What the BPF program relies on. */
static void check_rows(const struct cfi_rows *t)
{
	size_t i;

	FUZZ_CHECK(!t->nr || t->rows);
	FUZZ_CHECK(t->stats.unsupported <= t->stats.rows_in);
	/* A row of an FDE, and at most one NONE row after it. */
	FUZZ_CHECK(t->nr <= 2 * (size_t)t->stats.rows_in);
	FUZZ_CHECK(!t->nr || t->stats.fdes);
	for (i = 0; i < t->nr; i++) {
		const struct unwind_row *r = &t->rows[i];
		unsigned cfa = r->rules & ROW_CFA_MASK, rbp = r->rules & ROW_RBP_MASK;

		FUZZ_CHECK(!(r->rules & ~(ROW_CFA_MASK | ROW_RBP_MASK)));
		FUZZ_CHECK(cfa <= ROW_CFA_END && rbp != ROW_RBP_MASK);
		/* Rows with nothing to read say nothing more, so that they merge. */
		if (cfa == ROW_CFA_NONE || cfa == ROW_CFA_END || cfa == ROW_CFA_SIGNAL)
			FUZZ_CHECK(!r->cfa_off && !r->rbp_off && !rbp);
		if (rbp == ROW_RBP_SAME && cfa != ROW_CFA_PLT)
			FUZZ_CHECK(!r->rbp_off);
		if (cfa == ROW_CFA_PLT)
			FUZZ_CHECK(rbp == ROW_RBP_SAME && r->rbp_off >= 0 && r->rbp_off < 32);
		if (rbp == ROW_RBP_AT_RBP)
			FUZZ_CHECK(cfa == ROW_CFA_DEREF_RBP && !r->rbp_off);
		if (i) {
			FUZZ_CHECK(t->rows[i - 1].addr < r->addr);
			FUZZ_CHECK(!same_row(&t->rows[i - 1], r));
		}
		FUZZ_CHECK(cfi_rows_find(t, r->addr) == r);
		if (r->addr)
			FUZZ_CHECK(cfi_rows_find(t, r->addr - 1) == (i ? r - 1 : NULL));
	}
	FUZZ_CHECK(cfi_rows_find(t, UINT32_MAX) == (t->nr ? &t->rows[t->nr - 1] : NULL));
}

/* Builds the table twice; checks it and that both are the same. Returns the error. */
static int build(Elf *elf, Elf *debug, struct cfi_rows *t)
{
	struct cfi_rows again;
	int err = cfi_rows_build(elf, debug, t), err2 = cfi_rows_build(elf, debug, &again);

	FUZZ_CHECK(err <= 0 && err == err2);
	if (err)
		FUZZ_CHECK(!t->nr && !t->rows);
	check_rows(t);
	FUZZ_CHECK(t->nr == again.nr && !memcmp(&t->stats, &again.stats, sizeof(t->stats)));
	if (t->nr == again.nr && t->nr)
		FUZZ_CHECK(!memcmp(t->rows, again.rows, t->nr * sizeof(*t->rows)));
	cfi_rows_free(&again);
	return err;
}

int fuzz_cfi(const uint8_t *data, size_t size)
{
	struct cfi_rows t, with_debug;
	bool wrapped = !(size >= SELFMAG && !memcmp(data, ELFMAG, SELFMAG));
	size_t image_size;
	uint8_t *image;
	Elf *elf;

	if (!wrapped) {
		/* A copy of exactly size bytes: a read past it is caught. */
		image = xmalloc(size);
		memcpy(image, data, size);
		image_size = size;
	} else if (size) {
		image = fuzz_cfi_elf(data + 1, size - 1, data[0] & 1, &image_size);
	} else {
		return 0;
	}
	elf = elf_open_mem(image, image_size);
	if (elf) {
		int err = build(elf, NULL, &t);

		if (wrapped) {
			/* Ours is well-formed, but maybe its CFI; the last FDE ends in a NONE row. */
			FUZZ_CHECK(!err);
			FUZZ_CHECK(!t.nr || t.rows[t.nr - 1].rules == ROW_CFA_NONE);
		}
		/* Itself as its debug file: its .debug_frame is all covered by its own. */
		build(elf, elf, &with_debug);
		FUZZ_CHECK(t.nr == with_debug.nr);
		if (t.nr == with_debug.nr && t.nr)
			FUZZ_CHECK(!memcmp(t.rows, with_debug.rows, t.nr * sizeof(*t.rows)));
		cfi_rows_free(&t);
		cfi_rows_free(&with_debug);
		elf_end(elf);
	}
	free(image);
	return 0;
}
