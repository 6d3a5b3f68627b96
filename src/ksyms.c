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
	forget_modules(ks);
	free(ks->mods);
	kallsyms_release(&ks->kallsyms);
	free(ks->path);
	free(ks->modules);
	memset(ks, 0, sizeof(*ks));
}

void kernel_symbols_changed(struct kernel_symbols *ks)
{
	ks->stale = true;
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
		struct kernel_module *m = module_named(ks, ksym_module(&ks->kallsyms, sym));

		if (sym->addr < m->start)
			m->start = sym->addr;
		if (sym->addr + 1 > m->limit)
			m->limit = sym->addr + 1;
	}
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

void kernel_symbols_stack(struct kernel_symbols *ks, struct profile *p, const uint64_t *ips,
			  uint32_t n, uint32_t *locs)
{
	uint32_t i;

	load(ks);
	for (i = 0; i < n; i++) {
		uint64_t addr = ips[i] - (i > 0);
		const struct ksym *sym = ks->err ? NULL : kallsyms_lookup(&ks->kallsyms, addr);
		uint32_t mapping = module_mapping(ks, p, sym ? ksym_module(&ks->kallsyms, sym) : "");
		uint32_t id = profile_location_find(p, mapping, addr);

		if (id == ITAB_NONE) {
			struct prof_line line = { 0, 0 };
			uint32_t name;

			if (sym) {
				name = profile_string(p, ksym_name(&ks->kallsyms, sym));
				line.function = profile_function(p, name, name, 0);
			}
			id = profile_location_add(p, mapping, addr, FRAME_KERNEL, &line, sym ? 1 : 0);
		}
		locs[i] = id;
	}
}
