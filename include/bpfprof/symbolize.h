/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Raw instruction pointers -> profile locations, in two steps:
 *   normalize: (process, address) -> mapping, file identity, file offset
 *   symbolize: (file, offset)     -> function name
 * Symbol tables are cached per file identity (device, inode), never per
 * process, and a file is read once per run. A frame nothing can name still
 * gets a location, with its mapping when one is known.
 */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <stdint.h>

#include "bpfprof/elf.h"
#include "bpfprof/intern.h"
#include "bpfprof/kallsyms.h"
#include "bpfprof/procs.h"
#include "bpfprof/profile.h"

/* Inlined calls named per address at most. */
#define MAX_INLINE_DEPTH 16

/* What names one frame; strings borrowed from the file's tables. */
struct sym_frame {
	const char *name;	/* as the symbol table spells it (mangled) */
	const char *file;	/* source file, or NULL */
	uint32_t line;		/* 0 when unknown */
};

/* One ELF file, identified by what /proc/PID/maps says of it. */
struct symfile {
	uint32_t dev_major, dev_minor;
	uint64_t inode;
	char *path;
	int err;		/* 0: syms loaded; negative errno: why not */
	struct elf_symtab syms;
};

struct symbolizer {
	struct procs procs;
	struct kallsyms kallsyms;
	int kallsyms_err;	/* 1 until loaded, then 0 or -errno */
	char *kallsyms_path;
	struct symfile **files;
	uint32_t nr_files, files_alloc;
	struct itab file_index;
	struct symfile vdso;
	uint32_t kernel_mapping;	/* profile mapping of the kernel, 0 until made */
};

void symbolizer_init(struct symbolizer *s);
void symbolizer_release(struct symbolizer *s);
/* Start of a drain: live processes may be re-read once if an address misses. */
void symbolizer_new_generation(struct symbolizer *s);

/*
 * Location ids for n raw IPs, leaf first, into locs[n]. Callers' return
 * addresses are moved back one byte so they fall inside the call.
 */
void symbolize_kernel_stack(struct symbolizer *s, struct profile *p, const uint64_t *ips,
			    uint32_t n, uint32_t *locs);
void symbolize_user_stack(struct symbolizer *s, struct profile *p, uint32_t tgid,
			  const uint64_t *ips, uint32_t n, uint32_t *locs);

#endif
