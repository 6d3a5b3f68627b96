// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/cgroups.h"
#include "bpfprof/util.h"

#define MAX_DEPTH 64

void cgroups_init(struct cgroups *c, const char *mount)
{
	memset(c, 0, sizeof(*c));
	c->mount = mount ? xstrdup(mount) : NULL;
}

void cgroups_release(struct cgroups *c)
{
	uint32_t i;

	for (i = 0; i < c->nr; i++)
		free(c->entries[i].path);
	free(c->entries);
	itab_release(&c->index);
	free(c->mount);
	memset(c, 0, sizeof(*c));
}

static bool id_eq(const void *owner, const void *key, uint32_t idx)
{
	return ((const struct cgroups *)owner)->entries[idx].id == *(const uint64_t *)key;
}

static void remember(struct cgroups *c, uint64_t id, const char *path)
{
	if (itab_find(&c->index, hash_u64(id), id_eq, c, &id) != ITAB_NONE)
		return;
	ALLOC_GROW(c->entries, c->nr + 1, c->alloc);
	c->entries[c->nr].id = id;
	c->entries[c->nr].path = xstrdup(*path ? path : "/");
	itab_insert(&c->index, hash_u64(id), c->nr++);
}

/* Records dir (open as fd, at path rel) and every cgroup below it. */
static void walk(struct cgroups *c, int fd, struct strbuf *rel, int depth)
{
	struct stat st;
	struct dirent *e;
	DIR *d;

	if (fstat(fd, &st) || !(d = fdopendir(fd))) {
		close(fd);
		return;
	}
	remember(c, st.st_ino, rel->buf);
	while (depth < MAX_DEPTH && (e = readdir(d))) {
		size_t len = rel->len;
		int child;

		if (e->d_type != DT_DIR || e->d_name[0] == '.')
			continue;
		child = openat(dirfd(d), e->d_name, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
		if (child < 0)
			continue;
		strbuf_addf(rel, "/%s", e->d_name);
		walk(c, child, rel, depth + 1);
		rel->len = len;
		rel->buf[len] = '\0';
	}
	closedir(d);
}

const char *cgroups_path(struct cgroups *c, uint64_t id)
{
	uint32_t idx = itab_find(&c->index, hash_u64(id), id_eq, c, &id);
	struct strbuf rel;
	int fd;

	if (idx != ITAB_NONE)
		return c->entries[idx].path;
	if (!c->mount || now_ns() - c->last_walk_ns < 1000000000ULL)
		return NULL;
	c->last_walk_ns = now_ns();
	fd = open(c->mount, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
	if (fd < 0)
		return NULL;
	strbuf_init(&rel);
	walk(c, fd, &rel, 0);
	strbuf_release(&rel);
	idx = itab_find(&c->index, hash_u64(id), id_eq, c, &id);
	return idx == ITAB_NONE ? NULL : c->entries[idx].path;
}

char *cgroup2_mount(void)
{
	char *text, *line, *save = NULL, *found = NULL;

	if (read_file("/proc/self/mounts", &text, NULL))
		return NULL;
	for (line = strtok_r(text, "\n", &save); line && !found; line = strtok_r(NULL, "\n", &save)) {
		char dev[256], dir[4096], type[64];

		if (sscanf(line, "%255s %4095s %63s", dev, dir, type) == 3 && !strcmp(type, "cgroup2"))
			found = xstrdup(dir);
	}
	free(text);
	return found;
}
