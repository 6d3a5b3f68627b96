// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The ELF reader (symbols, segments, build ID) from a file and from memory,
 * which must agree, and what the debug-file search reads of the same file
 * (build ID, .gnu_debuglink). Every symbol must be found where it is, and
 * the names must make valid folded lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"
#include "fuzz.h"

static void check_build_id(const char *hex)
{
	size_t i, len = strnlen(hex, 2 * BUILD_ID_MAX + 1);

	FUZZ_CHECK(len <= 2 * BUILD_ID_MAX && len % 2 == 0);
	for (i = 0; i < len; i++)
		FUZZ_CHECK((hex[i] >= '0' && hex[i] <= '9') || (hex[i] >= 'a' && hex[i] <= 'f'));
}

static void check_symtab(const struct elf_symtab *t)
{
	size_t i;

	check_build_id(t->build_id);
	FUZZ_CHECK(!t->nr || t->syms);
	for (i = 0; i < t->nr; i++) {
		const struct elf_sym *s = &t->syms[i];

		FUZZ_CHECK(!i || t->syms[i - 1].addr < s->addr);
		FUZZ_CHECK(s->name < t->names_len);
		if (s->name >= t->names_len)
			continue;
		FUZZ_CHECK(memchr(t->names + s->name, '\0', t->names_len - s->name));
		FUZZ_CHECK(*elf_sym_name(t, s));
	}
}

/* Read from the file or from memory: the same answer. */
static void check_same(const struct elf_symtab *a, const struct elf_symtab *b)
{
	size_t i;

	FUZZ_CHECK(a->nr == b->nr && a->nsegs == b->nsegs && a->from_symtab == b->from_symtab);
	FUZZ_CHECK(!strcmp(a->build_id, b->build_id));
	for (i = 0; i < a->nr && i < b->nr; i++)
		FUZZ_CHECK(a->syms[i].addr == b->syms[i].addr && a->syms[i].size == b->syms[i].size &&
			   !strcmp(elf_sym_name(a, &a->syms[i]), elf_sym_name(b, &b->syms[i])));
	for (i = 0; i < a->nsegs && i < b->nsegs; i++)
		FUZZ_CHECK(!memcmp(&a->segs[i], &b->segs[i], sizeof(a->segs[i])));
}

/* The answer for vaddr is the last symbol at or below it, if it covers vaddr. */
static void check_lookup(const struct elf_symtab *t, uint64_t vaddr)
{
	const struct elf_sym *s = elf_symtab_lookup(t, vaddr);
	size_t lo = 0, hi = t->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo) {
		FUZZ_CHECK(!s);
		return;
	}
	if (t->syms[lo - 1].size && vaddr - t->syms[lo - 1].addr >= t->syms[lo - 1].size)
		FUZZ_CHECK(!s);
	else
		FUZZ_CHECK(s == &t->syms[lo - 1]);
}

static void check_offset(const struct elf_symtab *t, uint64_t offset)
{
	uint64_t vaddr = 0;
	size_t i;
	int err = elf_symtab_offset_to_vaddr(t, offset, &vaddr);

	for (i = 0; i < t->nsegs; i++) {
		const struct elf_segment *s = &t->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz)
			break;
	}
	if (i == t->nsegs) {
		FUZZ_CHECK(err == -ENOENT);
		return;
	}
	FUZZ_CHECK(!err && vaddr == offset - t->segs[i].offset + t->segs[i].vaddr);
}

static void check_lookups(const struct elf_symtab *t)
{
	size_t i;

	check_lookup(t, 0);
	check_lookup(t, UINT64_MAX);
	for (i = 0; i < t->nr; i++) {
		const struct elf_sym *s = &t->syms[i];

		FUZZ_CHECK(elf_symtab_lookup(t, s->addr) == s);
		check_lookup(t, s->addr - 1);
		check_lookup(t, s->addr + s->size / 2);
		check_lookup(t, s->addr + s->size);
		check_lookup(t, s->addr + s->size - 1);
	}
	check_offset(t, 0);
	check_offset(t, UINT64_MAX);
	for (i = 0; i < t->nsegs; i++) {
		check_offset(t, t->segs[i].offset);
		check_offset(t, t->segs[i].offset + t->segs[i].filesz - 1);
		check_offset(t, t->segs[i].offset + t->segs[i].filesz);
	}
}

/* The names as frames of one stack, and a frame nothing names. */
static void fold_names(const struct elf_symtab *t)
{
	struct fuzz_loc locs[FUZZ_FOLD_MAX];
	size_t i, n = 0;

	for (i = 0; i < t->nr && n + 1 < FUZZ_FOLD_MAX; i += t->nr / FUZZ_FOLD_MAX + 1)
		locs[n++] = (struct fuzz_loc){ { elf_sym_name(t, &t->syms[i]) }, 1, FRAME_USER };
	locs[n++] = (struct fuzz_loc){ { NULL }, 0, FRAME_USER };	/* [file+0x...] */
	fuzz_fold("prog", "/usr/lib/libfuzz.so", locs, n);
}

int fuzz_elf(const uint8_t *data, size_t size)
{
	struct elf_symtab from_fd, from_mem;
	struct debuginfo_elf dbg;
	/* A copy of exactly size bytes: a read past it is caught. */
	void *image = xmalloc(size ? size : 1);
	int fd = fuzz_memfd(data, size), err_fd, err_mem;

	FUZZ_CHECK(fd >= 0);
	if (fd < 0) {
		free(image);
		return 0;
	}
	memcpy(image, data, size);
	err_fd = elf_symtab_read_fd(&from_fd, fd);
	err_mem = elf_symtab_read_mem(&from_mem, image, size);
	FUZZ_CHECK(err_fd <= 0 && err_fd == err_mem);
	if (!err_fd) {
		check_symtab(&from_fd);
		check_same(&from_fd, &from_mem);
		check_lookups(&from_fd);
		fold_names(&from_fd);
	} else {
		FUZZ_CHECK(!from_fd.syms && !from_fd.names && !from_fd.segs && !from_fd.nr);
	}
	if (!debuginfo_elf_read(&dbg, fd)) {
		check_build_id(dbg.build_id);
		FUZZ_CHECK(!dbg.link_name || *dbg.link_name);
		/* Both take the first GNU build-ID note. */
		if (!err_fd)
			FUZZ_CHECK(!strcmp(dbg.build_id, from_fd.build_id));
	}
	debuginfo_elf_release(&dbg);
	elf_symtab_release(&from_fd);
	elf_symtab_release(&from_mem);
	close(fd);
	free(image);
	return 0;
}
