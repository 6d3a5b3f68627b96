// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <linux/perf_event.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/demangle.h"
#include "bpfprof/perfmap.h"
#include "bpfprof/sample.h"
#include "bpfprof/python.h"
#include "bpfprof/symbolize.h"
#include "bpfprof/unwind_tables.h"

static int load_vdso(struct symfile *f);
static void open_files_of(struct symbolizer *s, struct proc *p);
static void jitmaps_release(struct symbolizer *s);

void symbolizer_init(struct symbolizer *s)
{
	memset(s, 0, sizeof(*s));
	procs_init(&s->procs);
	kernel_symbols_init(&s->kernel, "/proc/kallsyms");
	s->vdso.path = xstrdup("[vdso]");
	s->vdso.fd = -1;
	s->vdso.cfi_fd = -1;
	s->vdso.debug_cfi_fd = -1;
	unwinder_init(&s->unwinder);
	s->vdso.err = load_vdso(&s->vdso);
}

/* What the file's reading made: symbols, debug info, CFI. */
static void symfile_unload(struct symfile *f)
{
	if (f->cfi)
		dwarf_cfi_end(f->cfi);
	if (f->cfi_dwarf)
		dwarf_end(f->cfi_dwarf);	/* and its debug_cfi */
	if (f->cfi_elf)
		elf_end(f->cfi_elf);
	if (f->debug_cfi_elf)
		elf_end(f->debug_cfi_elf);
	if (f->cfi_fd >= 0)
		close(f->cfi_fd);
	if (f->debug_cfi_fd >= 0)
		close(f->debug_cfi_fd);
	elf_symtab_release(&f->syms);
	elf_symtab_release(&f->debug_syms);
	dwarf_index_free(f->dwarf);
	free(f->debug_path);
	f->cfi = f->debug_cfi = NULL;
	f->cfi_dwarf = NULL;
	f->cfi_elf = f->debug_cfi_elf = NULL;
	f->cfi_fd = f->debug_cfi_fd = -1;
	f->dwarf = NULL;
	f->debug_path = NULL;
}

static void symfile_free(struct symfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	symfile_unload(f);
	free(f->path);
}

void symbolizer_release(struct symbolizer *s)
{
	uint32_t i;

	procs_release(&s->procs);
	kernel_symbols_release(&s->kernel);
	for (i = 0; i < s->nr_files; i++) {
		symfile_free(s->files[i]);
		free(s->files[i]);
	}
	free(s->files);
	itab_release(&s->file_index);
	free(s->mapped);
	itab_release(&s->mapped_index);
	symfile_free(&s->vdso);
	unwinder_release(&s->unwinder);
	jitmaps_release(s);
	free(s->late_jit);
	memset(s, 0, sizeof(*s));
}

void symbolizer_new_generation(struct symbolizer *s)
{
	s->procs.generation++;
	kernel_symbols_check_modules(&s->kernel);
}

void symbolizer_scan(struct symbolizer *s, uint32_t (*current_gen)(void *ctx, uint32_t tgid),
		     void *ctx)
{
	uint32_t i;

	procs_scan(&s->procs, current_gen, ctx);
	/* Their files too, now: a process may be gone by the drain that needs them. */
	for (i = 0; i < s->procs.nr; i++)
		open_files_of(s, s->procs.procs[i]);
}

/* A file no known process has mapped for this many drains in a row lets its symbols go. */
#define RELEASE_AFTER_DRAINS 10

/*
 * Programs that ran for a while (a compiler's, a test's) leave no process
 * that maps their files: what was read of those goes, so a long run's
 * memory follows what runs now, not everything that ever ran.
 */
static void release_unmapped_files(struct symbolizer *s)
{
	uint32_t i;
	size_t j, k;

	for (i = 0; i < s->nr_files; i++)
		s->files[i]->in_use = false;
	for (i = 0; i < s->procs.nr; i++) {
		const struct proc *proc = s->procs.procs[i];

		for (j = 0; j < proc->nr_images; j++)
			for (k = 0; k < proc->images[j].nr_maps; k++)
				if (proc->images[j].maps[k].file >= 0)
					s->files[proc->images[j].maps[k].file]->in_use = true;
	}
	for (i = 0; i < s->nr_files; i++) {
		struct symfile *f = s->files[i];

		if (f->in_use || f->released) {
			f->unused_drains = 0;
			continue;
		}
		if (++f->unused_drains < RELEASE_AFTER_DRAINS)
			continue;
		debug("symbols of '%s' let go: no process has mapped it for %d drains", f->path,
		      RELEASE_AFTER_DRAINS);
		/* Never read (no frame needed it): only its descriptor to let go. */
		if (f->fd >= 0) {
			close(f->fd);
			f->fd = -1;
			s->open_files--;
		}
		symfile_unload(f);
		f->released = true;
		f->err = 0;
	}
}

static void forget_jitmaps(struct symbolizer *s);

uint32_t symbolizer_forget_before(struct symbolizer *s, uint64_t ns)
{
	uint32_t i, pruned = procs_prune(&s->procs, ns);

	forget_jitmaps(s);

	/* Once a drain: debug info no lookup needed since the last one is let go. */
	for (i = 0; i < s->nr_files; i++)
		dwarf_index_trim(s->files[i]->dwarf);
	release_unmapped_files(s);
	return pruned;
}

