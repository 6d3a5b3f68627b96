// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The unwind tables in real BPF maps (root, as make test runs): a file's
 * rows land in the rows array where the files map says, a copy
 * with the same build ID shares them, a file with no CFI and one that
 * does not fit are refused and counted, the rows map never overflows.
 */
#include <errno.h>
#include <stdlib.h>
#include <fcntl.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/unwind_tables.h"
#include "unit.h"

#define LIBC "/lib/x86_64-linux-gnu/libc.so.6"

static Elf *open_elf(const char *path, int *fd)
{
	*fd = open(path, O_RDONLY | O_CLOEXEC);
	return *fd >= 0 ? elf_begin(*fd, ELF_C_READ, NULL) : NULL;
}

/* As the program's: an array of chunks, each written in place through an mmap. */
static int make_maps(int *files_fd)
{
	LIBBPF_OPTS(bpf_map_create_opts, lazy, .map_flags = BPF_F_NO_PREALLOC);
	LIBBPF_OPTS(bpf_map_create_opts, chunk, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	LIBBPF_OPTS(bpf_map_create_opts, outer);
	int fd;

	*files_fd = bpf_map_create(BPF_MAP_TYPE_HASH, "test_files", sizeof(struct unwind_file_key),
				   sizeof(struct unwind_file), 64, &lazy);
	outer.inner_map_fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "test_chunk", sizeof(__u32),
					    sizeof(struct unwind_row), 1, &chunk);
	fd = bpf_map_create(BPF_MAP_TYPE_ARRAY_OF_MAPS, "test_rows", sizeof(__u32), sizeof(__u32),
			    UNWIND_CHUNKS, &outer);
	close(outer.inner_map_fd);
	return fd;
}

/* Row i of the file published at w, from its chunk; false if not there. */
static bool row_of(int rows_fd, struct unwind_file w, uint32_t i, struct unwind_row *r)
{
	uint32_t chunk = w.first >> UNWIND_CHUNK_SHIFT, id, row;
	int fd;
	bool ok;

	row = (w.first & ((1u << UNWIND_CHUNK_SHIFT) - 1)) + i;
	if (bpf_map_lookup_elem(rows_fd, &chunk, &id) || (fd = bpf_map_get_fd_by_id(id)) < 0)
		return false;
	ok = !bpf_map_lookup_elem(fd, &row, r);
	close(fd);
	return ok;
}

/* The slice the files map holds for key; nr 0 if none. */
static struct unwind_file published(int files_fd, const struct unwind_file_key *key)
{
	struct unwind_file w = { 0, 0 };

	bpf_map_lookup_elem(files_fd, key, &w);
	return w;
}

