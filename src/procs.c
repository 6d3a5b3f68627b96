// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/procs.h"
#include "bpfprof/util.h"

/* How the kernel names shared anonymous memory (MAP_SHARED | MAP_ANONYMOUS) in maps and mmap events. */
#define SHARED_ANON "/dev/zero (deleted)"

static int map_cmp(const void *a, const void *b)
{
	const struct proc_map *x = a, *y = b;

	return x->start < y->start ? -1 : x->start > y->start;
}

/* "start-end perms offset major:minor inode   path" */
static int parse_line(const char *line, size_t len, struct proc_map *m, bool *exec)
{
	char perms[5], *s = xstrndup(line, len);
	unsigned long long start, end, offset, inode;
	unsigned major, minor;
	const char *path;
	int used = 0;

	if (sscanf(s, "%llx-%llx %4s %llx %x:%x %llu %n", &start, &end, perms, &offset, &major,
		   &minor, &inode, &used) < 7 || start >= end || strlen(perms) != 4) {
		free(s);
		return -EINVAL;
	}
	path = s + used;
	memset(m, 0, sizeof(*m));
	m->start = start;
	m->end = end;
	m->offset = offset;
	m->inode = inode;
	m->dev_major = major;
	m->dev_minor = minor;
	*exec = perms[2] == 'x';
	len = strlen(path);
	if (!strcmp(path, SHARED_ANON)) {
		len = 0;	/* shared anonymous memory (opcache's JIT buffer): anonymous */
	} else if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
		m->deleted = true;
		len -= 10;
	}
	m->path = xstrndup(path, len);
	m->file = -1;
	free(s);
	return 0;
}

int procmaps_parse(const char *text, struct proc_map **maps, size_t *nr)
{
	const char *p = text;
	struct proc_map *out = NULL;
	size_t n = 0, alloc = 0;

	while (*p) {
		const char *eol = strchr(p, '\n');
		size_t len = eol ? (size_t)(eol - p) : strlen(p);
		struct proc_map m;
		bool exec;

		if (len) {
			if (parse_line(p, len, &m, &exec)) {
				procmaps_free(out, n);
				return -EINVAL;
			}
			if (exec) {
				ALLOC_GROW(out, n + 1, alloc);
				out[n++] = m;
			} else {
				free(m.path);
			}
		}
		p += len + (eol != NULL);
	}
	if (n)
		qsort(out, n, sizeof(*out), map_cmp);
	*maps = out;
	*nr = n;
	return 0;
}

void procmaps_free(struct proc_map *maps, size_t nr)
{
	size_t i;

	for (i = 0; i < nr; i++)
		free(maps[i].path);
	free(maps);
}

void procs_init(struct procs *ps)
{
	memset(ps, 0, sizeof(*ps));
	ps->proc_root = xstrdup("/proc");
}

static void proc_free(struct proc *p)
{
	size_t i;

	for (i = 0; i < p->nr_images; i++)
		procmaps_free(p->images[i].maps, p->images[i].nr_maps);
	free(p->images);
	free(p);
}

void procs_release(struct procs *ps)
{
	uint32_t i;

	for (i = 0; i < ps->nr; i++)
		proc_free(ps->procs[i]);
	free(ps->procs);
	itab_release(&ps->index);
	free(ps->proc_root);
	memset(ps, 0, sizeof(*ps));
}

static bool tgid_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct procs *)owner)->procs[idx]->tgid == *(const uint32_t *)key;
}

struct proc *procs_find(struct procs *ps, uint32_t tgid)
{
	uint32_t idx = itab_find(&ps->index, hash_u64(tgid), tgid_eq, ps, &tgid);

	return idx == ITAB_NONE ? NULL : ps->procs[idx];
}

bool procs_known(struct procs *ps, uint32_t tgid, uint32_t gen)
{
	struct proc *p = procs_find(ps, tgid);
	size_t i;

	for (i = 0; p && i < p->nr_images; i++)
		if (p->images[i].gen == gen)
			return true;
	return false;
}

