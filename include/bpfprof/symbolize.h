/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Raw instruction pointers -> profile locations, in two steps:
 *   normalize: (process, address) -> mapping, file identity, file offset
 *   symbolize: (file, offset)     -> function name
 * Symbol tables are cached per file identity (device, inode), never per
 * process, and a file is read once per run. A frame nothing can name still
 * gets a location, with its mapping when one is known.
 *
 * Inside (src/symbols/symbolize_private.h): symbolize.c names addresses,
 * symfile.c keeps the files (and tells the listeners of each opened),
 * table_feed.c feeds the unwind tables; jit.c reads perf maps (jit.h) and
 * frame_names.c makes the profile's functions (frame_names.h), both below
 * the symbolizer, which calls them.
 */
#ifndef BPFPROF_SYMBOLIZE_H
#define BPFPROF_SYMBOLIZE_H

#include <stdint.h>
#include <sys/stat.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/frame_names.h"
#include "bpfprof/intern.h"
#include "bpfprof/jit.h"
#include "bpfprof/ksyms.h"
#include "bpfprof/unwind.h"
#include "bpfprof/unwind_row.h"
#include "bpfprof/procs.h"
#include "bpfprof/profile.h"

struct unwind_tables;

/* A file a process maps, just opened by the symbolizer: what its listeners are told. */
struct opened_file {
	uint32_t tgid;			/* a process that maps it */
	const struct proc_map *m;	/* that mapping: start, offset, build ID; path "" when
					 * only the program's request named it (no path known) */
	int fd;				/* the file, read-only; borrowed for the call */
	const struct stat *st;		/* fstat of fd */
	const char *path;		/* as the process names the file */
	const char *root;		/* the process's root as reached from here ("/proc/PID/root",
					 * for files beside it), NULL when opened in ours */
};

/*
 * Who wants to know of files as the symbolizer opens them (the unwind
 * tables, the runtimes: each finds in a file what it needs). Called in the
 * order registered.
 */
struct file_listener {
	/* A file opened the first time (not when read again after being let go); NULL: none. */
	void (*opened)(void *ctx, const struct opened_file *f);
	/*
	 * A file already open mapped from another inode the kernel names by
	 * the same build ID (a copy of a binary): f's fd and st are the
	 * copy's. NULL: not wanted (no listener wants it: the copy is not opened).
	 */
	void (*copy)(void *ctx, const struct opened_file *f);
	void *ctx;
};

/* One ELF file, identified by what /proc/PID/maps says of it. */
struct symfile {
	dev_t dev;		/* the opened file's identity: the cache's key */
	ino_t ino;
	char *path;
	int fd;			/* open until its symbols are read; -1 after */
	uint32_t tgid;		/* a process that mapped it: whose root its debug file is in */
	int err;		/* 0: syms loaded; negative errno: why not */
	struct elf_symtab syms;	/* segments, build ID, and symbols unless debug_syms has them */
	/* A separate debug file, found once with the file (debuginfo.h). */
	char *debug_path;	/* as the process that mapped the file sees it; NULL: none */
	struct elf_symtab debug_syms;	/* its .symtab when the file itself has none */
	/* The file's DWARF, else its debug file's; NULL: none. Indexed on lookup. */
	struct dwarf_index *dwarf;
	/*
	 * --unwind dwarf: its .eh_frame, through an ELF handle kept open, and
	 * for code .eh_frame lacks the .debug_frame of the file or of its debug
	 * file (debug_cfi, owned by cfi_dwarf); NULL: none.
	 */
	int cfi_fd, debug_cfi_fd;
	Elf *cfi_elf, *debug_cfi_elf;
	Dwarf *cfi_dwarf;
	Dwarf_CFI *cfi, *debug_cfi;
	/*
	 * Symbols, debug info and CFI are let go once no process we know of
	 * has mapped the file for a while, and read again if one maps it.
	 */
	bool released;
	bool in_use;		/* mapped by a known process at the last check */
	uint32_t unused_drains;	/* checks in a row it was not */
};

