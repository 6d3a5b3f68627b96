// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The DWARF index (functions, inlined calls, lines) of a file, looked up
 * at its symbols and across its loadable segments after the file is
 * closed, as the symbolizer does, with drains between lookups (units
 * then read by themselves, the sections let go). A chain cut at max frames must be the
 * outermost frames of the whole chain, and the names, as the symbolizer
 * combines them with the symbol table's, must make valid folded lines.
 */
#include <string.h>
#include <unistd.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "fuzz.h"

#define MAX_PROBES 128

static void check_frames(const struct dwarf_frame *f, int n)
{
	int i;

	for (i = 0; i < n; i++) {
		/* Readable to their end; a name, when there is one, is not empty. */
		FUZZ_CHECK(!f[i].name || *f[i].name);
		if (f[i].file)
			FUZZ_CHECK(strlen(f[i].file) < SIZE_MAX);
	}
}

static bool same_frame(const struct dwarf_frame *a, const struct dwarf_frame *b)
{
	return a->name == b->name && a->file == b->file && a->line == b->line;
}

/* As the symbolizer's file_frames(): the symbol table names the outermost function. */
static void to_loc(struct fuzz_loc *loc, struct dwarf_frame *f, int n, const struct elf_symtab *t,
		   uint64_t vaddr)
{
	const struct elf_sym *sym = t->nr ? elf_symtab_lookup(t, vaddr) : NULL;
	int i;

	loc->kind = FRAME_USER;
	loc->n = 0;
	if (n > 0 && sym)
		f[n - 1].name = elf_sym_name(t, sym);
	if (n > 0 && f[n - 1].name) {
		for (i = 0; i < n && i < FUZZ_MAX_CHAIN; i++)
			loc->names[i] = f[i].name ? f[i].name : "??";
		loc->n = i;
	} else if (sym) {
		loc->names[0] = elf_sym_name(t, sym);
		loc->n = 1;
	}
}

int fuzz_dwarf(const uint8_t *data, size_t size)
{
	struct dwarf_index *d, *need = NULL;
	struct elf_symtab t = { 0 };
	uint64_t probes[MAX_PROBES];
	struct fuzz_loc locs[MAX_PROBES];
	size_t i, j, nprobes = 0, nlocs = 0;
	int fd = fuzz_memfd(data, size), err;

	if (fd < 0)
		return 0;
	err = dwarf_index_open(&d, fd);
	FUZZ_CHECK(err <= 0 && (!err) == !!d);
	if (err) {
		close(fd);
		return 0;
	}
	if (elf_symtab_read_fd(&t, fd))
		memset(&t, 0, sizeof(t));
	/* A second index, its units read by need with no drain between lookups. */
	FUZZ_CHECK(dwarf_index_open(&need, fd) == 0);
	/* The index keeps what it needs: the caller closes the file. */
	close(fd);

	for (i = 0; i < t.nr && nprobes < MAX_PROBES / 2; i += t.nr / (MAX_PROBES / 4) + 1) {
		probes[nprobes++] = t.syms[i].addr;
		probes[nprobes++] = t.syms[i].addr + t.syms[i].size / 2;
	}
	for (i = 0; i < t.nsegs && i < 4; i++)
		for (j = 0; j < 16; j++)
			probes[nprobes++] = t.segs[i].vaddr + t.segs[i].memsz / 16 * j;

	for (i = 0; i < nprobes; i++) {
		struct dwarf_frame all[16], cut[2];
		int n = dwarf_index_frames(d, probes[i], all, 16), m, k;

		FUZZ_CHECK(n >= 0 && n <= 16);
		if (n < 0)
			continue;
		check_frames(all, n);
		/* Again, two at most: the same answer's two outermost frames. */
		m = dwarf_index_frames(d, probes[i], cut, 2);
		FUZZ_CHECK(m == (n < 2 ? n : 2));
		for (k = 0; k < m && m == (n < 2 ? n : 2); k++)
			FUZZ_CHECK(same_frame(&cut[k], &all[n - m + k]));
		FUZZ_CHECK(dwarf_index_frames(d, probes[i], all, 0) == 0);
		if (nlocs < MAX_PROBES)
			to_loc(&locs[nlocs++], all, n, &t, probes[i]);
		/*
		 * Each probe a drain; after the first, the sections go, and the
		 * units met later are read by themselves (DWARF_ALONE_PER_DRAIN).
		 */
		for (k = 0; k < (i ? 1 : 1 + DWARF_IDLE_TRIMS); k++)
			dwarf_index_trim(d);
	}
	/* Backwards: units before those read, the sections grown on as they are needed. */
	for (i = nprobes; i-- > 0 && need;) {
		struct dwarf_frame all[16];
		int n = dwarf_index_frames(need, probes[i], all, 16);

		FUZZ_CHECK(n >= 0 && n <= 16);
		if (n > 0)
			check_frames(all, n);
	}
	fuzz_fold("prog", "/usr/lib/libfuzz.so", locs, nlocs);
	dwarf_index_free(need);
	dwarf_index_free(d);
	elf_symtab_release(&t);
	return 0;
}
