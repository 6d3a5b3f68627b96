/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Kernel frames: named from /proc/kallsyms, each in the mapping of its
 * module ("[kernel.kallsyms]", "[bpf]" for BPF programs, "[name]" for a
 * module), read again when kernel code comes or goes during the run (a BPF
 * program loaded, a module inserted) before the next frames are named.
 */
#ifndef BPFPROF_KSYMS_H
#define BPFPROF_KSYMS_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/kallsyms.h"
#include "bpfprof/profile.h"

struct kernel_symbols {
	struct kallsyms kallsyms;
	int err;		/* 1 until read, then 0 or -errno */
	bool stale;		/* kernel code changed since the last read */
	char *path;		/* /proc/kallsyms unless a test says otherwise */
	char *modules;		/* /proc/modules as last read, to see it change */
	struct kernel_module {
		char *name;	/* "" for vmlinux */
		uint64_t start, limit;
		uint32_t mapping;	/* profile mapping; 0 until made */
	} *mods;
	uint32_t nr_mods, mods_alloc;
	uint32_t reads;		/* times kallsyms was read */
	/* Code the side-band announced (BPF programs, trampolines), by address. */
	struct ksym_added {
		uint64_t addr;
		uint32_t len;
		char *name, *module;
	} *added;
	uint32_t nr_added, added_alloc;
};

void kernel_symbols_init(struct kernel_symbols *ks, const char *path);
void kernel_symbols_release(struct kernel_symbols *ks);
/*
 * Kernel code came (a side-band KSYMBOL record): named from the record, no
 * need to read kallsyms again. Code that went keeps its name until other
 * code takes its place: samples in flight may still hold its addresses.
 */
void kernel_symbols_added(struct kernel_symbols *ks, uint64_t addr, uint32_t len,
			  const char *name, const char *module);
/* Once per drain: a module inserted or removed also means reading again. */
void kernel_symbols_check_modules(struct kernel_symbols *ks);
/* After profile_fold(): the module mappings' ids, renumbered. */
void kernel_symbols_renumber(struct kernel_symbols *ks, const struct profile_renumbering *r);
/* Location ids for n kernel IPs, leaf first; callers' return addresses moved back one byte. */
void kernel_symbols_stack(struct kernel_symbols *ks, struct profile *p, const uint64_t *ips,
			  uint32_t n, uint32_t *locs);

#endif
