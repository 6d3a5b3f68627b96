// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LuaJIT's fast functions named as jit.p names them: jit/vmdef.lua, which
 * LuaJIT's build writes beside each build, lists their names by ffid. Which
 * vmdef.lua is the build's is checked against the build itself: its
 * libraries' init data (lj_lib_init_*, made by buildvm from the lib_*.c
 * sources, read by lj_lib_register) list each library's functions in ffid
 * order, after its first ffid:
 *
 *   ffid, bytecode index, hash size, then entries up to LIBINIT_END:
 *   a function: tag|len then its short name (len 0: not in the table),
 *   LIBINIT_FFID: an ffid the library does not register here,
 *   LIBINIT_LUA: a function written in Lua, its name and stripped bytecode,
 *   a string, a number, a copy, a set: no ffid.
 *
 * A vmdef.lua matches when, from ffid 2 on, each ffid is in such a library
 * whose short names are vmdef's.
 */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/luajit_ffnames.h"
#include "bpfprof/util.h"

/* lj_lib.h: the tags of a library's init data. */
#define LIBINIT_LENMASK	0x3f
#define LIBINIT_TAGMASK	0xc0
#define LIBINIT_STRING	0xc0
#define LIBINIT_LUA	0xf9
#define LIBINIT_SET	0xfa
#define LIBINIT_NUMBER	0xfb
#define LIBINIT_COPY	0xfc
#define LIBINIT_LASTCL	0xfd
#define LIBINIT_FFID	0xfe
#define LIBINIT_END	0xff

/* lj_bcdump.h: the kinds of a dumped prototype's constants. */
enum { KGC_CHILD, KGC_TAB, KGC_I64, KGC_U64, KGC_COMPLEX, KGC_STR };
enum { KTAB_NIL, KTAB_FALSE, KTAB_TRUE, KTAB_INT, KTAB_NUM, KTAB_STR };

/* The first ffid of a fast function: 0 and 1 are Lua's and C's functions. */
#define FIRST_FFID	2
#define ELF_MAX		(256u << 20)

struct cursor {
	const uint8_t *p, *end;
	bool bad;		/* read past the end */
};

static uint8_t next_byte(struct cursor *c)
{
	if (c->p >= c->end) {
		c->bad = true;
		return 0;
	}
	return *c->p++;
}

static void skip(struct cursor *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p)) {
		c->bad = true;
		c->p = c->end;
		return;
	}
	c->p += n;
}

static uint64_t uleb(struct cursor *c)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		b = next_byte(c);
		if (shift < 64)
			v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
	} while (b & 0x80);
	return v;
}

/* A table constant's key or value (lj_bcread.c bcread_ktabk). */
static void skip_ktab_value(struct cursor *c)
{
	uint64_t kind = uleb(c);

	if (kind >= KTAB_STR)
		skip(c, kind - KTAB_STR);
	else if (kind == KTAB_INT)
		uleb(c);
	else if (kind == KTAB_NUM) {
		uleb(c);
		uleb(c);
	}
}

static void skip_kgc(struct cursor *c, uint64_t n)
{
	uint64_t i, j, narray, nhash, kind;

	for (i = 0; i < n && !c->bad; i++) {
		kind = uleb(c);
		if (kind >= KGC_STR) {
			skip(c, kind - KGC_STR);
		} else if (kind == KGC_TAB) {
			narray = uleb(c);
			nhash = uleb(c);
			for (j = 0; j < narray && !c->bad; j++)
				skip_ktab_value(c);
			for (j = 0; j < nhash && !c->bad; j++) {
				skip_ktab_value(c);
				skip_ktab_value(c);
			}
		} else if (kind != KGC_CHILD) {
			for (j = kind == KGC_COMPLEX ? 4 : 2; j > 0; j--)
				uleb(c);
		}
	}
}

/* A stripped prototype, as lj_bcread_proto reads it after a LIBINIT_LUA's name. */
static void skip_proto(struct cursor *c)
{
	uint64_t nuv, nkgc, nkn, nbc, i;

	skip(c, 3);		/* flags, number of parameters, frame size */
	nuv = next_byte(c);
	nkgc = uleb(c);
	nkn = uleb(c);
	nbc = uleb(c);
	if (nbc > (uint64_t)(c->end - c->p) / 4) {
		c->bad = true;
		return;
	}
	skip(c, nbc * 4 + nuv * 2);
	skip_kgc(c, nkgc);
	for (i = 0; i < nkn && !c->bad; i++) {
		/* A number's first uleb (33 bits) says in its low bit whether a second follows. */
		bool two = c->p < c->end && (*c->p & 1);

		uleb(c);
		if (two)
			uleb(c);
	}
}