static struct proc *add_proc(struct procs *ps, uint32_t tgid)
{
	struct proc *p = xcalloc(1, sizeof(*p));

	p->tgid = tgid;
	ALLOC_GROW(ps->procs, ps->nr + 1, ps->alloc);
	ps->procs[ps->nr] = p;
	itab_insert(&ps->index, hash_u64(tgid), ps->nr++);
	return p;
}

/* Images ------------------------------------------------------------------ */

static struct proc_image *current_image(struct proc *p)
{
	return p->nr_images ? &p->images[p->nr_images - 1] : NULL;
}

static struct proc_image *new_image(struct proc *p, uint32_t gen)
{
	struct proc_image *img;

	ALLOC_GROW(p->images, p->nr_images + 1, p->images_alloc);
	img = &p->images[p->nr_images++];
	memset(img, 0, sizeof(*img));
	img->gen = gen;
	return img;
}

static uint32_t next_gen(struct proc *p)
{
	struct proc_image *img = current_image(p);

	return img ? img->gen + 1 : 1;
}

static void copy_maps(struct proc_image *to, const struct proc_image *from)
{
	size_t i;

	to->maps = xcalloc(from->nr_maps ? from->nr_maps : 1, sizeof(*to->maps));
	to->nr_maps = to->maps_alloc = from->nr_maps;
	for (i = 0; i < from->nr_maps; i++) {
		to->maps[i] = from->maps[i];
		to->maps[i].path = xstrdup(from->maps[i].path);
		to->maps[i].prof_mapping = 0;	/* another process */
	}
}

/* Puts m into img, cutting away whatever it overlaps (a new mmap replaces). */
static struct proc_map *insert_map(struct proc_image *img, const struct proc_map *m)
{
	size_t i, at;

	for (i = 0; i < img->nr_maps;) {
		struct proc_map *o = &img->maps[i];

		if (o->end <= m->start || o->start >= m->end) {
			i++;
			continue;
		}
		if (o->start < m->start && o->end > m->end) {
			/* m splits o in two: keep both ends. */
			struct proc_map tail = *o;

			tail.path = xstrdup(o->path);
			tail.offset += m->end - o->start;
			tail.start = m->end;
			o->end = m->start;
			o->prof_mapping = tail.prof_mapping = 0;
			ALLOC_GROW(img->maps, img->nr_maps + 1, img->maps_alloc);
			memmove(&img->maps[i + 2], &img->maps[i + 1], (img->nr_maps - i - 1) * sizeof(*o));
			img->maps[i + 1] = tail;
			img->nr_maps++;
			i += 2;
		} else if (o->start < m->start) {
			o->end = m->start;
			o->prof_mapping = 0;
			i++;
		} else if (o->end > m->end) {
			o->offset += m->end - o->start;
			o->start = m->end;
			o->prof_mapping = 0;
			i++;
		} else {
			free(o->path);
			memmove(o, o + 1, (img->nr_maps - i - 1) * sizeof(*o));
			img->nr_maps--;
		}
	}
	for (at = 0; at < img->nr_maps && img->maps[at].start < m->start; at++)
		;
	ALLOC_GROW(img->maps, img->nr_maps + 1, img->maps_alloc);
	memmove(&img->maps[at + 1], &img->maps[at], (img->nr_maps - at) * sizeof(*m));
	img->maps[at] = *m;
	img->nr_maps++;
	return &img->maps[at];
}

/* /proc ------------------------------------------------------------------- */

/* Reads /proc/PID/maps into img (replacing what it had); false if the process is gone. */
static bool read_maps(struct procs *ps, struct proc *p, struct proc_image *img)
{
	struct proc_map *maps;
	char path[64], *text;
	size_t nr;
	bool ok = false;

	p->read_generation = ps->generation;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", ps->proc_root, p->tgid);
	if (read_file(path, &text, NULL))
		return false;
	/* An exited process (a zombie) reads as empty: keep what we had. */
	if (*text && !procmaps_parse(text, &maps, &nr)) {
		procmaps_free(img->maps, img->nr_maps);
		img->maps = maps;
		img->nr_maps = img->maps_alloc = nr;
		ok = true;
	}
	free(text);
	return ok;
}