/* Forgotten, and not alive either (a kernel thread is never known: it maps nothing). */
bool symbolizer_process_gone(void *ctx, uint32_t pid)
{
	struct symbolizer *s = ctx;
	char path[4096];

	if (procs_find(&s->procs, pid))
		return false;
	snprintf(path, sizeof(path), "%s/%" PRIu32, s->procs.proc_root, pid);
	return access(path, F_OK) != 0;
}

static void renumber(void *ctx, const struct profile_renumbering *r)
{
	struct symbolizer *s = ctx;
	uint32_t i, kept = 0;
	size_t j, k;

	for (i = 0; i < s->procs.nr; i++) {
		struct proc *proc = s->procs.procs[i];

		for (j = 0; j < proc->nr_images; j++)
			for (k = 0; k < proc->images[j].nr_maps; k++) {
				struct proc_map *m = &proc->images[j].maps[k];
				uint32_t to = m->prof_mapping ? r->mappings[m->prof_mapping - 1] : ITAB_NONE;

				m->prof_mapping = to == ITAB_NONE ? 0 : to + 1;
			}
	}
	kernel_symbols_renumber(&s->kernel, r);
	for (i = 0; i < s->nr_late_jit; i++) {
		struct late_jit e = s->late_jit[i];

		if ((e.location = r->locations[e.location]) != ITAB_NONE)
			s->late_jit[kept++] = e;
	}
	s->nr_late_jit = kept;
}

void symbolizer_on_fold(struct symbolizer *s, struct profile *p)
{
	s->fold = (struct fold_listener){ .after = renumber, .ctx = s };
	profile_on_fold(p, &s->fold);
}

void symbolizer_off_fold(struct symbolizer *s, struct profile *p)
{
	profile_off_fold(p, &s->fold);
}

/*
 * Every process on one kernel shares the same vDSO image, so ours names
 * theirs: read it from our own memory.
 */
static int load_vdso(struct symfile *f)
{
	unsigned long base = getauxval(AT_SYSINFO_EHDR);
	struct proc_map *maps;
	size_t nr, i;
	char *text;
	int err = -ENOENT;

	if (!base)
		return -ENOENT;
	if ((err = read_file("/proc/self/maps", &text, NULL)))
		return err;
	err = procmaps_parse(text, &maps, &nr);
	free(text);
	if (err)
		return err;
	err = -ENOENT;
	for (i = 0; i < nr; i++)
		if (maps[i].start == base && !strcmp(maps[i].path, "[vdso]")) {
			err = elf_symtab_read_mem(&f->syms, (const void *)base, maps[i].end - maps[i].start);
			/* Our own mapping of it lives as long as we do: its CFI can be read in place. */
			if (!err && (f->cfi_elf = elf_memory((char *)base, maps[i].end - maps[i].start)))
				f->cfi = dwarf_getcfi_elf(f->cfi_elf);
		}
	procmaps_free(maps, nr);
	return err;
}

/* Files ------------------------------------------------------------------ */

/* Files are cached by what the kernel says the opened file is. */
struct file_key {
	dev_t dev;
	ino_t ino;
};

static bool file_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct symfile *f = ((const struct symbolizer *)owner)->files[idx];
	const struct file_key *k = key;

	return f->dev == k->dev && f->ino == k->ino;
}

/* map_files names each mapping by its range; a side-band record's range may be a part of one. */
static int open_map_files(const struct procs *ps, uint32_t tgid, const struct proc_map *m)
{
	char dir[64], path[384];
	struct dirent *e;
	DIR *d;
	int fd;

	snprintf(dir, sizeof(dir), "%s/%" PRIu32 "/map_files", ps->proc_root, tgid);
	snprintf(path, sizeof(path), "%s/%" PRIx64 "-%" PRIx64, dir, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd >= 0 || !(d = opendir(dir)))
		return fd;
	while ((e = readdir(d))) {
		unsigned long long start, end;

		if (sscanf(e->d_name, "%llx-%llx", &start, &end) == 2 && start <= m->start &&
		    m->start < end) {
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			fd = open(path, O_RDONLY | O_CLOEXEC);
			break;
		}
	}
	closedir(d);
	return fd;
}

/*
 * The file the process mapped, as it sees it: through map_files (deleted
 * files, memfds, other mount namespaces), else inside its root.
 */
static int open_in_process(const struct procs *ps, uint32_t tgid, const struct proc_map *m)
{
	char root[64];
	int rootfd, fd = open_map_files(ps, tgid, m);

	if (fd >= 0)
		return fd;
	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", ps->proc_root, tgid);
	rootfd = open(root, O_PATH | O_DIRECTORY | O_CLOEXEC);
	if (rootfd < 0)
		return -errno;
	fd = open_in_root(rootfd, m->path, O_RDONLY | O_CLOEXEC);
	close(rootfd);
	return fd;
}

/*
 * Is the file at the mapping's path in our root the one the (gone)
 * process mapped? Only if its inode or build ID says so.
 */
