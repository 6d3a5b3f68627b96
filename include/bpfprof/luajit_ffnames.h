/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * The names of a LuaJIT build's fast functions by their ffid, as jit.p
 * names them ("string.format", from jit/vmdef.lua's ffnames). The
 * numbering is the build's own (OpenResty's luajit2 adds functions that
 * shift upstream's), so a vmdef.lua is taken only if the build's own
 * library tables (lj_lib_init_*, in its read-only data) give each of its
 * ffids the same short name. A reader: never prints.
 */
#ifndef BPFPROF_LUAJIT_FFNAMES_H
#define BPFPROF_LUAJIT_FFNAMES_H

#include <stddef.h>
#include <stdint.h>

struct luajit_ffnames {
	char **names;		/* by ffid; NULL: none */
	uint32_t n;
	char *source;		/* the vmdef.lua they were read from (luajit_ffnames_read) */
};

/*
 * The fast functions' names of the LuaJIT in the ELF file on fd (at path,
 * as the process mapping it names it): from the jit/vmdef.lua installed
 * beside it (in PREFIX/share/luajit-2.1... for a file under PREFIX/bin or
 * PREFIX/lib), else from the one the build's own module path names,
 * whichever matches the build. Both are looked for first under root, the
 * process's root as reached from here ("/proc/PID/root": a container's
 * files are its own), then in ours (the match makes one found there as
 * safe); root NULL: ours only. 0, or a negative errno (-ENOENT: no
 * vmdef.lua found, -ESRCH: none matches the build).
 */
int luajit_ffnames_read(int fd, const char *root, const char *path, struct luajit_ffnames *out);

/* Checks names (vmdef's ffnames, by ffid) against the build's library tables in data. */
int luajit_ffnames_match(const uint8_t *data, size_t len, char *const *names, uint32_t n);

/* Parses vmdef.lua's text: its ffnames into *out. 0, or -EINVAL. */
int luajit_ffnames_parse_vmdef(const char *text, struct luajit_ffnames *out);

/* ffid's name, or NULL. */
const char *luajit_ffname(const struct luajit_ffnames *f, uint32_t ffid);

void luajit_ffnames_release(struct luajit_ffnames *f);

#endif
