// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * --unwind auto: the unwind tables fed as the symbolizer opens files (a
 * listener of its files), and as the program asks for files it met with
 * no table.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/unwind_tables.h"
#include "symbolize_private.h"


/* --unwind auto: what building a table may ask for, the file's separate debug file. */
struct table_debug {
	struct symbolizer *s;
	uint32_t tgid;
	const char *path;
	int fd;			/* the file */
	int dfd;		/* its debug file once asked for, else -1 */
	Elf *delf;
};

static Elf *table_debug_elf(void *ctx)
{
	struct table_debug *d = ctx;
	struct symfile probe = { .path = (char *)d->path };
	struct debuginfo_elf bin;

	if (debuginfo_elf_read(&bin, d->fd))
		return NULL;
	d->dfd = find_debug_file(&d->s->procs, d->tgid, &probe, &bin);
	free(probe.debug_path);
	debuginfo_elf_release(&bin);
	if (d->dfd >= 0)
		d->delf = elf_begin(d->dfd, ELF_C_READ, NULL);
	return d->delf;
}

/*
 * The unwind table of a file just opened, built now: the program walks with
 * it from now on. A file only a request named has no path to find a debug
 * file by: its own CFI alone.
 */
static void add_table(void *ctx, const struct opened_file *f)
{
	struct symbolizer *s = ctx;
	const struct proc_map *m = f->m;
	struct unwind_file_key key = unwind_file_key_of(f->st);
	struct table_debug d = { s, f->tgid, m->path, f->fd, -1, NULL };
	char hex[2 * sizeof(m->build_id) + 1];
	Elf *elf;
	int err;

	build_id_hex(m, hex);
	/* Read, not mapped: a file truncated under us fails a read rather than fault. */
	if (!(elf = elf_begin(f->fd, ELF_C_READ, NULL)))
		return;
	err = unwind_tables_add(s->tables, &key, hex, elf, m->path[0] ? table_debug_elf : NULL, &d);
	if (err && err != -ENODATA)
		debug("no unwind table for '%s' (process %u maps it at %#llx): %s", f->path, f->tgid,
		      (unsigned long long)m->start, strerror(-err));
	elf_end(elf);
	if (d.delf)
		elf_end(d.delf);
	if (d.dfd >= 0)
		close(d.dfd);
}

/*
 * A file known by its build ID, mapped from another inode (a copy of a
 * binary): the program finds tables by inode, so that one gets the table too.
 */
static void alias_table(void *ctx, const struct opened_file *f)
{
	struct symbolizer *s = ctx;
	char hex[2 * sizeof(f->m->build_id) + 1];
	struct unwind_file_key key = unwind_file_key_of(f->st);

	build_id_hex(f->m, hex);
	unwind_tables_alias(s->tables, &key, hex);
}

/* The path of the file a request names, as the process's map_files link says ("" if gone). */
static const char *mapped_path(const struct symbolizer *s, const struct table_request *r,
			       char path[4096])
{
	char link[4200];
	ssize_t n;

	snprintf(link, sizeof(link), "%s/%u/map_files/%llx-%llx", s->procs.proc_root, r->tgid,
		 (unsigned long long)r->start, (unsigned long long)r->end);
	n = readlink(link, path, 4095);
	path[n > 0 ? n : 0] = '\0';
	return path;
}

void symbolizer_table_request(struct symbolizer *s, const struct table_request *r)
{
	struct proc_map m = { .start = r->start, .end = r->end, .offset = r->offset,
			      .path = (char *)"" };
	char path[4096], root[4096];
	struct opened_file f = { r->tgid, &m, -1, NULL, "",
				 process_root(&s->procs, r->tgid, root, sizeof(root)) };
	struct unwind_file_key key;
	struct stat st;

	if (!s->tables || (f.fd = open_map_files(&s->procs, r->tgid, &m)) < 0)
		return;
	/*
	 * Every listener, not the tables alone: a process that read its
	 * mappings before the program knew the file for an interpreter.
	 */
	if (!fstat(f.fd, &st) && (key = unwind_file_key_of(&st), key.ino == r->file.ino) &&
	    key.dev == r->file.dev) {
		f.st = &st;
		f.path = mapped_path(s, r, path);
		tell_opened(s, &f);
	}
	close(f.fd);
}

void symbolizer_use_tables(struct symbolizer *s, struct unwind_tables *t)
{
	struct file_listener tables = { add_table, alias_table, s };
	struct unwind_file_key vdso = { 0 };

	s->tables = t;
	symbolizer_on_file(s, &tables);
	if (s->vdso.cfi_elf)
		unwind_tables_add(t, &vdso, "", s->vdso.cfi_elf, NULL, NULL);
}