static void build_id_hex(const struct proc_map *m, char *hex)
{
	int i;

	hex[0] = '\0';
	for (i = 0; i < m->build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", m->build_id[i]);
}

static bool is_mapped_file(const struct proc_map *m, const struct stat *st, const struct symfile *f)
{
	char hex[2 * sizeof(m->build_id) + 1];

	if (m->inode)
		return st->st_ino == m->inode;
	if (!m->build_id_size || !f)
		return false;
	build_id_hex(m, hex);
	return !strcmp(hex, f->syms.build_id);
}

/*
 * f's debug file as the process that mapped f sees its files; then, when
 * that root is not ours or is gone, in ours: the build ID or CRC check
 * makes a file found there just as safe.
 */
static int find_debug_file(const struct procs *ps, uint32_t tgid, struct symfile *f,
			   const struct debuginfo_elf *bin)
{
	struct debuginfo_dirs dirs = { 0 };
	struct stat ours, theirs;
	char root[4096];
	int fd = -ENOENT, err;

	snprintf(root, sizeof(root), "%s/%" PRIu32 "/root", ps->proc_root, tgid);
	if (!stat(root, &theirs)) {
		dirs.root = root;
		fd = debuginfo_find(&dirs, f->path, bin, &f->debug_path);
		if (fd >= 0 || (!stat("/", &ours) && ours.st_dev == theirs.st_dev &&
				ours.st_ino == theirs.st_ino))
			return fd;
	}
	dirs.root = NULL;
	err = debuginfo_find(&dirs, f->path, bin, &f->debug_path);
	return err == -ENOENT ? fd : err;
}

/*
 * What the file on fd lacks, a full symbol table or DWARF, from its
 * separate debug file; then the DWARF of whichever of the two has it.
 * With keep_dfd, the debug file's fd is left there (-1 if none), not closed.
 */
static void load_debug_info(const struct procs *ps, uint32_t tgid, struct symfile *f, int fd,
			    int *keep_dfd)
{
	struct debuginfo_elf bin;
	int dfd = -ENOENT, err;

	if (debuginfo_elf_read(&bin, fd))
		return;
	if (!bin.has_dwarf || !f->syms.from_symtab)
		dfd = find_debug_file(ps, tgid, f, &bin);
	if (dfd >= 0) {
		debug("debug file of '%s': '%s'", f->path, f->debug_path);
		if (!f->syms.from_symtab && (err = elf_symtab_read_debug_fd(&f->debug_syms, dfd, fd)))
			debug("cannot read the symbols of '%s': %s", f->debug_path, strerror(-err));
	} else if (dfd != -ENOENT) {
		debug("no debug file for '%s': %s", f->path,
		      dfd == -ESTALE ? "none matches its build ID or CRC" : strerror(-dfd));
	}
	err = bin.has_dwarf ? dwarf_index_open(&f->dwarf, fd) :
	      dfd >= 0 ? dwarf_index_open(&f->dwarf, dfd) : -ENODATA;
	if (err && err != -ENODATA)
		debug("cannot read the DWARF of '%s': %s", f->path, strerror(-err));
	if (keep_dfd)
		*keep_dfd = dfd >= 0 ? dfd : -1;
	else if (dfd >= 0)
		close(dfd);
	debuginfo_elf_release(&bin);
}

/*
 * Files are opened as soon as a mapping of them is seen, while the process
 * lives, and read the first time a frame needs them (most never are).
 * Past this many open files, a file is read at once and closed instead.
 */
#define MAX_OPEN_FILES 4096

static bool has_section(Elf *elf, const char *name)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	size_t shstrndx;
	const char *n;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return false;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && sh.sh_type == SHT_PROGBITS &&
		    (n = elf_strptr(elf, shstrndx, sh.sh_name)) && !strcmp(n, name))
			return true;
	return false;
}

/*
 * --unwind dwarf: the file's .eh_frame, and for code it leaves out (built
 * with -fno-asynchronous-unwind-tables) the .debug_frame of the file or of
 * its debug file (dfd, taken). ELF handles stay open: CFI is read as the
 * unwinder asks.
 */
static void load_cfi(struct symfile *f, int dfd)
{
	Elf *elf;

	if ((f->cfi_fd = dup(f->fd)) >= 0 &&
	    (f->cfi_elf = elf_begin(f->cfi_fd, ELF_C_READ_MMAP, NULL)))
		f->cfi = dwarf_getcfi_elf(f->cfi_elf);
	if (f->cfi_elf && has_section(f->cfi_elf, ".debug_frame")) {
		elf = f->cfi_elf;
	} else if (dfd >= 0 && (f->debug_cfi_elf = elf_begin(dfd, ELF_C_READ_MMAP, NULL)) &&
		   has_section(f->debug_cfi_elf, ".debug_frame")) {
		elf = f->debug_cfi_elf;
		f->debug_cfi_fd = dfd;
		dfd = -1;
	} else {
		elf = NULL;
	}
	/* libdw reads .debug_frame through a Dwarf handle, which owns that CFI. */
	if (elf && (f->cfi_dwarf = dwarf_begin_elf(elf, DWARF_C_READ, NULL)))
		f->debug_cfi = dwarf_getcfi(f->cfi_dwarf);
	if (dfd >= 0)
		close(dfd);
}

