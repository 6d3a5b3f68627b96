// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/auxv.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/symbolize.h"

static int load_vdso(struct symfile *f);

void symbolizer_init(struct symbolizer *s)
{
	memset(s, 0, sizeof(*s));
	procs_init(&s->procs);
	s->kallsyms_err = 1;
	s->kallsyms_path = xstrdup("/proc/kallsyms");
	s->vdso.path = xstrdup("[vdso]");
	s->vdso.err = load_vdso(&s->vdso);
}

static void symfile_free(struct symfile *f)
{
	elf_symtab_release(&f->syms);
	free(f->path);
}

void symbolizer_release(struct symbolizer *s)
{
	uint32_t i;

	procs_release(&s->procs);
	kallsyms_release(&s->kallsyms);
	free(s->kallsyms_path);
	for (i = 0; i < s->nr_files; i++) {
		symfile_free(s->files[i]);
		free(s->files[i]);
	}
	free(s->files);
	itab_release(&s->file_index);
	symfile_free(&s->vdso);
	memset(s, 0, sizeof(*s));
}

void symbolizer_new_generation(struct symbolizer *s)
{
	s->procs.generation++;
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
		if (maps[i].start == base && !strcmp(maps[i].path, "[vdso]"))
			err = elf_symtab_read_mem(&f->syms, (const void *)base, maps[i].end - maps[i].start);
	procmaps_free(maps, nr);
	return err;
}

/* Files ------------------------------------------------------------------ */

struct file_key {
	const struct proc_map *m;
};

static uint64_t file_hash(const struct proc_map *m)
{
	uint64_t h = hash_mix(m->inode, ((uint64_t)m->dev_major << 32) | m->dev_minor);

	return m->inode ? h : hash_mix(h, hash_bytes(m->path, strlen(m->path), 0));
}

static bool file_eq(const void *owner, const void *key, uint32_t idx)
{
	const struct symfile *f = ((const struct symbolizer *)owner)->files[idx];
	const struct proc_map *m = key;

	return f->inode == m->inode && f->dev_major == m->dev_major && f->dev_minor == m->dev_minor &&
	       (m->inode || !strcmp(f->path, m->path));
}

/*
 * Open the file the process mapped: through map_files (works for deleted
 * files and other mount namespaces), else through the process's root.
 */
static int open_mapped_file(const struct procs *ps, uint32_t tgid, const struct proc_map *m)
{
	struct stat st;
	char path[4096];
	int fd;

	snprintf(path, sizeof(path), "%s/%" PRIu32 "/map_files/%" PRIx64 "-%" PRIx64, ps->proc_root,
		 tgid, m->start, m->end);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		snprintf(path, sizeof(path), "%s/%" PRIu32 "/root%s", ps->proc_root, tgid, m->path);
		fd = open(path, O_RDONLY | O_CLOEXEC);
	}
	if (fd < 0)
		return -errno;
	/* A different file now at that path would name the wrong functions. */
	if (fstat(fd, &st) || (m->inode && st.st_ino != m->inode)) {
		close(fd);
		return -ESTALE;
	}
	return fd;
}

static struct symfile *get_file(struct symbolizer *s, uint32_t tgid, const struct proc_map *m)
{
	uint64_t h = file_hash(m);
	uint32_t idx = itab_find(&s->file_index, h, file_eq, s, m);
	struct symfile *f;
	int fd;

	if (idx != ITAB_NONE)
		return s->files[idx];
	f = xcalloc(1, sizeof(*f));
	f->dev_major = m->dev_major;
	f->dev_minor = m->dev_minor;
	f->inode = m->inode;
	f->path = xstrdup(m->path);
	fd = open_mapped_file(&s->procs, tgid, m);
	if (fd < 0) {
		f->err = fd;
	} else {
		f->err = elf_symtab_read_fd(&f->syms, fd);
		close(fd);
	}
	if (f->err)
		debug("no symbols for '%s': %s", f->path, strerror(-f->err));
	ALLOC_GROW(s->files, s->nr_files + 1, s->files_alloc);
	s->files[s->nr_files] = f;
	itab_insert(&s->file_index, h, s->nr_files++);
	return f;
}

