/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Inside the symbolizer (symbolize.h): what its files share.
 *   symfile.c     the file cache: open, read, let go, read again; listeners told
 *   table_feed.c  --unwind auto: the unwind tables as a listener, table requests
 *   symbolize.c   addresses -> mapping -> file offset -> frames
 * Below them, called and calling none back: jit.c (JIT frames named from
 * perf maps, jit.h), frame_names.c (frames -> profile functions, frame_names.h).
 */
#ifndef BPFPROF_SYMBOLIZE_PRIVATE_H
#define BPFPROF_SYMBOLIZE_PRIVATE_H

#include <stdbool.h>
#include <stdint.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/symbolize.h"

/* symfile.c --------------------------------------------------------------- */

/* Every process on one kernel maps the same vDSO: ours, read from our memory. */
int load_vdso(struct symfile *f);
void symfile_free(struct symfile *f);
/* The cache's files, their indexes and the vDSO, freed. */
void symfiles_release(struct symbolizer *s);
/* Once a drain: files no known process has mapped for a while let their symbols go. */
void release_unmapped_files(struct symbolizer *s);
/*
 * The file a mapping names, opened the first time (listeners told), else
 * found; NULL when it cannot be had.
 */
struct symfile *get_file(struct symbolizer *s, uint32_t tgid, struct proc_map *m);
/* Opens the files of every mapping of p's current image (a process seen at start). */
void open_files_of(struct symbolizer *s, struct proc *p);
/* Reads the file's symbols, debug info and CFI (once), then lets its fd go. */
void load_symfile(struct symbolizer *s, struct symfile *f);
/* The file of the mapping through /proc/PID/map_files; negative errno if none. */
int open_map_files(const struct procs *ps, uint32_t tgid, const struct proc_map *m);
/* The file the process mapped, as it sees it (map_files, else inside its root). */
int open_in_process(const struct procs *ps, uint32_t tgid, const struct proc_map *m);
/* The mapping's build ID in hex into hex[2 * sizeof(m->build_id) + 1] ("" if none). */
void build_id_hex(const struct proc_map *m, char *hex);
/* f's separate debug file, as process tgid sees it, else in our root; f->debug_path set. */
int find_debug_file(const struct procs *ps, uint32_t tgid, struct symfile *f,
		    const struct debuginfo_elf *bin);
/* Every listener told of f (opened, or copy). */
void tell_opened(struct symbolizer *s, const struct opened_file *f);
const char *process_root(const struct procs *ps, uint32_t tgid, char *root, size_t size);
void tell_copy(struct symbolizer *s, uint32_t tgid, const struct proc_map *m);

#endif