/* Reads the symbols of the file (once), then lets its fd go. */
static void read_symbols(struct symbolizer *s, struct symfile *f)
{
	int dfd = -1;

	if (f->fd < 0)
		return;
	f->err = elf_symtab_read_fd(&f->syms, f->fd);
	if (!f->err)
		load_debug_info(&s->procs, f->tgid, f, f->fd, s->unwinding ? &dfd : NULL);
	else
		debug("no symbols in '%s': %s", f->path, strerror(-f->err));
	if (s->unwinding && !f->err)
		load_cfi(f, dfd);
	close(f->fd);
	f->fd = -1;
	s->open_files--;
}

static struct symfile *new_symfile(struct symbolizer *s, uint32_t tgid, int fd, const char *path,
				   const struct stat *st)
{
	struct symfile *f = xcalloc(1, sizeof(*f));

	f->cfi_fd = -1;
	f->debug_cfi_fd = -1;
	f->dev = st->st_dev;
	f->ino = st->st_ino;
	f->path = xstrdup(path);
	f->tgid = tgid;
	f->fd = fd;
	s->open_files++;
	if (s->open_files > MAX_OPEN_FILES)
		read_symbols(s, f);
	return f;
}

/* What the kernel says identifies the mapped file; false if it says nothing. */
static bool mapped_key(const struct proc_map *m, struct mapped_file *k)
{
	memset(k, 0, sizeof(*k));
	if (m->build_id_size) {
		k->build_id_size = m->build_id_size < sizeof(k->build_id) ? m->build_id_size
									 : sizeof(k->build_id);
		memcpy(k->build_id, m->build_id, k->build_id_size);
	} else if (m->inode) {
		k->ino = m->inode;
		k->dev_major = m->dev_major;
		k->dev_minor = m->dev_minor;
	} else {
		return false;
	}
	return true;
}

static uint64_t mapped_hash(const struct mapped_file *k)
{
	return hash_mix(hash_mix(k->ino, (uint64_t)k->dev_major << 32 | k->dev_minor),
			hash_bytes(k->build_id, k->build_id_size, 0));
}

static bool mapped_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct mapped_file *a = &((const struct symbolizer *)owner)->mapped[idx], *b = key;

	return a->ino == b->ino && a->dev_major == b->dev_major && a->dev_minor == b->dev_minor &&
	       a->build_id_size == b->build_id_size &&
	       !memcmp(a->build_id, b->build_id, b->build_id_size);
}

/* A file whose symbols were let go, mapped again: read again when a frame needs it. */
static void revive(struct symbolizer *s, struct symfile *f, uint32_t tgid, int fd)
{
	debug("'%s' mapped again: its symbols are read again", f->path);
	f->fd = fd;
	f->tgid = tgid;
	f->released = false;
	f->unused_drains = 0;
	s->open_files++;
	if (s->open_files > MAX_OPEN_FILES)
		read_symbols(s, f);
}

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

/* The unwind table of a file just opened, built now: the program walks with it from now on. */
static void add_table(struct symbolizer *s, uint32_t tgid, int fd, const struct stat *st,
		      const struct proc_map *m)
{
	struct unwind_file_key key = unwind_file_key_of(st);
	struct table_debug d = { s, tgid, m->path, fd, -1, NULL };
	char hex[2 * sizeof(m->build_id) + 1];
	Elf *elf;
	int err;

	if (!s->tables)
		return;
	build_id_hex(m, hex);
	/* Read, not mapped: a file truncated under us fails a read rather than fault. */
	if (!(elf = elf_begin(fd, ELF_C_READ, NULL)))
		return;
	err = unwind_tables_add(s->tables, &key, hex, elf, table_debug_elf, &d);
	if (err && err != -ENODATA)
		debug("no unwind table for '%s': %s", m->path, strerror(-err));
	if (python_file_opened(s->python, &key, fd, m->path))
		python_process_maps(s->python, tgid, &key, m->start, m->offset);
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
static void alias_table(struct symbolizer *s, uint32_t tgid, const struct proc_map *m)
{
	char hex[2 * sizeof(m->build_id) + 1];
	struct unwind_file_key key;
	struct stat st;
	int fd;

	if (!s->tables || !m->build_id_size || (fd = open_in_process(&s->procs, tgid, m)) < 0)
		return;
	if (!fstat(fd, &st)) {
		key = unwind_file_key_of(&st);
		build_id_hex(m, hex);
		unwind_tables_alias(s->tables, &key, hex);
	}
	close(fd);
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
	struct proc_map m = { .start = r->start, .end = r->end, .path = (char *)"" };
	char path[4096];
	struct unwind_file_key key;
	struct stat st;
	Elf *elf;
	int fd, err;

	if (!s->tables || (fd = open_map_files(&s->procs, r->tgid, &m)) < 0)
		return;
	if (!fstat(fd, &st) && (key = unwind_file_key_of(&st), key.ino == r->file.ino) &&
	    key.dev == r->file.dev && (elf = elf_begin(fd, ELF_C_READ, NULL))) {
		if ((err = unwind_tables_add(s->tables, &key, "", elf, NULL, NULL)) && err != -ENODATA)
			debug("no unwind table for the file process %u maps at %#llx: %s", r->tgid,
			      (unsigned long long)r->start, strerror(-err));
		elf_end(elf);
		/* The process read its mappings before the program knew the file for an interpreter. */
		if (s->python && python_file_opened(s->python, &key, fd, mapped_path(s, r, path)))
			python_process_maps(s->python, r->tgid, &key, r->start, r->offset);
	}
	close(fd);
}

void symbolizer_use_tables(struct symbolizer *s, struct unwind_tables *t)
{
	struct unwind_file_key vdso = { 0 };

	s->tables = t;
	if (s->vdso.cfi_elf)
		unwind_tables_add(t, &vdso, "", s->vdso.cfi_elf, NULL, NULL);
}

/* Opens the mapped file, or finds it among those open by what fstat says. */
static struct symfile *open_file(struct symbolizer *s, uint32_t tgid, struct proc_map *m)
{
	struct symfile *f = NULL;
	struct file_key key;
	struct stat st;
	bool ours = false;
	uint32_t idx;
	int fd;

	fd = open_in_process(&s->procs, tgid, m);
	if (fd < 0) {
		fd = open_in_root(-1, m->path, O_RDONLY | O_CLOEXEC);
		ours = true;
	}
	if (fd < 0)
		return NULL;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) || (ours && m->inode && st.st_ino != m->inode)) {
		close(fd);
		return NULL;
	}
	key.dev = st.st_dev;
	key.ino = st.st_ino;
	idx = itab_find(&s->file_index, hash_mix(key.dev, key.ino), file_eq, s, &key);
	if (idx != ITAB_NONE) {
		f = s->files[idx];
		if (f->released)
			revive(s, f, tgid, fd);
		else
			close(fd);
	} else {
		add_table(s, tgid, fd, &st, m);
		f = new_symfile(s, tgid, fd, m->path, &st);
		ALLOC_GROW(s->files, s->nr_files + 1, s->files_alloc);
		idx = s->nr_files++;
		s->files[idx] = f;
		itab_insert(&s->file_index, hash_mix(key.dev, key.ino), idx);
	}
	/* Found by path only: its build ID must be the mapped file's. */
	if (ours && !m->inode) {
		read_symbols(s, f);
		if (!is_mapped_file(m, &st, f))
			return NULL;
	}
	m->file = idx;
	return f;
}

