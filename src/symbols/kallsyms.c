// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/kallsyms.h"
#include "bpfprof/util.h"

static uint32_t add_name(struct kallsyms *ks, const char *s, size_t n)
{
	uint32_t off = ks->names_len;

	ALLOC_GROW(ks->names, ks->names_len + n + 1, ks->names_alloc);
	memcpy(ks->names + off, s, n);
	ks->names[off + n] = '\0';
	ks->names_len += n + 1;
	return off;
}

static int ksym_cmp(const void *a, const void *b)
{
	const struct ksym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->name < y->name ? -1 : x->name > y->name;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Where parsing stands between lines: kallsyms is read a chunk at a time. */
struct parse_state {
	uint32_t last_module;
	size_t last_module_len;
	uint32_t padded;	/* the name of the function whose padding came last, or 0 */
	size_t padded_len;
	size_t sorted;		/* syms[0, sorted) are in order */
	bool any_nonzero;
};

static void parse_begin(struct kallsyms *ks, struct parse_state *st)
{
	memset(ks, 0, sizeof(*ks));
	memset(st, 0, sizeof(*st));
	add_name(ks, "", 0);
}

/*
 * Kernels built with function padding (6.2 on) give each function a
 * "__pfx_NAME" symbol for the padding before it: half of all symbols. Code
 * there (call-depth accounting thunks) runs on the way into NAME, so it is
 * named NAME, and NAME is stored once for both.
 */
static uint32_t symbol_name(struct kallsyms *ks, struct parse_state *st, const char *name,
			    size_t len)
{
	static const char prefix[] = "__pfx_";
	const size_t plen = sizeof(prefix) - 1;
	uint32_t padded = st->padded;

	st->padded = 0;
	if (len > plen && !memcmp(name, prefix, plen)) {
		st->padded = add_name(ks, name + plen, len - plen);
		st->padded_len = len - plen;
		return st->padded;
	}
	if (padded && len == st->padded_len && !memcmp(ks->names + padded, name, len))
		return padded;
	return add_name(ks, name, len);
}

/*
 * Lines look like "ffffffff81000000 T _stext" or, for modules and BPF
 * programs, "ffffffffc0a01000 t name\t[module]". Only text symbols count.
 * 0, or -EINVAL on a malformed line.
 */
static int parse_line(struct kallsyms *ks, struct parse_state *st, const char *p, const char *eol)
{
	const char *name, *name_end, *mod = NULL;
	uint64_t addr = 0;
	int digits = 0, v;
	struct ksym *s;
	char type;

	if (eol == p)
		return 0;
	while (p < eol && (v = hexval(*p)) >= 0 && digits < 16) {
		addr = addr << 4 | v;
		p++;
		digits++;
	}
	if (!digits || p + 3 > eol || p[0] != ' ' || p[2] != ' ')
		return -EINVAL;
	type = p[1];
	name = p + 3;
	name_end = name;
	/* A NUL ends the name too: it could not be shown past it. */
	while (name_end < eol && *name_end != '\t' && *name_end != ' ' && *name_end)
		name_end++;
	if (name_end == name)
		return -EINVAL;
	if (name_end < eol) {
		mod = name_end;
		while (mod < eol && (*mod == '\t' || *mod == ' '))
			mod++;
		if (mod < eol && *mod == '[' && eol[-1] == ']')
			mod++;
		else
			mod = NULL;
	}
	if (addr)
		st->any_nonzero = true;
	if (type != 't' && type != 'T')
		return 0;
	ALLOC_GROW(ks->syms, ks->nr + 1, ks->alloc);
	s = &ks->syms[ks->nr++];
	s->addr = addr;
	s->name = symbol_name(ks, st, name, name_end - name);
	s->module = 0;
	if (mod) {
		size_t mlen = eol - 1 - mod;

		/* Modules come in runs: reuse the name of the last one. */
		if (!st->last_module || mlen != st->last_module_len ||
		    memcmp(ks->names + st->last_module, mod, mlen)) {
			st->last_module = add_name(ks, mod, mlen);
			st->last_module_len = mlen;
		}
		s->module = st->last_module;
	}
	if (st->sorted == ks->nr - 1 && (ks->nr == 1 || ksym_cmp(s - 1, s) <= 0))
		st->sorted = ks->nr;
	return 0;
}

/*
 * The kernel's own symbols come sorted; modules and BPF programs after them
 * need not be. Sort that tail alone and merge: a third of a full sort.
 */
static void sort_symbols(struct kallsyms *ks, size_t sorted)
{
	struct ksym *tail;
	size_t ntail = ks->nr - sorted, i, j, k;

	if (!ntail)
		return;
	qsort(ks->syms + sorted, ntail, sizeof(*ks->syms), ksym_cmp);
	if (!sorted || ksym_cmp(&ks->syms[sorted - 1], &ks->syms[sorted]) <= 0)
		return;
	tail = xmalloc(ntail * sizeof(*tail));
	memcpy(tail, ks->syms + sorted, ntail * sizeof(*tail));
	/* Merge from the back: the head's unmerged part is never overwritten. */
	i = sorted, j = ntail, k = ks->nr;
	while (j > 0) {
		if (i > 0 && ksym_cmp(&ks->syms[i - 1], &tail[j - 1]) > 0)
			ks->syms[--k] = ks->syms[--i];
		else
			ks->syms[--k] = tail[--j];
	}
	free(tail);
}

static int parse_end(struct kallsyms *ks, struct parse_state *st, int err)
{
	if (!err && ks->nr && !st->any_nonzero)
		err = -EPERM;
	if (err) {
		kallsyms_release(ks);
		return err;
	}
	sort_symbols(ks, st->sorted);
	/* Grown by doubling, kept for the run: give back the room never used (up to 2 MB). */
	if (ks->nr) {
		ks->syms = xrealloc(ks->syms, ks->nr * sizeof(*ks->syms));
		ks->alloc = ks->nr;
	}
	if (ks->names_len) {
		ks->names = xrealloc(ks->names, ks->names_len);
		ks->names_alloc = ks->names_len;
	}
	return 0;
}

int kallsyms_parse(struct kallsyms *ks, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	struct parse_state st;
	int err = 0;

	parse_begin(ks, &st);
	while (p < end && !err) {
		const char *eol = memchr(p, '\n', end - p);

		if (!eol)
			eol = end;
		err = parse_line(ks, &st, p, eol);
		p = eol + 1;
	}
	return parse_end(ks, &st, err);
}

/*
 * Read a chunk at a time and parse whole lines as they come: the text (some
 * 5 MB) is never held whole. A line longer than a chunk is malformed.
 */
#define KALLSYMS_CHUNK (64 * 1024)

int kallsyms_load(struct kallsyms *ks, const char *path)
{
	char *buf;
	size_t have = 0;
	struct parse_state st;
	int fd, err = 0;

	memset(ks, 0, sizeof(*ks));
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	buf = xmalloc(KALLSYMS_CHUNK);
	parse_begin(ks, &st);
	for (;;) {
		ssize_t r = read(fd, buf + have, KALLSYMS_CHUNK - have);
		char *p = buf, *end, *eol;

		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0) {
			err = -errno;
			break;
		}
		end = buf + have + r;
		while (!err && (eol = memchr(p, '\n', end - p))) {
			err = parse_line(ks, &st, p, eol);
			p = eol + 1;
		}
		have = end - p;
		if (err || r == 0) {
			/* The last line may lack its newline. */
			if (!err && have)
				err = parse_line(ks, &st, p, end);
			break;
		}
		if (have == KALLSYMS_CHUNK) {
			err = -EINVAL;
			break;
		}
		memmove(buf, p, have);
	}
	free(buf);
	close(fd);
	return parse_end(ks, &st, err);
}

void kallsyms_release(struct kallsyms *ks)
{
	free(ks->syms);
	free(ks->names);
	memset(ks, 0, sizeof(*ks));
}

uint64_t kallsyms_address(const struct kallsyms *ks, const char *name)
{
	size_t i;

	for (i = 0; i < ks->nr; i++)
		if (!ks->syms[i].module && !strcmp(ks->names + ks->syms[i].name, name))
			return ks->syms[i].addr;
	return 0;
}

const struct ksym *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr)
{
	/* The last symbol at or below addr covers it. */
	size_t i = COUNT_AT_OR_BELOW(ks->syms, ks->nr, addr, addr);

	return i ? &ks->syms[i - 1] : NULL;
}