/*
 * A generation the side-band has not told of: a live process's /proc shows
 * it, and every record before now. If the process is gone, nothing is known.
 */
static struct proc_image *image_from_proc(struct procs *ps, struct proc *p, uint32_t gen)
{
	uint64_t now = now_ns();

	if (!read_maps(ps, p, new_image(p, gen))) {
		procmaps_free(current_image(p)->maps, current_image(p)->nr_maps);
		p->nr_images--;
		p->gone_ns = now;
		return NULL;
	}
	p->known_since = now;
	return current_image(p);
}

struct proc *procs_get(struct procs *ps, uint32_t tgid, uint32_t gen)
{
	struct proc *p = procs_find(ps, tgid);

	if (p)
		return p;
	p = add_proc(ps, tgid);
	image_from_proc(ps, p, gen);
	return p;
}

void procs_scan(struct procs *ps, uint32_t (*current_gen)(void *ctx, uint32_t tgid), void *ctx)
{
	DIR *d = opendir(ps->proc_root);
	struct dirent *e;

	if (!d)
		return;
	while ((e = readdir(d))) {
		char *end;
		unsigned long tgid = strtoul(e->d_name, &end, 10);
		struct proc *p;

		if (*end || !tgid || tgid > UINT32_MAX || procs_find(ps, tgid))
			continue;
		p = add_proc(ps, tgid);
		p->known_since = now_ns();
		/* Kernel threads map nothing: they need no image. */
		if (!read_maps(ps, p, new_image(p, current_gen(ctx, tgid))) ||
		    !current_image(p)->nr_maps) {
			procmaps_free(current_image(p)->maps, 0);
			p->nr_images = 0;
		}
	}
	closedir(d);
}

/* Side-band --------------------------------------------------------------- */

/* A process the side-band speaks of: records older than what we know are stale. */
static struct proc *tracked(struct procs *ps, const struct sb_event *ev)
{
	struct proc *p = procs_find(ps, ev->pid);

	if (!p) {
		p = add_proc(ps, ev->pid);
		p->known_since = ev->time;
	}
	return ev->time < p->known_since ? NULL : p;
}

static void map_from_event(struct proc_map *m, const struct sb_event *ev)
{
	const char *name = ev->mmap.filename;
	size_t len = strlen(name);

	memset(m, 0, sizeof(*m));
	m->start = ev->mmap.addr;
	m->end = ev->mmap.addr + ev->mmap.len;
	m->offset = ev->mmap.pgoff;
	m->inode = ev->mmap.ino;
	m->dev_major = ev->mmap.maj;
	m->dev_minor = ev->mmap.min;
	m->build_id_size = ev->mmap.build_id_size;
	memcpy(m->build_id, ev->mmap.build_id, sizeof(m->build_id));
	m->file = -1;
	if (!strcmp(name, "//anon") || !strncmp(name, "[anon", 5) || !strcmp(name, SHARED_ANON)) {
		len = 0;	/* anonymous memory, as /proc/PID/maps shows it */
	} else if (len > 10 && !strcmp(name + len - 10, " (deleted)")) {
		m->deleted = true;
		len -= 10;
	}
	m->path = xstrndup(name, len);
}

struct proc_map *procs_apply(struct procs *ps, const struct sb_event *ev, struct proc **owner)
{
	struct proc *p, *parent;
	struct proc_map m;