/*
 * The file a mapping names, opened the first time (as the process sees it
 * while it lives; afterwards by its path here, if its inode or build ID
 * proves it the same file); NULL when it cannot be had. A failure is not
 * remembered: a later mapping of the same file may succeed. A file the
 * kernel names as one already open (by build ID, or device and inode) is
 * not opened again: every process maps libc.
 */
static struct symfile *get_file(struct symbolizer *s, uint32_t tgid, struct proc_map *m)
{
	struct mapped_file k;
	struct symfile *f;
	bool keyed;
	uint32_t idx;

	keyed = m->file < 0 && mapped_key(m, &k);
	if (keyed && (idx = itab_find(&s->mapped_index, mapped_hash(&k), mapped_eq, s, &k)) !=
			     ITAB_NONE) {
		m->file = s->mapped[idx].file;
		alias_table(s, tgid, m);
	}
	/*
	 * A file let go is opened again as this process sees it (it maps the
	 * file now): the same file, or another with the same build ID.
	 */
	if (m->file >= 0)
		return s->files[m->file]->released ? open_file(s, tgid, m) : s->files[m->file];
	f = open_file(s, tgid, m);
	if (f && keyed) {
		k.file = m->file;
		ALLOC_GROW(s->mapped, s->nr_mapped + 1, s->mapped_alloc);
		s->mapped[s->nr_mapped] = k;
		itab_insert(&s->mapped_index, mapped_hash(&k), s->nr_mapped++);
	}
	return f;
}

/* Opens the files of every mapping of p's current image (a process seen at start). */
static void open_files_of(struct symbolizer *s, struct proc *p)
{
	struct proc_image *img = p->nr_images ? &p->images[p->nr_images - 1] : NULL;
	size_t i;

	for (i = 0; img && i < img->nr_maps; i++)
		if (img->maps[i].path[0] == '/')
			get_file(s, p->tgid, &img->maps[i]);
}

/*
 * Symbolize: the frames at a file offset, innermost first (an inline chain
 * when the file says so); 0 when nothing names it.
 */
static uint16_t file_frames(struct symbolizer *s, struct symfile *f, uint64_t offset,
			    struct sym_frame *out)
{
	const struct elf_symtab *t = f->debug_syms.from_symtab ? &f->debug_syms : &f->syms;
	struct dwarf_frame dw[MAX_INLINE_DEPTH];
	const struct elf_sym *sym;
	uint64_t vaddr;
	int n = 0, i;

	read_symbols(s, f);
	/* The file's own segments: a debug file's say nothing of file offsets. */
	if (f->err || elf_symtab_offset_to_vaddr(&f->syms, offset, &vaddr))
		return 0;
	sym = elf_symtab_lookup(t, vaddr);
	if (f->dwarf)
		n = dwarf_index_frames(f->dwarf, vaddr, dw, MAX_INLINE_DEPTH);
	/* The function as the symbol table spells it; DWARF's name if it has none. */
	if (n > 0 && sym)
		dw[n - 1].name = elf_sym_name(t, sym);
	if (n > 0 && dw[n - 1].name) {
		for (i = 0; i < n; i++)
			out[i] = (struct sym_frame){ dw[i].name ? dw[i].name : "??", dw[i].file,
						     dw[i].line };
		return n;
	}
	if (!sym)
		return 0;
	out[0] = (struct sym_frame){ elf_sym_name(t, sym), NULL, 0 };
	return 1;
}

