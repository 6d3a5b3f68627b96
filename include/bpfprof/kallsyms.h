/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * /proc/kallsyms: kernel text symbols (vmlinux, modules, BPF programs),
 * sorted by address. A reader: takes a path or a buffer, never prints.
 */
#ifndef BPFPROF_KALLSYMS_H
#define BPFPROF_KALLSYMS_H

#include <stddef.h>
#include <stdint.h>

struct ksym {
	uint64_t addr;
	uint32_t name;		/* offset into names */
	uint32_t module;	/* offset into names of the module, 0 = vmlinux ("") */
};

struct kallsyms {
	struct ksym *syms;
	size_t nr, alloc;
	char *names;
	size_t names_len, names_alloc;
};

/* 0, -EINVAL on a malformed line, -EPERM if every address reads as zero. */
int kallsyms_parse(struct kallsyms *ks, const char *text, size_t len);
int kallsyms_load(struct kallsyms *ks, const char *path);
void kallsyms_release(struct kallsyms *ks);

/* The address of vmlinux's symbol name (a linear search), or 0. */
uint64_t kallsyms_address(const struct kallsyms *ks, const char *name);
/* The symbol covering addr (the last one at or below it), or NULL. */
const struct ksym *kallsyms_lookup(const struct kallsyms *ks, uint64_t addr);
static inline const char *ksym_name(const struct kallsyms *ks, const struct ksym *s)
{
	return ks->names + s->name;
}
static inline const char *ksym_module(const struct kallsyms *ks, const struct ksym *s)
{
	return ks->names + s->module;
}

#endif