	*owner = NULL;
	switch (ev->type) {
	case SB_MMAP:
		if (!ev->mmap.len || !(p = tracked(ps, ev)))
			return NULL;
		if (!current_image(p))
			new_image(p, 0);
		map_from_event(&m, ev);
		*owner = p;
		return insert_map(current_image(p), &m);
	case SB_COMM:
		/* An exec: a new program, its mappings follow in MMAP2 records. */
		if (ev->comm.exec && ev->pid == ev->tid && (p = tracked(ps, ev)))
			new_image(p, next_gen(p));
		return NULL;
	case SB_FORK:
		if (ev->pid != ev->tid)
			return NULL;	/* a thread */
		p = procs_find(ps, ev->pid);
		if (p && ev->time < p->known_since)
			return NULL;
		if (!p) {
			p = add_proc(ps, ev->pid);
			p->known_since = ev->time;
		}
		p->gone_ns = 0;	/* a pid used again */
		parent = procs_find(ps, ev->fork.ppid);
		{
			struct proc_image *img = new_image(p, next_gen(p));

			/* A child starts with its parent's mappings. */
			if (parent && parent != p && current_image(parent))
				copy_maps(img, current_image(parent));
		}
		return NULL;
	case SB_EXIT:
		if (ev->pid == ev->tid && (p = procs_find(ps, ev->pid)) && ev->time >= p->known_since)
			p->gone_ns = ev->time ? ev->time : 1;
		return NULL;
	default:
		return NULL;
	}
}

static struct proc_map *find_map(struct proc_image *img, uint64_t addr)
{
	size_t i = COUNT_AT_OR_BELOW(img->maps, img->nr_maps, start, addr);

	return i && addr < img->maps[i - 1].end ? &img->maps[i - 1] : NULL;
}

/*
 * Side-band records may have been lost: a live process's /proc can still
 * tell of the generation it is in. Records written meanwhile are learnt
 * after the read: if one began a new generation (an exec the side-band had
 * not yet told of), what was read may be the next program's, not this one's.
 */
static bool reread_current(struct procs *ps, struct proc *p)
{
	struct proc_image fresh = { .gen = current_image(p)->gen };
	uint32_t gen = fresh.gen;

	if (!read_maps(ps, p, &fresh)) {
		p->gone_ns = now_ns();
		return false;
	}
	if (ps->catch_up)
		ps->catch_up(ps->catch_up_ctx);
	if (current_image(p)->gen != gen) {
		procmaps_free(fresh.maps, fresh.nr_maps);
		return false;
	}
	procmaps_free(current_image(p)->maps, current_image(p)->nr_maps);
	current_image(p)->maps = fresh.maps;
	current_image(p)->nr_maps = current_image(p)->maps_alloc = fresh.nr_maps;
	return true;
}

/* /proc/PID/maps can tell more: the process lives, and it was not read this drain. */
static bool may_read_maps(const struct procs *ps, const struct proc *p)
{
	return !p->gone_ns && p->read_generation != ps->generation;
}

struct proc_map *proc_find_map(struct procs *ps, struct proc *p, uint32_t gen, uint64_t addr)
{
	struct proc_image *img = NULL, *cur = current_image(p);
	struct proc_map *m;
	size_t i;

	for (i = p->nr_images; i-- > 0 && !img;)
		if (p->images[i].gen == gen)
			img = &p->images[i];
	/* Newer than the side-band told (records lost): the live process shows it. */
	if (!img && (!cur || gen > cur->gen) && may_read_maps(ps, p)) {
		img = image_from_proc(ps, p, gen);
		cur = current_image(p);
	}
	if (!img && !(img = cur))	/* else the best guess left */
		return NULL;
	m = find_map(img, addr);
	if (!m && img == cur && cur->gen == gen && may_read_maps(ps, p) && reread_current(ps, p))
		m = find_map(current_image(p), addr);
	return m;
}

uint32_t procs_prune(struct procs *ps, uint64_t before_ns)
{
	uint32_t i, kept = 0, pruned;

	for (i = 0; i < ps->nr; i++) {
		struct proc *p = ps->procs[i];

		if (p->gone_ns && p->gone_ns < before_ns)
			proc_free(p);
		else
			ps->procs[kept++] = p;
	}
	pruned = ps->nr - kept;
	if (!pruned)
		return 0;
	ps->nr = kept;
	itab_release(&ps->index);
	for (i = 0; i < ps->nr; i++)
		itab_insert(&ps->index, hash_u64(ps->procs[i]->tgid), i);
	return pruned;
}