void symbolizer_track(void *ctx, const struct sb_event *ev)
{
	struct symbolizer *s = ctx;
	struct proc *owner;
	struct proc_map *m = procs_apply(&s->procs, ev, &owner);

	/* kallsyms names BPF code "[bpf]"; other out-of-line code is the kernel's. */
	if (ev->type == SB_KSYMBOL && !ev->ksymbol.unregister)
		kernel_symbols_added(&s->kernel, ev->ksymbol.addr, ev->ksymbol.len, ev->ksymbol.name,
				     ev->ksymbol.type == PERF_RECORD_KSYMBOL_TYPE_BPF ? "bpf" : "");
	if (m && m->path[0] == '/')
		get_file(s, owner->tgid, m);
}

/* Locations -------------------------------------------------------------- */

/* A profile function for a symbol: its readable name, the symbol as it is, the source file. */
static uint32_t frame_function(struct profile *p, const struct sym_frame *fr)
{
	uint32_t system_name = profile_string(p, fr->name), name = system_name;
	/* Once per new location, so no cache: about 1.5 us for a C++ name. */
	char *readable = demangle(fr->name);

	if (readable) {
		name = profile_string(p, readable);
		free(readable);
	}
	return profile_function(p, name, system_name, fr->file ? profile_string(p, fr->file) : 0);
}

/* The location at addr named by frames (innermost first; none: unnamed). */
static uint32_t frames_location(struct profile *p, uint32_t mapping, uint64_t addr,
				enum frame_kind kind, const struct sym_frame *frames, uint16_t n)
{
	struct prof_line lines[MAX_INLINE_DEPTH];
	uint16_t i;

	for (i = 0; i < n && i < MAX_INLINE_DEPTH; i++) {
		lines[i].function = frame_function(p, &frames[i]);
		lines[i].line = frames[i].line;
	}
	return profile_location_add(p, mapping, addr, kind, lines, i);
}

static uint32_t named_location(struct profile *p, uint32_t mapping, uint64_t addr,
			       enum frame_kind kind, const char *name)
{
	struct sym_frame fr = { name, NULL, 0 };

	return frames_location(p, mapping, addr, kind, &fr, name ? 1 : 0);
}

/* JIT code --------------------------------------------------------------- */

/* A process's perf map: looked for once, read again as it grows. */
struct jitmap {
	uint32_t tgid;
	int fd;			/* -1: not open (none found, or the process is gone) */
	uint64_t read_generation;	/* drain of the last look at the file */
	uint32_t late_pass;	/* symbolizer_name_late_jit()'s pass that last read it */
	struct perfmap map;
};

static bool jitmap_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct symbolizer *)owner)->jitmaps[idx]->tgid == *(const uint32_t *)key;
}

static void jitmap_free(struct jitmap *j)
{
	if (j->fd >= 0)
		close(j->fd);
	perfmap_release(&j->map);
	free(j);
}

static void jitmaps_release(struct symbolizer *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_jitmaps; i++)
		jitmap_free(s->jitmaps[i]);
	free(s->jitmaps);
	itab_release(&s->jitmap_index);
}

/*
 * The file is named by the pid the process sees itself as (NSpid's last
 * field) and lives in its /tmp: open it through /proc/PID/root while the
 * process lives, and keep it open for its later lines. A process already
 * gone can only be looked for in our own /tmp, by its pid here.
 */
static int jitmap_open(const struct procs *ps, uint32_t tgid)
{
	uint32_t nspid = tgid;
	char path[4096], *status;
	struct stat st;
	int fd;

	snprintf(path, sizeof(path), "%s/%" PRIu32, ps->proc_root, tgid);
	if (stat(path, &st))
		return perfmap_open("/", tgid, (uid_t)-1);
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/status", ps->proc_root, tgid);
	if (!read_file(path, &status, NULL)) {
		perfmap_status_nspid(status, &nspid);	/* none before Linux 4.1: one namespace */
		free(status);
	}
	/* /proc/PID belongs to the process's user: the map must be its, or root's. */
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/root", ps->proc_root, tgid);
	fd = perfmap_open(path, nspid, st.st_uid);
	if (fd >= 0)
		debug("JIT map of process %" PRIu32 ": %s/tmp/perf-%" PRIu32 ".map", tgid, path, nspid);
	return fd;
}

/*
 * Reads what the file gained since; closes it once its process is gone.
 * A live process without one yet may start a JIT later: looked for again.
 */
static void jitmap_read(const struct procs *ps, struct jitmap *j, bool first)
{
	char path[4096];
	bool alive;
	int err;

	j->read_generation = ps->generation;
	snprintf(path, sizeof(path), "%s/%" PRIu32, ps->proc_root, j->tgid);
	alive = !access(path, F_OK);
	if (j->fd < 0 && (alive || first))
		j->fd = jitmap_open(ps, j->tgid);
	if (j->fd < 0)
		return;
	if ((err = perfmap_read_fd(&j->map, j->fd)))
		debug("cannot read the JIT map of process %" PRIu32 ": %s", j->tgid, strerror(-err));
	/* Read after the exit: nothing can be added any more. */
	if (!alive) {
		close(j->fd);
		j->fd = -1;
	}
}

