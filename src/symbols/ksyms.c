// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/ksyms.h"
#include "bpfprof/util.h"

void kernel_symbols_init(struct kernel_symbols *ks, const char *path)
{
	memset(ks, 0, sizeof(*ks));
	ks->err = 1;
	ks->path = xstrdup(path);
	read_file("/proc/modules", &ks->modules, NULL);
}

static void forget_modules(struct kernel_symbols *ks)
{
	uint32_t i;

	for (i = 0; i < ks->nr_mods; i++)
		free(ks->mods[i].name);
	ks->nr_mods = 0;
}

void kernel_symbols_release(struct kernel_symbols *ks)
{
	uint32_t i;

	for (i = 0; i < ks->nr_added; i++) {
		free(ks->added[i].name);
		free(ks->added[i].module);
	}
	free(ks->added);
	forget_modules(ks);
	free(ks->mods);
	kallsyms_release(&ks->kallsyms);
	free(ks->path);
	free(ks->modules);
	memset(ks, 0, sizeof(*ks));
}

static void span(struct kernel_symbols *ks, const char *module, uint64_t lo, uint64_t hi);

void kernel_symbols_added(struct kernel_symbols *ks, uint64_t addr, uint32_t len,
			  const char *name, const char *module)
{
	uint32_t i = 0, at;

	if (!len || addr + len < addr)
		return;
	/* What it overlaps went before it came: drop that. */
	while (i < ks->nr_added) {
		struct ksym_added *a = &ks->added[i];

		if (a->addr < addr + len && addr < a->addr + a->len) {
			free(a->name);
			free(a->module);
			memmove(a, a + 1, (ks->nr_added - i - 1) * sizeof(*a));
			ks->nr_added--;
		} else {
			i++;
		}
	}
	for (at = 0; at < ks->nr_added && ks->added[at].addr < addr; at++)
		;
	ALLOC_GROW(ks->added, ks->nr_added + 1, ks->added_alloc);
	memmove(&ks->added[at + 1], &ks->added[at], (ks->nr_added - at) * sizeof(*ks->added));
	ks->added[at] = (struct ksym_added){ addr, len, xstrdup(name), xstrdup(module) };
	ks->nr_added++;
	if (ks->err != 1)
		span(ks, module, addr, addr + len);
}

static const struct ksym_added *added_lookup(const struct kernel_symbols *ks, uint64_t addr)
{
	size_t i = COUNT_AT_OR_BELOW(ks->added, ks->nr_added, addr, addr);

	return i && addr - ks->added[i - 1].addr < ks->added[i - 1].len ? &ks->added[i - 1] : NULL;
}

void kernel_symbols_check_modules(struct kernel_symbols *ks)
{
	char *now = NULL;

	/* No /proc/modules: a kernel without modules, nothing to watch. */
	if (read_file("/proc/modules", &now, NULL))
		return;
	if (!ks->modules || strcmp(now, ks->modules))
		ks->stale = true;
	free(ks->modules);
	ks->modules = now;
}

static struct kernel_module *module_named(struct kernel_symbols *ks, const char *name)
{
	uint32_t i;

	for (i = 0; i < ks->nr_mods; i++)
		if (!strcmp(ks->mods[i].name, name))
			return &ks->mods[i];
	ALLOC_GROW(ks->mods, ks->nr_mods + 1, ks->mods_alloc);
	memset(&ks->mods[ks->nr_mods], 0, sizeof(*ks->mods));
	ks->mods[ks->nr_mods].name = xstrdup(name);
	ks->mods[ks->nr_mods].start = UINT64_MAX;
	return &ks->mods[ks->nr_mods++];
}

/* Widens the module's span to hold [lo, hi), unless its mapping is made already. */
static void span(struct kernel_symbols *ks, const char *module, uint64_t lo, uint64_t hi)
{
	struct kernel_module *m = module_named(ks, module);

	if (m->mapping)
		return;
	if (lo < m->start)
		m->start = lo;
	if (hi > m->limit)
		m->limit = hi;
}

/* Reads kallsyms (again) and spans each module from its first symbol to past its last. */
static void load(struct kernel_symbols *ks)
{
	size_t i;

	if (ks->err != 1 && !ks->stale)
		return;
	if (ks->err != 1)
		kallsyms_release(&ks->kallsyms);
	ks->stale = false;
	ks->reads++;
	forget_modules(ks);
	ks->err = kallsyms_load(&ks->kallsyms, ks->path);
	if (ks->err) {
		warning("cannot read '%s': %s; kernel frames stay unnamed", ks->path, strerror(-ks->err));
		return;
	}
	for (i = 0; i < ks->kallsyms.nr; i++) {
		const struct ksym *sym = &ks->kallsyms.syms[i];

		span(ks, ksym_module(&ks->kallsyms, sym), sym->addr, sym->addr + 1);
	}
	for (i = 0; i < ks->nr_added; i++)
		span(ks, ks->added[i].module, ks->added[i].addr, ks->added[i].addr + ks->added[i].len);
}

static uint32_t module_mapping(struct kernel_symbols *ks, struct profile *p, const char *name)
{
	struct kernel_module *m = module_named(ks, name);
	struct prof_mapping pm = { 0 };
	struct strbuf file;

	if (m->mapping)
		return m->mapping;
	strbuf_init(&file);
	if (*name)
		strbuf_addf(&file, "[%s]", name);
	else
		strbuf_addstr(&file, "[kernel.kallsyms]");
	pm.start = m->start == UINT64_MAX ? 0 : m->start;
	pm.limit = m->limit;
	pm.file = profile_string(p, file.buf);
	strbuf_release(&file);
	m->mapping = profile_mapping(p, &pm);
	return m->mapping;
}

void kernel_symbols_renumber(struct kernel_symbols *ks, const struct profile_renumbering *r)
{
	uint32_t i;

	/* A mapping let go (no sample used it) is made again, from the same span, when needed. */
	for (i = 0; i < ks->nr_mods; i++)
		if (ks->mods[i].mapping)
			ks->mods[i].mapping = r->mappings[ks->mods[i].mapping] == ITAB_NONE
						      ? 0 : r->mappings[ks->mods[i].mapping];
}

void kernel_symbols_stack(struct kernel_symbols *ks, struct profile *p, const uint64_t *ips,
			  uint32_t n, uint32_t *locs)
{
	uint32_t i;

	load(ks);
	for (i = 0; i < n; i++) {
		uint64_t addr = ips[i] - (i > 0);
		/* What the side-band announced is newer than kallsyms as last read. */
		const struct ksym_added *added = added_lookup(ks, addr);
		const struct ksym *sym = added || ks->err ? NULL : kallsyms_lookup(&ks->kallsyms, addr);
		const char *name = added ? added->name : sym ? ksym_name(&ks->kallsyms, sym) : NULL;
		const char *module = added ? added->module : sym ? ksym_module(&ks->kallsyms, sym) : "";
		uint32_t mapping = module_mapping(ks, p, module);
		uint32_t id = profile_location_find(p, mapping, addr);

		if (id == ITAB_NONE) {
			struct prof_line line = { 0, 0 };

			if (name) {
				uint32_t s = profile_string(p, name);

				line.function = profile_function(p, s, s, 0);
			}
			id = profile_location_add(p, mapping, addr, FRAME_KERNEL, &line, name ? 1 : 0);
		}
		locs[i] = id;
	}
}
