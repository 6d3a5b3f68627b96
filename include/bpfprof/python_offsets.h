/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Which CPython an ELF file holds, and where its structures keep what the
 * frame walk and the naming read (struct py_offsets): from a table of the
 * versions bpfprof knows, checked against each build's DWARF in a test,
 * or, from 3.13 on, from the offsets the interpreter publishes at the start
 * of _PyRuntime (_Py_DebugOffsets), read from the file's initialized data.
 * A reader: never prints, returns 1, 0 or a negative errno.
 */
#ifndef BPFPROF_PYTHON_OFFSETS_H
#define BPFPROF_PYTHON_OFFSETS_H

#include "bpfprof/py_frames.h"

/*
 * PyASCIIObject.state's bit fields, the same from 3.10 to 3.13: interned
 * (2 bits), kind (3: 1, 2 or 4 bytes a code point), compact, ascii.
 */
#define PY_UNICODE_KIND_SHIFT 2
#define PY_UNICODE_KIND_MASK 7
#define PY_UNICODE_COMPACT 0x20
#define PY_UNICODE_ASCII 0x40

/* The layout of CPython major.minor (version major << 8 | minor), or NULL if not known. */
const struct py_offsets *python_offsets_known(unsigned version);

/*
 * Whether the ELF file on fd (at path, for its name) holds an interpreter
 * (exports _PyRuntime): 1 with *out filled (out->off.frames PY_FRAMES_NONE
 * for a version not read, out->off.version still said), 0 if not, or a
 * negative errno. The version is the file's Py_Version (3.11 on), else the
 * "pythonX.Y" in its name or soname.
 */
int python_file_identify(int fd, const char *path, struct python_file *out);

#endif