/* The perf maps of processes forgotten: none of their frames is left to name. */
static void forget_jitmaps(struct symbolizer *s)
{
	uint32_t i, kept = 0;

	for (i = 0; i < s->nr_jitmaps; i++) {
		if (procs_find(&s->procs, s->jitmaps[i]->tgid))
			s->jitmaps[kept++] = s->jitmaps[i];
		else
			jitmap_free(s->jitmaps[i]);
	}
	if (kept == s->nr_jitmaps)
		return;
	s->nr_jitmaps = kept;
	itab_release(&s->jitmap_index);
	for (i = 0; i < kept; i++)
		itab_insert(&s->jitmap_index, hash_u64(s->jitmaps[i]->tgid), i);
}

static struct jitmap *get_jitmap(struct symbolizer *s, uint32_t tgid)
{
	uint64_t h = hash_u64(tgid);
	uint32_t idx = itab_find(&s->jitmap_index, h, jitmap_eq, s, &tgid);
	struct jitmap *j;

	if (idx != ITAB_NONE)
		return s->jitmaps[idx];
	j = xcalloc(1, sizeof(*j));
	j->tgid = tgid;
	perfmap_init(&j->map);
	j->fd = -1;
	jitmap_read(&s->procs, j, true);
	ALLOC_GROW(s->jitmaps, s->nr_jitmaps + 1, s->jitmaps_alloc);
	s->jitmaps[s->nr_jitmaps] = j;
	itab_insert(&s->jitmap_index, h, s->nr_jitmaps++);
	return j;
}

/* The line naming perf-map entry e. V8's names are split into function and script; others kept whole. */
static struct prof_line jit_line(struct profile *p, const struct jitmap *j,
				 const struct perfmap_entry *e)
{
	const char *name = perfmap_name(&j->map, e);
	struct prof_line line = { 0, 0 };
	struct strbuf fn, script;

	strbuf_init(&fn);
	strbuf_init(&script);
	if (perfmap_v8_name(name, &fn, &script)) {
		line.function = profile_function(p, profile_string(p, fn.buf), profile_string(p, name),
						 script.len ? profile_string(p, script.buf) : 0);
	} else {
		struct sym_frame fr = { name, NULL, 0 };

		line.function = frame_function(p, &fr);
	}
	strbuf_release(&fn);
	strbuf_release(&script);
	return line;
}

/* Late JIT frames wait at most this many at once; past that they stay [anon+0x...]. */
#define MAX_LATE_JIT 16384

void symbolizer_name_late_jit(struct symbolizer *s, struct profile *p)
{
	uint32_t i, kept = 0;

	s->late_jit_passes++;
	for (i = 0; i < s->nr_late_jit; i++) {
		struct late_jit e = s->late_jit[i];
		struct jitmap *j = get_jitmap(s, e.tgid);
		const struct perfmap_entry *pe;
		struct prof_line line;
		struct proc *proc;

		/* Once per process per pass: the map is read from where the last read ended. */
		if (j->late_pass != s->late_jit_passes) {
			j->late_pass = s->late_jit_passes;
			jitmap_read(&s->procs, j, false);
		}
		pe = perfmap_lookup(&j->map, p->locations[e.location].address);
		if (pe) {
			line = jit_line(p, j, pe);
			profile_location_name(p, e.location, FRAME_JIT, &line, 1);
			continue;
		}
		/* Its map can still grow while the process lives. */
		proc = procs_find(&s->procs, e.tgid);
		if (proc && !proc->gone_ns)
			s->late_jit[kept++] = e;
	}
	s->nr_late_jit = kept;
}

static bool anon_map(const struct proc_map *m)
{
	return !m->path[0] || !strncmp(m->path, "[anon", 5) || !strncmp(m->path, "//anon", 6);
}

/*
 * An address in anonymous executable memory: a JIT frame if the process's
 * perf map names it, read again (once per drain) if it does not yet; if
 * it still does not, named later when it does.
 */
static uint32_t jit_location(struct symbolizer *s, struct profile *p, uint32_t tgid,
			     uint32_t mapping, uint64_t addr)
{
	struct jitmap *j = get_jitmap(s, tgid);
	const struct perfmap_entry *e = perfmap_lookup(&j->map, addr);
	struct prof_line line;
	uint32_t id;

	if (!e && j->read_generation != s->procs.generation) {
		jitmap_read(&s->procs, j, false);
		e = perfmap_lookup(&j->map, addr);
	}
	if (!e) {
		id = frames_location(p, mapping, addr, FRAME_USER, NULL, 0);
		if (s->nr_late_jit < MAX_LATE_JIT) {
			ALLOC_GROW(s->late_jit, s->nr_late_jit + 1, s->late_jit_alloc);
			s->late_jit[s->nr_late_jit++] = (struct late_jit){ id, tgid };
		}
		return id;
	}
	line = jit_line(p, j, e);
	return profile_location_add(p, mapping, addr, FRAME_JIT, &line, 1);
}