/* Whether name (len bytes, not NUL-terminated) is full's short name: after its last dot. */
static bool short_name_is(const char *full, const uint8_t *name, size_t len)
{
	const char *dot = strrchr(full, '.'), *s = dot ? dot + 1 : full;

	return strlen(s) == len && !memcmp(s, name, len);
}

/*
 * The library whose init data starts at c: its functions' short names
 * checked against names[] from its first ffid on. The ffid after its
 * last, or 0 if it does not parse, names none, or a name differs.
 */
static uint32_t match_library(struct cursor c, char *const *names, uint32_t n)
{
	uint32_t ffid = next_byte(&c), named = 0, len;
	uint8_t tag;

	skip(&c, 2);		/* its first fast function's bytecode index, its table's size */
	while (!c.bad) {
		tag = next_byte(&c);
		if (tag == LIBINIT_END)
			return named && ffid <= n && !c.bad ? ffid : 0;
		if (tag == LIBINIT_FFID) {
			ffid++;
		} else if (tag == LIBINIT_LUA) {
			skip(&c, next_byte(&c));
			skip_proto(&c);
		} else if (tag == LIBINIT_NUMBER) {
			skip(&c, 8);
		} else if (tag == LIBINIT_COPY) {
			skip(&c, 1);
		} else if ((tag & LIBINIT_TAGMASK) == LIBINIT_STRING) {
			/* A string constant, or LIBINIT_SET, LIBINIT_LASTCL: no ffid. */
			if (tag != LIBINIT_SET && tag != LIBINIT_LASTCL)
				skip(&c, tag & LIBINIT_LENMASK);
		} else {
			len = tag & LIBINIT_LENMASK;
			if (len > (uint32_t)(c.end - c.p) || ffid >= n ||
			    (len && !short_name_is(names[ffid], c.p, len)))
				return 0;
			skip(&c, len);
			named += len > 0;
			ffid++;
		}
	}
	return 0;
}

int luajit_ffnames_match(const uint8_t *data, size_t len, char *const *names, uint32_t n)
{
	const uint8_t *end = data + len, *p;
	uint32_t ffid = FIRST_FFID, next;

	while (ffid < n) {
		next = 0;
		for (p = data; p < end && (p = memchr(p, (int)ffid, end - p)); p++) {
			next = match_library((struct cursor){ p, end, false }, names, n);
			if (next > ffid)
				break;
		}
		if (next <= ffid)
			return -ESRCH;
		ffid = next;
	}
	return n > FIRST_FFID ? 0 : -ESRCH;
}

void luajit_ffnames_release(struct luajit_ffnames *f)
{
	uint32_t i;

	for (i = 0; i < f->n; i++)
		free(f->names[i]);
	free(f->names);
	free(f->source);
	f->names = NULL;
	f->source = NULL;
	f->n = 0;
}

int luajit_ffnames_parse_vmdef(const char *text, struct luajit_ffnames *out)
{
	static const char start[] = "ffnames = {";
	const char *p = strstr(text, start), *q;
	uint32_t alloc = 0;

	memset(out, 0, sizeof(*out));
	/* The table's own line: not "xffnames = {" or a comment. */
	while (p && p != text && p[-1] != '\n')
		p = strstr(p + 1, start);
	if (!p)
		return -EINVAL;
	p += strlen(start);
	for (;;) {
		p += strspn(p, " \t\r\n,");
		if (*p == '}')
			return out->n > FIRST_FFID ? 0 : -EINVAL;
		if (!strncmp(p, "[0]=", 4))
			p += 4;
		if (*p != '"' || !(q = strchr(p + 1, '"')))
			break;
		ALLOC_GROW(out->names, out->n + 1, alloc);
		out->names[out->n++] = xstrndup(p + 1, q - p - 1);
		p = q + 1;
	}
	luajit_ffnames_release(out);
	return -EINVAL;
}

const char *luajit_ffname(const struct luajit_ffnames *f, uint32_t ffid)
{
	return f && ffid < f->n && f->names[ffid][0] ? f->names[ffid] : NULL;
}

/* The ELF file on fd, whole (its library data is in its read-only segment). */
static int read_elf(int fd, uint8_t **data, size_t *len)
{
	struct stat st;
	size_t n = 0;
	ssize_t r;

	if (fstat(fd, &st))
		return -errno;
	if (st.st_size <= 0 || (uint64_t)st.st_size > ELF_MAX)
		return -EFBIG;
	*data = xmalloc(st.st_size);
	while (n < (size_t)st.st_size) {
		r = pread(fd, *data + n, st.st_size - n, n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0) {
			free(*data);
			return r ? -errno : -EIO;
		}
		n += r;
	}
	*len = n;
	return 0;
}