struct symbolizer {
	struct procs procs;
	struct kernel_symbols kernel;
	struct symfile **files;
	uint32_t nr_files, files_alloc;
	uint32_t open_files;	/* files still open, waiting to be read */
	bool unwinding;		/* --unwind dwarf: keep each file's CFI */
	struct unwind_tables *tables;	/* --unwind auto: each file's table built as it is opened */
	struct file_listener *listeners;	/* told of each file opened */
	uint32_t nr_listeners, listeners_alloc;
	struct unwinder unwinder;
	struct itab file_index;
	/* The same files by what the kernel says of a mapping (build ID, or device and inode). */
	struct mapped_file {
		uint64_t ino;
		uint32_t dev_major, dev_minor;
		uint8_t build_id[20];
		uint8_t build_id_size;
		uint32_t file;
	} *mapped;
	uint32_t nr_mapped, mapped_alloc;
	struct itab mapped_index;
	struct symfile vdso;
	struct jit_names jit;	/* JIT code: its perf maps, its frames named late */
	struct fold_listener fold;	/* location ids above follow the profile's folds */
};

void symbolizer_init(struct symbolizer *s);
void symbolizer_release(struct symbolizer *s);
/* From now on, l is told of every file opened (files already open are not told again). */
void symbolizer_on_file(struct symbolizer *s, const struct file_listener *l);
/*
 * --unwind auto: from now on, every file opened gets its table built (the
 * vDSO's now): the tables listen to the files opened (table_feed.c).
 */
void symbolizer_use_tables(struct symbolizer *s, struct unwind_tables *t);
/*
 * --unwind auto: the program met a file with no table (a program started
 * during the run): opened now from the process's mapping of it, unless it
 * is gone, and every listener told (its table built unless the side-band's
 * path built it first, a runtime's file detected).
 */
void symbolizer_table_request(struct symbolizer *s, const struct table_request *r);
/* Start of a drain: live processes may be re-read once if an address misses. */
void symbolizer_new_generation(struct symbolizer *s);
/* Every process alive now, as generation current_gen() says the kernel counts. */
void symbolizer_scan(struct symbolizer *s, uint32_t (*current_gen)(void *ctx, uint32_t tgid),
		     void *ctx);
/*
 * A side-band record: the process tables follow it, and the file of a new
 * mapping is opened now, while the process that mapped it may still live.
 */
void symbolizer_track(void *s, const struct sb_event *ev);
/*
 * After each drain: processes that exited before this time have had all
 * their samples named, and are forgotten (returns how many); debug info
 * unused since the last drain is let go.
 */
uint32_t symbolizer_forget_before(struct symbolizer *s, uint64_t ns);
/* After each drain and at the end: names the JIT frames whose perf-map lines came late. */
void symbolizer_name_late_jit(struct symbolizer *s, struct profile *p);
/* For profile_fold(): whether process pid has exited and been forgotten. */
bool symbolizer_process_gone(void *s, uint32_t pid);
/* The profile ids the symbolizer keeps follow p's folds (until symbolizer_off_fold). */
void symbolizer_on_fold(struct symbolizer *s, struct profile *p);
void symbolizer_off_fold(struct symbolizer *s, struct profile *p);

/*
 * Location ids for n raw IPs, leaf first, into locs[n]. Callers' return
 * addresses are moved back one byte so they fall inside the call.
 */
void symbolize_kernel_stack(struct symbolizer *s, struct profile *p, const uint64_t *ips,
			    uint32_t n, uint32_t *locs);
/*
 * --unwind dwarf: the user stack unwound from the registers and stack copy
 * of a sample, then named like any other; returns how many locations went
 * into locs[max] (leaf first), *end how the unwind ended.
 */
uint32_t symbolize_unwound_stack(struct symbolizer *s, struct profile *p, uint32_t tgid,
				 uint32_t gen, const struct unwind_regs *regs, const uint8_t *stack,
				 uint32_t stack_bytes, uint32_t *locs, uint32_t max,
				 enum unwind_end *end);

/* gen: the process's generation when sampled (struct sample_key). */
void symbolize_user_stack(struct symbolizer *s, struct profile *p, uint32_t tgid, uint32_t gen,
			  const uint64_t *ips, uint32_t n, uint32_t *locs);

#endif
