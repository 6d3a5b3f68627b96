/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * What every runtime's naming shares (src/runtime/interp_names.c): reading
 * a process's memory through a callback, and how a frame shows its file.
 * Pure: no I/O but through the callback, never prints.
 */
#ifndef BPFPROF_INTERP_NAMES_H
#define BPFPROF_INTERP_NAMES_H

#include <stddef.h>
#include <stdint.h>

/* Reads len bytes at addr into buf: 0, or a negative errno. */
typedef int interp_read_fn(void *ctx, uint64_t addr, void *buf, size_t len);

/*
 * A file as a frame shows it: its base name, or for a file a runtime
 * names for its folder (runtime_info.folder_files: a package's) the
 * folder's too ("pkg/FILE"). A suffix of path.
 */
const char *interp_short_file(const char *path);

struct strbuf;

/*
 * How a frame shows an interpreter's function of a file, appended to sb:
 * "name (short file:first)", as folded output, the SVG and a read-back pprof name it.
 */
void interp_frame_name(struct strbuf *sb, const char *name, const char *file, uint32_t first);

struct profile;

/*
 * An interpreter's function in p: name, and with a file (file NULL: a
 * function of no file, a C method) its file and first line. Its system
 * name says where, as the folded name does ("name (FILE:10)"): equal to
 * the name, pprof would take "<module>" for C++ and cut it.
 */
uint32_t interp_function(struct profile *p, const char *name, const char *file, uint32_t first);
/*
 * The location of runtime kind's function at line in p, found or made: in
 * no mapping, at an address no native frame has (the top bit, then the
 * runtime's id, the function and the line).
 */
uint32_t interp_location(struct profile *p, uint32_t kind, uint32_t function, uint32_t line);

#endif
