// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* --rotate's names and --keep's pruning, in a directory of the test's own. */
#include <dirent.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/rotate.h"
#include "unit.h"

#define WALL_2026_11_24_101500 1795515300ULL	/* seconds since the epoch */

static void name_is(const char *path, const char *want)
{
	char *got = rotated_name(path, WALL_2026_11_24_101500 * 1000000000ULL + 999999999);

	CHECK(!strcmp(got, want), "rotated_name(%s) = %s (want %s)", path, got, want);
	free(got);
}

static void touch(const char *dir, const char *name)
{
	char *path;
	int fd;

	if (asprintf(&path, "%s/%s", dir, name) < 0)
		return;
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd >= 0)
		close(fd);
	free(path);
}

/* The names in dir, sorted, one per line after a space: " a b c". */
static char *listing(const char *dir)
{
	struct dirent **names;
	size_t len = 1;
	char *out;
	int n, i;

	n = scandir(dir, &names, NULL, alphasort);
	for (i = 0; i < n; i++)
		len += strlen(names[i]->d_name) + 1;
	out = calloc(1, len);
	for (i = 0; i < n; i++) {
		if (strcmp(names[i]->d_name, ".") && strcmp(names[i]->d_name, "..")) {
			strcat(out, " ");
			strcat(out, names[i]->d_name);
		}
		free(names[i]);
	}
	free(n >= 0 ? names : NULL);
	return out;
}

static void empty_dir(const char *dir)
{
	struct dirent **names;
	char *path;
	int n = scandir(dir, &names, NULL, alphasort), i;

	for (i = 0; i < n; i++) {
		if (names[i]->d_name[0] != '.' && asprintf(&path, "%s/%s", dir, names[i]->d_name) >= 0) {
			unlink(path);
			free(path);
		}
		free(names[i]);
	}
	if (n >= 0)
		free(names);
}

void test_rotate(void)
{
	static const char *const stamps[] = { "20200103T000000Z", "20200101T000000Z", "20200105T000000Z",
					      "20200102T000000Z", "20200104T000000Z" };
	char dir[] = "/tmp/bpfprof-unit-rotate.XXXXXX", path[512], *got;
	int cwd, i;

	/* The interval's start in UTC, before the format's extension or at the end. */
	name_is("out.pb.gz", "out.20261124T101500Z.pb.gz");
	name_is("/var/tmp/a.b/out.folded", "/var/tmp/a.b/out.20261124T101500Z.folded");
	name_is("x.svg", "x.20261124T101500Z.svg");
	name_is("p.pprof", "p.20261124T101500Z.pprof");
	name_is("callgrind.out.run", "callgrind.out.run.20261124T101500Z");
	name_is("a.b/plain", "a.b/plain.20261124T101500Z");
	name_is("dir/.folded", "dir/.folded.20261124T101500Z");

	if (!CHECK(mkdtemp(dir), "keep_newest: a directory of its own"))
		return;
	for (i = 0; i < 5; i++) {
		snprintf(path, sizeof(path), "k.%s.folded", stamps[i]);
		touch(dir, path);
	}
	/* Names that are not k.folded's rotations: another -o's, another format's, not a stamp. */
	touch(dir, "k.folded");
	touch(dir, "k.20200101T000000Z.folded.bak");
	touch(dir, "k.20200101T000000Z.pb.gz");
	touch(dir, "other.20200101T000000Z.folded");
	touch(dir, "k.2020010XT000000Z.folded");
	touch(dir, "kk.20200101T000000Z.folded");
	snprintf(path, sizeof(path), "%s/k.folded", dir);
	keep_newest(path, 2);
	got = listing(dir);
	expect_text(got, " k.20200101T000000Z.folded.bak k.20200101T000000Z.pb.gz k.20200104T000000Z.folded"
			 " k.20200105T000000Z.folded k.2020010XT000000Z.folded k.folded"
			 " kk.20200101T000000Z.folded other.20200101T000000Z.folded",
		    "keep_newest(DIR/k.folded, 2): the two newest kept, every other name untouched");
	free(got);
	keep_newest(path, 2);
	got = listing(dir);
	CHECK(strstr(got, " k.20200104T000000Z.folded k.20200105T000000Z.folded "),
	      "keep_newest again: the same two stay");
	free(got);

	/* A bare name: the working directory's files (13b21fe: -o b.folded --keep 1 left all 4). */
	empty_dir(dir);
	for (i = 0; i < 4; i++) {
		snprintf(path, sizeof(path), "b.%s.folded", stamps[i]);
		touch(dir, path);
	}
	touch(dir, "b.folded");
	cwd = open(".", O_RDONLY | O_DIRECTORY);
	if (CHECK(cwd >= 0 && chdir(dir) == 0, "into the directory")) {
		keep_newest("b.folded", 1);
		if (fchdir(cwd))
			CHECK(false, "back to the working directory");
	}
	if (cwd >= 0)
		close(cwd);
	got = listing(dir);
	expect_text(got, " b.20200105T000000Z.folded b.folded",
		    "keep_newest(b.folded, 1) in the working directory: the newest one left");
	free(got);
	empty_dir(dir);
	rmdir(dir);
}
