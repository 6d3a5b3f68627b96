/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * --unwind auto: every mapped file's unwind table, built once (cfi_rows.h)
 * and put where the BPF program walks stacks with it: its rows written into
 * a chunk of the rows map (unwind_row.h; the first chunk with room, or one
 * made for them), then its slice published under the file's identity as
 * the kernel knows it (device, inode). A file whose build ID is known
 * already shares that table. Tables stay for the run: chunks only fill.
 */
#ifndef BPFPROF_UNWIND_TABLES_H
#define BPFPROF_UNWIND_TABLES_H

#include <gelf.h>
#include <stdint.h>
#include <sys/stat.h>

#include "bpfprof/intern.h"
#include "bpfprof/unwind_row.h"

struct unwind_tables {
	int rows_fd, files_fd;		/* the BPF maps; -1: tables are off */
	uint32_t rows_max;		/* rows all chunks may hold together */
	uint32_t rows_used, rows_made;	/* rows written; rows the chunks made hold */
	struct rows_chunk {
		int fd;
		uint32_t size, used;
	} chunks[UNWIND_CHUNKS];
	uint32_t nr_chunks;
	struct table_file {
		struct unwind_file_key key;
		struct unwind_file where;
		char build_id[41];	/* hex, "" if none */
	} *files;
	uint32_t nr_files, files_alloc;
	struct itab by_key, by_build_id;
	/* For the summary. */
	uint32_t built, shared, empty, no_room;	/* files: tables built, shared, no CFI, no room left */
	uint64_t build_ns;		/* CPU time building them */
};

/* Tables off unless rows_fd (the array of chunks) >= 0. 0 or a negative errno. */
int unwind_tables_init(struct unwind_tables *t, int rows_fd, int files_fd, uint32_t rows_max);
void unwind_tables_release(struct unwind_tables *t);

/*
 * The table of the ELF file elf, built unless the key (or build_id, hex or
 * "") has one; debug_elf(ctx) is asked for its separate debug file (NULL:
 * none) only when the file's own CFI covers less than half of its code.
 * 0, or a negative errno (the file has no CFI: -ENODATA; no room: -ENOSPC).
 */
int unwind_tables_add(struct unwind_tables *t, const struct unwind_file_key *key,
		      const char *build_id, Elf *elf, Elf *(*debug_elf)(void *ctx), void *ctx);

/*
 * A file whose build ID has a table already, under another key (a copy):
 * published there too. 0 (or already known), -ENOENT: no table has that
 * build ID.
 */
int unwind_tables_alias(struct unwind_tables *t, const struct unwind_file_key *key,
			const char *build_id);

/* The key of a file from its fstat: the kernel's dev_t (MAJOR << 20 | MINOR). */
struct unwind_file_key unwind_file_key_of(const struct stat *st);

/* Bytes the tables take in the kernel: the chunks made, and the files map's entries. */
uint64_t unwind_tables_bytes(const struct unwind_tables *t);

#endif
