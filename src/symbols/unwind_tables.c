// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <unistd.h>

#include <bpf/bpf.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/unwind_tables.h"
#include "bpfprof/util.h"

int unwind_tables_init(struct unwind_tables *t, int rows_fd, int files_fd, uint32_t rows_max)
{
	memset(t, 0, sizeof(*t));
	t->rows_fd = rows_fd;
	t->files_fd = files_fd;
	t->rows_max = rows_max;
	return 0;
}

void unwind_tables_release(struct unwind_tables *t)
{
	uint32_t i;

	for (i = 0; i < t->nr_chunks; i++)
		close(t->chunks[i].fd);
	free(t->files);
	itab_release(&t->by_key);
	itab_release(&t->by_build_id);
	memset(t, 0, sizeof(*t));
	t->rows_fd = t->files_fd = -1;
}

/*
 * A chunk with room for nr rows: the first that has it, else one made
 * (UNWIND_CHUNK_ROWS long, or nr) and put into the rows map; -ENOSPC when
 * the rows' budget or the map's chunks are spent. Its index, or -errno.
 */
static int chunk_for(struct unwind_tables *t, uint32_t nr)
{
	LIBBPF_OPTS(bpf_map_create_opts, opts, .map_flags = BPF_F_MMAPABLE | BPF_F_INNER_MAP);
	uint32_t i, size = nr > UNWIND_CHUNK_ROWS ? nr : UNWIND_CHUNK_ROWS;
	struct rows_chunk *c;
	int err;

	for (i = 0; i < t->nr_chunks; i++)
		if (nr <= t->chunks[i].size - t->chunks[i].used)
			return i;
	if (size > t->rows_max - t->rows_made)
		size = t->rows_max - t->rows_made;
	if (t->nr_chunks == UNWIND_CHUNKS || nr > size)
		return -ENOSPC;
	c = &t->chunks[t->nr_chunks];
	c->fd = bpf_map_create(BPF_MAP_TYPE_ARRAY, "unwind_chunk", sizeof(__u32),
			       sizeof(struct unwind_row), size, &opts);
	if (c->fd < 0)
		return -errno;
	if ((err = bpf_map_update_elem(t->rows_fd, &t->nr_chunks, &c->fd, BPF_ANY))) {
		close(c->fd);
		return err;
	}
	c->size = size;
	c->used = 0;
	t->rows_made += size;
	return t->nr_chunks++;
}

/*
 * Rows into a chunk from index first, written in place: the pages they
 * fall in mapped (chunks are BPF_F_MMAPABLE), copied, unmapped, so that
 * only a file's own pages count in our RSS, and only while written. A
 * batch update instead copied them into the kernel one row at a time (15 %
 * of a 1 s run's CPU).
 */
static int write_rows(int fd, uint32_t first, const struct unwind_row *rows, uint32_t nr)
{
	size_t page = (size_t)sysconf(_SC_PAGESIZE);
	size_t lo = (size_t)first * sizeof(*rows), hi = lo + (size_t)nr * sizeof(*rows);
	size_t off = lo & ~(page - 1), len = (hi - off + page - 1) & ~(page - 1);
	void *m;

	if (!nr)
		return 0;
	m = mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, (off_t)off);
	if (m == MAP_FAILED)
		return -errno;
	memcpy((char *)m + (lo - off), rows, (size_t)nr * sizeof(*rows));
	munmap(m, len);
	return 0;
}

struct unwind_file_key unwind_file_key_of(const struct stat *st)
{
	struct unwind_file_key k = { 0 };

	k.ino = st->st_ino;
	/* The kernel's encoding, as the VMA's inode has it: 20 bits of minor. */
	k.dev = major(st->st_dev) << 20 | minor(st->st_dev);
	return k;
}

static uint64_t key_hash(const struct unwind_file_key *k)
{
	return hash_mix(k->ino, k->dev);
}

static bool key_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct unwind_file_key *a = &((const struct unwind_tables *)owner)->files[idx].key;
	const struct unwind_file_key *b = key;

	return a->ino == b->ino && a->dev == b->dev;
}

static bool build_id_eq(const void *owner, const void *key, uint32_t idx)
{
	return !strcmp(((const struct unwind_tables *)owner)->files[idx].build_id, key);
}

static uint64_t cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