/*
 * Symbolize: the frames at a file offset, innermost first (an inline chain
 * when the file says so); 0 when nothing names it.
 */
static uint16_t file_frames(struct symfile *f, uint64_t offset, struct sym_frame *out)
{
	const struct elf_sym *sym;
	uint64_t vaddr;

	if (f->err || elf_symtab_offset_to_vaddr(&f->syms, offset, &vaddr))
		return 0;
	sym = elf_symtab_lookup(&f->syms, vaddr);
	if (!sym)
		return 0;
	out[0].name = elf_sym_name(&f->syms, sym);
	out[0].file = NULL;
	out[0].line = 0;
	return 1;
}

/* Locations -------------------------------------------------------------- */

/* A profile function for a symbol: its readable name, the symbol as it is, the source file. */
static uint32_t frame_function(struct profile *p, const struct sym_frame *fr)
{
	uint32_t name = profile_string(p, fr->name);

	return profile_function(p, name, name, fr->file ? profile_string(p, fr->file) : 0);
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

static uint32_t user_location(struct symbolizer *s, struct profile *p, struct proc *proc,
			      uint64_t addr)
{
	const struct proc_map *m = proc_find_map(&s->procs, proc, addr);
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
	pm.start = m->start;
	pm.limit = m->end;
	pm.offset = m->offset;
	pm.file = profile_string(p, m->path[0] ? m->path : "[anon]");
	pm.build_id = f && !f->err && f->syms.build_id[0] ? profile_string(p, f->syms.build_id) : 0;
	pm.pid = proc->tgid;
	mapping = profile_mapping(p, &pm);
	id = profile_location_find(p, mapping, addr);
	if (id != ITAB_NONE)
		return id;
	if (f)
		n = file_frames(f, addr - m->start + m->offset, frames);
	return frames_location(p, mapping, addr, FRAME_USER, frames, n);
}

void symbolize_user_stack(struct symbolizer *s, struct profile *p, uint32_t tgid,
			  const uint64_t *ips, uint32_t n, uint32_t *locs)
{
	struct proc *proc = procs_get(&s->procs, tgid);
	uint32_t i;

	for (i = 0; i < n; i++)
		locs[i] = user_location(s, p, proc, ips[i] - (i > 0));
}

static uint32_t kernel_mapping(struct symbolizer *s, struct profile *p)
{
	struct prof_mapping pm = { 0 };

	if (s->kallsyms_err == 1) {
		s->kallsyms_err = kallsyms_load(&s->kallsyms, s->kallsyms_path);
		if (s->kallsyms_err)
			warning("cannot read '%s': %s; kernel frames stay unnamed", s->kallsyms_path,
				strerror(-s->kallsyms_err));
	}
	if (s->kernel_mapping)
		return s->kernel_mapping;
	if (!s->kallsyms_err && s->kallsyms.nr) {
		pm.start = s->kallsyms.syms[0].addr;
		pm.limit = s->kallsyms.syms[s->kallsyms.nr - 1].addr + 1;
	}
	pm.file = profile_string(p, "[kernel.kallsyms]");
	s->kernel_mapping = profile_mapping(p, &pm);
	return s->kernel_mapping;
}

void symbolize_kernel_stack(struct symbolizer *s, struct profile *p, const uint64_t *ips,
			    uint32_t n, uint32_t *locs)
{
	uint32_t mapping = kernel_mapping(s, p), i;

	for (i = 0; i < n; i++) {
		uint64_t addr = ips[i] - (i > 0);
		const struct ksym *sym;
		uint32_t id = profile_location_find(p, mapping, addr);

		if (id == ITAB_NONE) {
			sym = s->kallsyms_err ? NULL : kallsyms_lookup(&s->kallsyms, addr);
			id = named_location(p, mapping, addr, FRAME_KERNEL,
					    sym ? ksym_name(&s->kallsyms, sym) : NULL);
		}
		locs[i] = id;
	}
}