void test_unwind_tables(void)
{
	struct unwind_file_key libc = { .ino = 1001, .dev = 7 }, copy = { .ino = 1002, .dev = 7 };
	struct unwind_file_key other = { .ino = 1003, .dev = 7 }, none = { .ino = 1004, .dev = 7 };
	struct unwind_tables t, small;
	struct cfi_rows want = { 0 };
	struct unwind_file w;
	int rows_fd, files_fd, fd, fd2, rows2_fd, files2_fd;
	Elf *elf, *elf2;

	elf_version(EV_CURRENT);
	rows_fd = make_maps(&files_fd);
	if (!CHECK_ROOT(rows_fd >= 0 && files_fd >= 0, "BPF maps created"))
		return;
	elf = open_elf(LIBC, &fd);
	if (!CHECK(elf && !cfi_rows_build(elf, NULL, &want), "libc's table builds"))
		return;
	CHECK(!unwind_tables_init(&t, rows_fd, files_fd, 1 << 20), "tables set up on the maps");

	CHECK(!unwind_tables_add(&t, &libc, "aa11", elf, NULL, NULL), "libc's table added");
	w = published(files_fd, &libc);
	CHECK(w.first == 0 && w.nr == want.nr && t.rows_used == want.nr && t.built == 1,
	      "published: rows [%u, +%u) in the map, %zu built", w.first, w.nr, want.nr);
	{
		/* What the program reads through the map: every row the builder made. */
		struct unwind_row r;
		__u32 i, same = 0;

		for (i = 0; i < want.nr; i++)
			same += row_of(rows_fd, w, i, &r) && !memcmp(&r, &want.rows[i], sizeof(r));
		CHECK(same == want.nr, "the map's rows are the builder's, byte for byte (%u of %zu)", same,
		      want.nr);
	}

	CHECK(!unwind_tables_add(&t, &libc, "aa11", elf, NULL, NULL) && t.built == 1 &&
	      t.rows_used == want.nr, "the same file again: nothing built, nothing added");
	CHECK(!unwind_tables_alias(&t, &copy, "aa11") && t.shared == 1 &&
	      published(files_fd, &copy).first == w.first && published(files_fd, &copy).nr == w.nr,
	      "a copy with the same build ID shares the slice");
	CHECK(unwind_tables_alias(&t, &other, "bb22") == -ENOENT && !published(files_fd, &other).nr,
	      "another build ID: nothing to share");

	/* The fixture library from make test-build has CFI too: it goes after libc's rows. */
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/libfixture.so", unit_fixtures);
		elf2 = open_elf(path, &fd2);
		CHECK(elf2 && !unwind_tables_add(&t, &other, "", elf2, NULL, NULL) &&
		      published(files_fd, &other).first == want.nr,
		      "a second file's rows follow the first's in its chunk");
		CHECK(t.nr_chunks == 1 && t.rows_made == UNWIND_CHUNK_ROWS &&
		      unwind_tables_bytes(&t) < 2 * UNWIND_CHUNK_ROWS * sizeof(struct unwind_row),
		      "one chunk made, %u rows, not the whole budget", t.rows_made);
		if (elf2)
			elf_end(elf2);
		if (fd2 >= 0)
			close(fd2);
	}

	/* An ELF file with no CFI at all: refused, counted. */
	{
		char path[64] = "/tmp/bpfprof-nocfi.XXXXXX";
		int tfd = mkstemp(path);
		Elf *empty;

		if (tfd >= 0) {
			/* libc's ELF header and program headers alone: segments, no sections. */
			char head[4096];
			ssize_t n = pread(fd, head, sizeof(head), 0);

			((Elf64_Ehdr *)head)->e_shoff = 0;
			((Elf64_Ehdr *)head)->e_shnum = 0;
			((Elf64_Ehdr *)head)->e_shstrndx = 0;
			CHECK(n == (ssize_t)sizeof(head) && write(tfd, head, n) == n, "a file with no sections");
			empty = elf_begin(tfd, ELF_C_READ, NULL);
			CHECK(empty && unwind_tables_add(&t, &none, "", empty, NULL, NULL) == -ENODATA &&
			      t.empty == 1 && !published(files_fd, &none).nr,
			      "no CFI: -ENODATA, counted, nothing published");
			if (empty)
				elf_end(empty);
			close(tfd);
			unlink(path);
		}
	}

	/* A budget too small for libc: refused whole, no chunk made. */
	rows2_fd = make_maps(&files2_fd);
	CHECK(rows2_fd >= 0 && !unwind_tables_init(&small, rows2_fd, files2_fd, 1000) &&
	      unwind_tables_add(&small, &libc, "aa11", elf, NULL, NULL) == -ENOSPC &&
	      small.no_room == 1 && small.rows_used == 0 && !published(files2_fd, &libc).nr &&
	      !small.nr_chunks && !unwind_tables_bytes(&small),
	      "no room: -ENOSPC, counted, nothing published, no chunk made");
	unwind_tables_release(&small);

	/* A budget libc's rows fill but for ten: its chunk is cut to the budget, the next file refused. */
	CHECK(!unwind_tables_init(&small, rows2_fd, files2_fd, want.nr + 10) &&
	      !unwind_tables_add(&small, &libc, "aa11", elf, NULL, NULL) &&
	      small.rows_made == want.nr + 10 && published(files2_fd, &libc).nr == want.nr,
	      "a budget short of a chunk: a chunk of what is left (%zu rows)", want.nr + 10);
	{
		char path[4096];

		snprintf(path, sizeof(path), "%s/libfixture.so", unit_fixtures);
		elf2 = open_elf(path, &fd2);
		CHECK(elf2 && unwind_tables_add(&small, &other, "", elf2, NULL, NULL) == -ENOSPC &&
		      small.nr_chunks == 1 && !published(files2_fd, &other).nr,
		      "the budget spent: the next file refused, no chunk made");
		if (elf2)
			elf_end(elf2);
		if (fd2 >= 0)
			close(fd2);
	}
	unwind_tables_release(&small);
	unwind_tables_release(&t);
	cfi_rows_free(&want);
	elf_end(elf);
	close(fd);
	close(rows_fd);
	close(files_fd);
	close(rows2_fd);
	close(files2_fd);
}
