// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The symbolizer's file cache: each file a process maps opened once (by the
 * kernel's identity of it), read when a frame first needs it, let go when
 * no process maps it any more, and its listeners told as it is opened.
 */
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/debuginfo.h"
#include "symbolize_private.h"

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

void symfile_free(struct symfile *f)
{
	if (f->fd >= 0)
		close(f->fd);
	symfile_unload(f);
	free(f->path);
}

void symfiles_release(struct symbolizer *s)
{
	uint32_t i;

	for (i = 0; i < s->nr_files; i++) {
		symfile_free(s->files[i]);
		free(s->files[i]);
	}
	free(s->files);
	itab_release(&s->file_index);
	free(s->mapped);
	itab_release(&s->mapped_index);
	symfile_free(&s->vdso);
	free(s->listeners);
}

void symbolizer_on_file(struct symbolizer *s, const struct file_listener *l)
{
	ALLOC_GROW(s->listeners, s->nr_listeners + 1, s->listeners_alloc);
	s->listeners[s->nr_listeners++] = *l;
}

void tell_opened(struct symbolizer *s, const struct opened_file *f)
{
	uint32_t i;

	for (i = 0; i < s->nr_listeners; i++)
		if (s->listeners[i].opened)
			s->listeners[i].opened(s->listeners[i].ctx, f);
}

/* The process's root as reached from here, into root (for opened_file.root). */
const char *process_root(const struct procs *ps, uint32_t tgid, char *root, size_t size)
{
	snprintf(root, size, "%s/%" PRIu32 "/root", ps->proc_root, tgid);
	return root;
}

/* Opened only if a listener wants copies. */
void tell_copy(struct symbolizer *s, uint32_t tgid, const struct proc_map *m)
{
	char root[PATH_MAX];
	struct opened_file f = { tgid, m, -1, NULL, m->path,
				 process_root(&s->procs, tgid, root, sizeof(root)) };
	struct stat st;
	uint32_t i;

	for (i = 0; i < s->nr_listeners; i++) {
		if (!s->listeners[i].copy)
			continue;
		if (f.fd < 0) {
			if ((f.fd = open_in_process(&s->procs, tgid, m)) < 0)
				return;
			if (fstat(f.fd, &st))
				break;
			f.st = &st;
		}
		s->listeners[i].copy(s->listeners[i].ctx, &f);
	}
	if (f.fd >= 0)
		close(f.fd);
}


/* A file no known process has mapped for this many drains in a row lets its symbols go. */
#define RELEASE_AFTER_DRAINS 10

/*
 * Programs that ran for a while (a compiler's, a test's) leave no process
 * that maps their files: what was read of those goes, so a long run's
 * memory follows what runs now, not everything that ever ran.
 */
void release_unmapped_files(struct symbolizer *s)
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



/*
 * Every process on one kernel shares the same vDSO image, so ours names
 * theirs: read it from our own memory.
 */
int load_vdso(struct symfile *f)
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
int open_map_files(const struct procs *ps, uint32_t tgid, const struct proc_map *m)
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
int open_in_process(const struct procs *ps, uint32_t tgid, const struct proc_map *m)
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

void build_id_hex(const struct proc_map *m, char *hex)
{
	int i;

	hex[0] = '\0';
	for (i = 0; i < m->build_id_size; i++)
		sprintf(hex + 2 * i, "%02x", m->build_id[i]);
}

/*
 * Is the file at the mapping's path in our root the one the (gone)
 * process mapped? Only if its inode or build ID says so.
 */
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
int find_debug_file(const struct procs *ps, uint32_t tgid, struct symfile *f,
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

/*
 * Reads the file's symbols, debug info and CFI (once), then lets its fd go.
 * Not read_symbols: that names the static readers of one symbol section
 * (elf.c and the runtimes'), which this is not.
 */
void load_symfile(struct symbolizer *s, struct symfile *f)
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
		load_symfile(s, f);
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
		load_symfile(s, f);
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
		char root[PATH_MAX];
		struct opened_file of = { tgid, m, fd, &st, m->path,
					  ours ? NULL : process_root(&s->procs, tgid, root, sizeof(root)) };

		tell_opened(s, &of);
		f = new_symfile(s, tgid, fd, m->path, &st);
		ALLOC_GROW(s->files, s->nr_files + 1, s->files_alloc);
		idx = s->nr_files++;
		s->files[idx] = f;
		itab_insert(&s->file_index, hash_mix(key.dev, key.ino), idx);
	}
	/* Found by path only: its build ID must be the mapped file's. */
	if (ours && !m->inode) {
		load_symfile(s, f);
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
struct symfile *get_file(struct symbolizer *s, uint32_t tgid, struct proc_map *m)
{
	struct mapped_file k;
	struct symfile *f;
	bool keyed;
	uint32_t idx;

	keyed = m->file < 0 && mapped_key(m, &k);
	if (keyed && (idx = itab_find(&s->mapped_index, mapped_hash(&k), mapped_eq, s, &k)) !=
			     ITAB_NONE) {
		m->file = s->mapped[idx].file;
		/* A copy of a file open: the unwind tables find files by inode. */
		if (m->build_id_size)
			tell_copy(s, tgid, m);
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
void open_files_of(struct symbolizer *s, struct proc *p)
{
	struct proc_image *img = p->nr_images ? &p->images[p->nr_images - 1] : NULL;
	size_t i;

	for (i = 0; img && i < img->nr_maps; i++)
		if (img->maps[i].path[0] == '/')
			get_file(s, p->tgid, &img->maps[i]);
}