/* The vmdef.lua at path if it matches the build (data): 0, -ENOENT or -ESRCH. */
static int try_vmdef(const char *path, const uint8_t *data, size_t len, struct luajit_ffnames *out)
{
	char *text;
	size_t n;
	int err;

	if (read_file(path, &text, &n))
		return -ENOENT;
	err = luajit_ffnames_parse_vmdef(text, out) ? -ESRCH : 0;
	free(text);
	if (!err && luajit_ffnames_match(data, len, out->names, out->n)) {
		luajit_ffnames_release(out);
		err = -ESRCH;
	}
	if (!err)
		out->source = xstrdup(path);
	debug("LuaJIT fast functions' names: '%s' %s", path,
	      err ? "does not match the build" : "matches the build");
	return err;
}

/*
 * vmdef.lua in PREFIX/share/luajit-2.1..., for a file up to three directories
 * under PREFIX, under root ("" : ours).
 */
static int try_beside(const char *root, const char *path, const uint8_t *data, size_t len,
		      struct luajit_ffnames *out)
{
	char dir[PATH_MAX], pattern[2 * PATH_MAX + 64], *slash;
	int err = -ENOENT, up;
	glob_t g;
	size_t i;

	snprintf(dir, sizeof(dir), "%s", path);
	if (!(slash = strrchr(dir, '/')))
		return -ENOENT;
	*slash = '\0';
	for (up = 0; up < 3 && (slash = strrchr(dir, '/')) && slash != dir; up++) {
		*slash = '\0';
		snprintf(pattern, sizeof(pattern), "%s%s/share/luajit-2.1*/jit/vmdef.lua", root, dir);
		if (glob(pattern, 0, NULL, &g))
			continue;
		for (i = 0; i < g.gl_pathc && err; i++)
			if (try_vmdef(g.gl_pathv[i], data, len, out) == 0)
				err = 0;
			else if (access(g.gl_pathv[i], R_OK) == 0)
				err = -ESRCH;
		globfree(&g);
		if (!err)
			return 0;
	}
	return err;
}

/* The build's own module directory ("/usr/share/luajit-2.1.0-beta3/?.lua" in its path), under root. */
static int try_module_dir(const char *root, const uint8_t *data, size_t len,
			  struct luajit_ffnames *out)
{
	static const char mark[] = "/share/luajit-";
	const uint8_t *at = memmem(data, len, mark, strlen(mark)), *b, *e;
	char path[2 * PATH_MAX];

	if (!at)
		return -ENOENT;
	for (b = at; b > data && b[-1] > ' ' && b[-1] < 0x7f && b[-1] != ';'; b--)
		;
	for (e = at; e < data + len && *e != '?' && *e != ';' && *e > ' ' && *e < 0x7f; e++)
		;
	if (e - b >= PATH_MAX - 32 || e[-1] != '/')
		return -ENOENT;
	snprintf(path, sizeof(path), "%s%.*sjit/vmdef.lua", root, (int)(e - b), (const char *)b);
	return try_vmdef(path, data, len, out);
}

/* Beside the file, then in its module directory, under root: 0, -ENOENT or -ESRCH. */
static int try_root(const char *root, const char *path, const uint8_t *data, size_t len,
		    struct luajit_ffnames *out)
{
	int err, beside = try_beside(root, path, data, len, out);

	err = beside ? try_module_dir(root, data, len, out) : 0;
	return err == -ENOENT && beside == -ESRCH ? -ESRCH : err;
}

/* Is dir our own root? */
static bool is_our_root(const char *dir)
{
	struct stat ours, theirs;

	return !stat("/", &ours) && !stat(dir, &theirs) && ours.st_dev == theirs.st_dev &&
	       ours.st_ino == theirs.st_ino;
}

int luajit_ffnames_read(int fd, const char *root, const char *path, struct luajit_ffnames *out)
{
	uint8_t *data = NULL;
	size_t len = 0;
	int err = -ENOENT, ours;

	memset(out, 0, sizeof(*out));
	if ((err = read_elf(fd, &data, &len)))
		return err;
	err = -ENOENT;
	if (root && !is_our_root(root))
		err = try_root(root, path, data, len, out);
	if (err) {
		ours = try_root("", path, data, len, out);
		err = ours == -ENOENT && err == -ESRCH ? -ESRCH : ours;
	}
	free(data);
	return err;
}