static uint32_t build_id_string(struct profile *p, const struct proc_map *m)
{
	char hex[2 * sizeof(m->build_id) + 1];

	build_id_hex(m, hex);
	return profile_string(p, hex);
}

static uint32_t user_location(struct symbolizer *s, struct profile *p, struct proc *proc,
			      uint32_t gen, uint64_t addr)
{
	struct proc_map *m = proc_find_map(&s->procs, proc, gen, addr);
	struct sym_frame frames[MAX_INLINE_DEPTH];
	struct prof_mapping pm = { 0 };
	struct symfile *f = NULL;
	uint32_t mapping, id;
	uint16_t n = 0;

	if (!m) {
		id = profile_location_find(p, 0, addr);
		return id != ITAB_NONE ? id : named_location(p, 0, addr, FRAME_USER, NULL);
	}
	if (!strcmp(m->path, "[vdso]"))
		f = &s->vdso;
	else if (m->path[0] == '/')
		f = get_file(s, proc->tgid, m);
	if (f)
		read_symbols(s, f);
	/* Made once per mapping: hashing its path and build ID per frame was most of a drain. */
	if (!m->prof_mapping) {
		pm.start = m->start;
		pm.limit = m->end;
		pm.offset = m->offset;
		pm.file = profile_string(p, m->path[0] ? m->path : "[anon]");
		pm.build_id = f && !f->err && f->syms.build_id[0] ? profile_string(p, f->syms.build_id) : 0;
		if (!pm.build_id && m->build_id_size)	/* unreadable, but the kernel told us */
			pm.build_id = build_id_string(p, m);
		pm.pid = proc->tgid;
		m->prof_mapping = profile_mapping(p, &pm) + 1;
	}
	mapping = m->prof_mapping - 1;
	id = profile_location_find(p, mapping, addr);
	if (id != ITAB_NONE)
		return id;
	/* JIT code lives in anonymous memory: the process's perf map may name it. */
	if (!f && anon_map(m))
		return jit_location(s, p, proc->tgid, mapping, addr);
	if (f)
		n = file_frames(s, f, addr - m->start + m->offset, frames);
	return frames_location(p, mapping, addr, FRAME_USER, frames, n);
}

/* What the unwinder asks: the CFI covering pc in the process, and pc in the file's terms. */
struct cfi_query {
	struct symbolizer *s;
	struct proc *proc;
	uint32_t gen;
	/* The mapping of the last pc asked, and its file: a stack's frames come in runs of one file. */
	uint64_t start, end, offset;
	struct symfile *f;
};

static bool cfi_at(void *ctx, uint64_t pc, uint64_t *vaddr, Dwarf_CFI *cfi[2])
{
	struct cfi_query *q = ctx;

	if (!q->f || pc < q->start || pc >= q->end) {
		struct proc_map *m = proc_find_map(&q->s->procs, q->proc, q->gen, pc);
		struct symfile *f = NULL;

		if (!m)
			return false;
		if (!strcmp(m->path, "[vdso]"))
			f = &q->s->vdso;
		else if (m->path[0] == '/')
			f = get_file(q->s, q->proc->tgid, m);
		if (!f)
			return false;
		read_symbols(q->s, f);
		q->f = f;
		q->start = m->start;
		q->end = m->end;
		q->offset = m->offset;
	}
	if (elf_symtab_offset_to_vaddr(&q->f->syms, pc - q->start + q->offset, vaddr))
		return false;
	cfi[0] = q->f->cfi;
	cfi[1] = q->f->debug_cfi;
	return true;
}

uint32_t symbolize_unwound_stack(struct symbolizer *s, struct profile *p, uint32_t tgid,
				 uint32_t gen, const struct unwind_regs *regs, const uint8_t *stack,
				 uint32_t stack_bytes, uint32_t *locs, uint32_t max,
				 enum unwind_end *end)
{
	struct cfi_query q = { s, procs_get(&s->procs, tgid, gen), gen, 0, 0, 0, NULL };
	uint64_t ips[BPFPROF_MAX_DEPTH];
	uint32_t n, i;

	if (max > BPFPROF_MAX_DEPTH)
		max = BPFPROF_MAX_DEPTH;
	n = unwind_stack(&s->unwinder, cfi_at, &q, regs, stack, stack_bytes, ips, max, end);
	/*
	 * Named as the unwinder gives them: it knows which frames a signal
	 * interrupted (their pc is not a return address) and which called.
	 */
	for (i = 0; i < n; i++)
		locs[i] = user_location(s, p, q.proc, gen, ips[i]);
	return n;
}

void symbolize_user_stack(struct symbolizer *s, struct profile *p, uint32_t tgid, uint32_t gen,
			  const uint64_t *ips, uint32_t n, uint32_t *locs)
{
	struct proc *proc = procs_get(&s->procs, tgid, gen);
	uint32_t i;

	for (i = 0; i < n; i++)
		locs[i] = user_location(s, p, proc, gen, ips[i] - (i > 0));
}

void symbolize_kernel_stack(struct symbolizer *s, struct profile *p, const uint64_t *ips,
			    uint32_t n, uint32_t *locs)
{
	kernel_symbols_stack(&s->kernel, p, ips, n, locs);
}