/* The bytes of code the file's executable segments hold. */
static uint64_t code_bytes(Elf *elf)
{
	size_t n, i;
	GElf_Phdr ph;
	uint64_t bytes = 0;

	if (elf_getphdrnum(elf, &n))
		return 0;
	for (i = 0; i < n; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X))
			bytes += ph.p_filesz;
	return bytes;
}

/* The bytes of code the rows say how to unwind. */
static uint64_t covered_bytes(const struct cfi_rows *r)
{
	uint64_t bytes = 0;
	size_t i;

	for (i = 0; i + 1 < r->nr; i++)
		if ((r->rows[i].rules & ROW_CFA_MASK) != ROW_CFA_NONE)
			bytes += r->rows[i + 1].addr - r->rows[i].addr;
	return bytes;
}

/* Records the file (its table at where) under key and build ID; publishes it. */
static int publish(struct unwind_tables *t, const struct unwind_file_key *key, const char *build_id,
		   struct unwind_file where)
{
	struct table_file *f;
	int err;

	if ((err = bpf_map_update_elem(t->files_fd, key, &where, BPF_ANY)))
		return err;
	ALLOC_GROW(t->files, t->nr_files + 1, t->files_alloc);
	f = &t->files[t->nr_files];
	f->key = *key;
	f->where = where;
	snprintf(f->build_id, sizeof(f->build_id), "%s", build_id ? build_id : "");
	itab_insert(&t->by_key, key_hash(key), t->nr_files);
	if (f->build_id[0])
		itab_insert(&t->by_build_id, hash_bytes(f->build_id, strlen(f->build_id), 0), t->nr_files);
	t->nr_files++;
	return 0;
}

int unwind_tables_alias(struct unwind_tables *t, const struct unwind_file_key *key,
			const char *build_id)
{
	uint32_t idx;

	if (t->rows_fd < 0 || itab_find(&t->by_key, key_hash(key), key_eq, t, key) != ITAB_NONE)
		return 0;
	if (!build_id[0] || (idx = itab_find(&t->by_build_id, hash_bytes(build_id, strlen(build_id), 0),
					     build_id_eq, t, build_id)) == ITAB_NONE)
		return -ENOENT;
	t->shared++;
	return publish(t, key, build_id, t->files[idx].where);
}

int unwind_tables_add(struct unwind_tables *t, const struct unwind_file_key *key,
		      const char *build_id, Elf *elf, Elf *(*debug_elf)(void *ctx), void *ctx)
{
	struct cfi_rows rows = { 0 };
	struct unwind_file where;
	struct rows_chunk *c;
	uint64_t start;
	Elf *debug;
	int err, chunk = 0;

	if (t->rows_fd < 0)
		return 0;
	if ((err = unwind_tables_alias(t, key, build_id ? build_id : "")) != -ENOENT)
		return err;
	start = cpu_ns();
	err = cfi_rows_build(elf, NULL, &rows);
	/* Built with -fno-asynchronous-unwind-tables: the rest may be in .debug_frame elsewhere. */
	if (!err && covered_bytes(&rows) * 2 < code_bytes(elf) && debug_elf && (debug = debug_elf(ctx))) {
		cfi_rows_free(&rows);
		memset(&rows, 0, sizeof(rows));
		err = cfi_rows_build(elf, debug, &rows);
	}
	t->build_ns += cpu_ns() - start;
	if (!err && !covered_bytes(&rows))
		err = -ENODATA;
	if (!err && (chunk = chunk_for(t, rows.nr)) < 0)
		err = chunk;
	if (err) {
		t->empty += err == -ENODATA;
		t->no_room += err == -ENOSPC;
		cfi_rows_free(&rows);
		return err;
	}
	/* Rows first, then the slice that points at them: the program never sees half a table. */
	c = &t->chunks[chunk];
	if ((err = write_rows(c->fd, c->used, rows.rows, rows.nr))) {
		cfi_rows_free(&rows);
		return err;
	}
	where = (struct unwind_file){ (uint32_t)chunk << UNWIND_CHUNK_SHIFT | c->used, rows.nr };
	c->used += rows.nr;
	t->rows_used += rows.nr;
	t->built++;
	cfi_rows_free(&rows);
	return publish(t, key, build_id, where);
}

uint64_t unwind_tables_bytes(const struct unwind_tables *t)
{
	if (t->rows_fd < 0)
		return 0;
	return (uint64_t)t->rows_made * sizeof(struct unwind_row) +
	       (uint64_t)t->nr_files * (sizeof(struct unwind_file_key) + sizeof(struct unwind_file));
}
