// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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

/*
 * Lines look like "ffffffff81000000 T _stext" or, for modules and BPF
 * programs, "ffffffffc0a01000 t name\t[module]". Only text symbols count.
 */
int kallsyms_parse(struct kallsyms *ks, const char *text, size_t len)
{
	const char *p = text, *end = text + len;
	uint32_t last_module = 0;
	size_t last_module_len = 0;
	bool any_nonzero = false;

	memset(ks, 0, sizeof(*ks));
	add_name(ks, "", 0);
	while (p < end) {
		const char *eol = memchr(p, '\n', end - p), *name, *name_end, *mod = NULL;
		uint64_t addr = 0;
		int digits = 0, v;
		char type;

		if (!eol)
			eol = end;
		if (eol == p) {
			p++;
			continue;
		}
		while (p < eol && (v = hexval(*p)) >= 0 && digits < 16) {
			addr = addr << 4 | v;
			p++;
			digits++;
		}
		if (!digits || p + 3 > eol || p[0] != ' ' || p[2] != ' ')
			goto bad;
		type = p[1];
		name = p + 3;
		name_end = name;
		/* A NUL ends the name too: it could not be shown past it. */
		while (name_end < eol && *name_end != '\t' && *name_end != ' ' && *name_end)
			name_end++;
		if (name_end == name)
			goto bad;
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
			any_nonzero = true;
		if (type == 't' || type == 'T') {
			struct ksym *s;

			ALLOC_GROW(ks->syms, ks->nr + 1, ks->alloc);
			s = &ks->syms[ks->nr++];
			s->addr = addr;
			s->name = add_name(ks, name, name_end - name);
			s->module = 0;
			if (mod) {
				size_t mlen = eol - 1 - mod;

				/* Modules come in runs: reuse the name of the last one. */
				if (!last_module || mlen != last_module_len ||
				    memcmp(ks->names + last_module, mod, mlen)) {
					last_module = add_name(ks, mod, mlen);
					last_module_len = mlen;
				}
				s->module = last_module;
			}
		}
		p = eol + 1;
		continue;
bad:
		kallsyms_release(ks);
		return -EINVAL;
	}
	if (ks->nr && !any_nonzero) {
		kallsyms_release(ks);
		return -EPERM;
	}
	if (ks->nr)
		qsort(ks->syms, ks->nr, sizeof(*ks->syms), ksym_cmp);
	return 0;
}

int kallsyms_load(struct kallsyms *ks, const char *path)
{
	char *text;
	size_t len;
	int err = read_file(path, &text, &len);

	if (err) {
		memset(ks, 0, sizeof(*ks));
		return err;
	}
	err = kallsyms_parse(ks, text, len);
	free(text);
	return err;
}

void kallsyms_release(struct kallsyms *ks)
{
	free(ks->syms);
	free(ks->names);
	memset(ks, 0, sizeof(*ks));
}

const struct ksym *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr)
{
	size_t lo = 0, hi = ks->nr;

	/* Find the first symbol above addr; the one before covers it. */
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (ks->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo ? &ks->syms[lo - 1] : NULL;
}
