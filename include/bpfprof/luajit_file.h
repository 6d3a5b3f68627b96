/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which ELF files hold a LuaJIT 2.1 VM, and what the BPF program's Lua walk
 * needs to know of each (struct luajit_file, luajit_frames.h), found in the
 * file's own code: Debian's builds are stripped and LuaJIT exports no
 * layout, so the VM's bounds come from the FDE its build tool emits in
 * .eh_frame, and the global state's offsets from the instructions of the
 * exported functions that use them. Every value is confirmed by another
 * instruction (and by a small table for the builds Debian 12 ships); a
 * build that does not confirm them is LuaJIT bpfprof cannot read.
 * A reader: never prints, returns 1, 0 or a negative errno.
 */
#ifndef BPFPROF_LUAJIT_FILE_H
#define BPFPROF_LUAJIT_FILE_H

#include "bpfprof/luajit_frames.h"

/*
 * Whether the ELF file on fd (at path, named in debug messages only) holds
 * a LuaJIT VM: it exports luaJIT_setmode (OpenResty's if it also exports
 * lua_getexdata). 1: it does, *out filled; out->known 0 then for a LuaJIT
 * whose layout bpfprof cannot read (not x86-64 GC64, or a value not found
 * or not confirmed), with only out->flavour said and everything else 0.
 * 0: not LuaJIT (or not ELF); a negative errno: the file could not be read.
 * Never prints (but debug lines, saying why a LuaJIT is not known).
 */
int luajit_file_identify(int fd, const char *path, struct luajit_file *out);

#endif
