// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/procs.h"
#include "bpfprof/util.h"

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
	if (len > 10 && !strcmp(path + len - 10, " (deleted)")) {
		m->deleted = true;
		len -= 10;
	}
	m->path = xstrndup(path, len);
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

void procs_release(struct procs *ps)
{
	uint32_t i;

	for (i = 0; i < ps->nr; i++) {
		procmaps_free(ps->procs[i]->maps, ps->procs[i]->nr_maps);
		free(ps->procs[i]);
	}
	free(ps->procs);
	itab_release(&ps->index);
	free(ps->proc_root);
	memset(ps, 0, sizeof(*ps));
}

static void read_maps(struct procs *ps, struct proc *p)
{
	struct proc_map *maps;
	char path[64], *text;
	size_t nr;

	p->read_generation = ps->generation;
	snprintf(path, sizeof(path), "%s/%" PRIu32 "/maps", ps->proc_root, p->tgid);
	if (read_file(path, &text, NULL)) {
		p->gone = true;
		return;
	}
	/* An exited process reads as empty: keep what we had. */
	if (*text && !procmaps_parse(text, &maps, &nr)) {
		procmaps_free(p->maps, p->nr_maps);
		p->maps = maps;
		p->nr_maps = nr;
	} else if (!*text) {
		p->gone = true;
	}
	free(text);
}

static bool tgid_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct procs *)owner)->procs[idx]->tgid == *(const uint32_t *)key;
}

struct proc *procs_get(struct procs *ps, uint32_t tgid)
{
	uint64_t h = hash_u64(tgid);
	uint32_t idx = itab_find(&ps->index, h, tgid_eq, ps, &tgid);
	struct proc *p;

	if (idx != ITAB_NONE)
		return ps->procs[idx];
	p = xcalloc(1, sizeof(*p));
	p->tgid = tgid;
	read_maps(ps, p);
	ALLOC_GROW(ps->procs, ps->nr + 1, ps->alloc);
	ps->procs[ps->nr] = p;
	itab_insert(&ps->index, h, ps->nr++);
	return p;
}

static const struct proc_map *find_map(const struct proc *p, uint64_t addr)
{
	size_t lo = 0, hi = p->nr_maps;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (p->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo && addr < p->maps[lo - 1].end)
		return &p->maps[lo - 1];
	return NULL;
}

const struct proc_map *proc_find_map(struct procs *ps, struct proc *p, uint64_t addr)
{
	const struct proc_map *m = find_map(p, addr);

	if (!m && !p->gone && p->read_generation != ps->generation) {
		read_maps(ps, p);
		m = find_map(p, addr);
	}
	return m;
}
