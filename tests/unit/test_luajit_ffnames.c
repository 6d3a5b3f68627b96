// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * luajit_ffnames_read on Debian 12's OpenResty LuaJIT (package luajit2):
 * the executable and the library each find the jit/vmdef.lua installed
 * with them (libluajit2-5.1-common) and name ffid 91 string.format, as
 * jit.p does. Upstream's executable, unpacked under $(O)/luajit-upstream
 * without its own vmdef.lua, numbers its fast functions otherwise: the
 * installed vmdef.lua must not match it. Nor a vmdef.lua with a name
 * moved, nor garbage or a truncated file (no crash). A build in a
 * container takes the vmdef.lua of the container's root first, then ours
 * (where the root's does not match).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/luajit_ffnames.h"
#include "bpfprof/util.h"
#include "unit.h"

#define OPENRESTY_VMDEF "/usr/share/luajit-2.1.0-beta3/jit/vmdef.lua"

static int read_names(const char *path, struct luajit_ffnames *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = luajit_ffnames_read(fd, NULL, path, f);
	close(fd);
	return rc;
}

static void check_openresty(const char *path)
{
	struct luajit_ffnames f;
	const char *n2, *n91;
	int rc = read_names(path, &f);

	n2 = luajit_ffname(&f, 2);
	n91 = luajit_ffname(&f, 91);
	CHECK(!rc && n2 && !strcmp(n2, "assert") && n91 && !strcmp(n91, "string.format") &&
	      !luajit_ffname(&f, f.n),
	      "%s: fast functions named (rc %d): 2 %s, 91 %s", path, rc, n2 ? n2 : "-",
	      n91 ? n91 : "-");
	luajit_ffnames_release(&f);
}

/* The upstream executable under $(O), the folder unit_fixtures ($(O)/tests/fixtures) is in. */
static void check_upstream(void)
{
	struct luajit_ffnames f;
	char path[4096];
	int rc;

	snprintf(path, sizeof(path), "%s/../../luajit-upstream/usr/bin/luajit", unit_fixtures);
	if (access(path, R_OK)) {
		unit_skip("not unpacked", "upstream LuaJIT's fast functions");
		return;
	}
	rc = read_names(path, &f);
	CHECK(rc == -ESRCH || (!rc && luajit_ffname(&f, 91) &&
			       strcmp(luajit_ffname(&f, 91), "string.format")),
	      "upstream luajit: OpenResty's vmdef.lua does not match it (rc %d)", rc);
	luajit_ffnames_release(&f);
}

/* Names moved by one from ffid 40 on (as a build with one more fast function): no match. */
static void check_moved(const uint8_t *elf, size_t len, const char *text)
{
	struct luajit_ffnames f;
	uint32_t i;

	if (luajit_ffnames_parse_vmdef(text, &f)) {
		CHECK(false, "vmdef.lua parsed");
		return;
	}
	CHECK(!luajit_ffnames_match(elf, len, f.names, f.n), "the build's own names match");
	CHECK(luajit_ffnames_match(elf, len / 2, f.names, f.n) == -ESRCH,
	      "half the file: no match, no crash");
	free(f.names[f.n - 1]);
	for (i = f.n - 1; i > 40; i--)
		f.names[i] = f.names[i - 1];
	f.names[40] = xstrdup("math.extra");
	CHECK(luajit_ffnames_match(elf, len, f.names, f.n) == -ESRCH,
	      "names moved by one: no match");
	luajit_ffnames_release(&f);
	CHECK(luajit_ffnames_parse_vmdef("ffnames = {\n[0]=\"Lua\",\n\"C\",\n\"x", &f) == -EINVAL,
	      "a cut vmdef.lua: not parsed");
}

/* write_tree ROOT REL TEXT: ROOT/REL with TEXT, its directories made. */
static int write_tree(const char *root, const char *rel, const char *text)
{
	char path[4096], *slash;
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", root, rel);
	for (slash = path + strlen(root) + 1; (slash = strchr(slash, '/')); slash++) {
		*slash = '\0';
		mkdir(path, 0755);
		*slash = '/';
	}
	if (!(f = fopen(path, "w")))
		return -1;
	fputs(text, f);
	return fclose(f);
}

/*
 * /usr/bin/luajit as a container's /usr/local/bin/luajit, its vmdef.lua in the container's
 * /usr/local/share (none in ours): found there. The root's moved by one: ours taken instead
 * (the build's module directory, /usr/share/luajit-2.1.0-beta3). Without a root: ours.
 */
static void check_root(const char *text)
{
	static const char rel[] = "usr/local/share/luajit-2.1.0-beta3/jit/vmdef.lua";
	char dir[] = "/tmp/bpfprof-ffnames.XXXXXX", want[4096], *moved, *at;
	struct luajit_ffnames f;
	int fd, rc;

	if (!mkdtemp(dir) || write_tree(dir, rel, text)) {
		CHECK(false, "a root made in /tmp");
		return;
	}
	snprintf(want, sizeof(want), "%s/%s", dir, rel);
	fd = open("/usr/bin/luajit", O_RDONLY | O_CLOEXEC);
	rc = luajit_ffnames_read(fd, dir, "/usr/local/bin/luajit", &f);
	CHECK(!rc && f.source && !strcmp(f.source, want) && luajit_ffname(&f, 91) &&
	      !strcmp(luajit_ffname(&f, 91), "string.format"),
	      "in a root: its own vmdef.lua (rc %d, from %s)", rc, f.source ? f.source : "-");
	luajit_ffnames_release(&f);

	/* string.format's name where the next function's is: the root's does not match. */
	moved = xstrdup(text);
	if ((at = strstr(moved, "\"string.format\"")))
		memcpy(at, "\"string.formax\"", strlen("\"string.formax\""));
	write_tree(dir, rel, moved);
	rc = luajit_ffnames_read(fd, dir, "/usr/local/bin/luajit", &f);
	CHECK(at && !rc && f.source && !strcmp(f.source, OPENRESTY_VMDEF),
	      "the root's not matching: ours (rc %d, from %s)", rc, f.source ? f.source : "-");
	luajit_ffnames_release(&f);
	rc = luajit_ffnames_read(fd, NULL, "/usr/local/bin/luajit", &f);
	CHECK(!rc && f.source && !strcmp(f.source, OPENRESTY_VMDEF),
	      "no root: ours (rc %d, from %s)", rc, f.source ? f.source : "-");
	luajit_ffnames_release(&f);
	close(fd);
	free(moved);
	unlink(want);
	for (at = want + strlen(want); at > want + strlen(dir); at--)
		if (*at == '/') {
			*at = '\0';
			rmdir(want);
		}
	rmdir(dir);
}

void test_luajit_ffnames(void)
{
	static const uint8_t zeros[4096];
	static char *const few[] = { "Lua", "C", "assert" };
	uint8_t *elf = NULL;
	char *text = NULL;
	size_t len, tlen;

	if (read_file("/usr/bin/luajit", (char **)&elf, &len) ||
	    read_file(OPENRESTY_VMDEF, &text, &tlen) || !strstr(text, "\"table.isempty\"")) {
		unit_skip("no OpenResty LuaJIT (luajit2)", "LuaJIT's fast functions' names");
		free(elf);
		free(text);
		return;
	}
	check_openresty("/usr/bin/luajit");
	check_openresty("/usr/lib/x86_64-linux-gnu/libluajit-5.1.so.2.1.0");
	check_upstream();
	check_root(text);
	check_moved(elf, len, text);
	CHECK(luajit_ffnames_match(zeros, sizeof(zeros), few, 3) == -ESRCH, "zeros: no match");
	free(elf);
	free(text);
}
