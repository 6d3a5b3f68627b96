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

#include <stdbool.h>

#include "bpfprof/python_frames.h"

/*
 * PyASCIIObject.state's bit fields, the same from 3.8 to 3.13 (their
 * DW_AT_data_bit_offset and DW_AT_bit_size in each build): interned 0-1,
 * kind 2-4 (1, 2 or 4 bytes a code point), compact 5, ascii 6; bit 7 is
 * ready in 3.8 to 3.11, statically_allocated in 3.12 and 3.13.
 */
#define PY_UNICODE_KIND_SHIFT 2
#define PY_UNICODE_KIND_MASK 7
#define PY_UNICODE_COMPACT 0x20
#define PY_UNICODE_ASCII 0x40

/* The layout of CPython major.minor (version major << 8 | minor), or NULL if not known. */
const struct py_offsets *python_offsets_known(unsigned version);

/* Whether bpfprof knows where version's _Py_DebugOffsets keep what it reads (3.13, 3.14). */
bool python_offsets_published(unsigned version);

/* Why a file's frames are not read: python_file.unread. */
enum py_unread {
	PY_UNREAD_NONE,
	PY_UNREAD_VERSION,		/* neither the table nor _Py_DebugOffsets describe it */
	PY_UNREAD_BUILD,		/* 32-bit, big-endian, Py_TRACE_REFS, no PyCode_Type */
	PY_UNREAD_FREE_THREADED,	/* its _Py_DebugOffsets say free-threaded */
	PY_UNREAD_DEBUG_OFFSETS,	/* no cookie, another version, offsets outside their structs */
	PY_UNREAD_REACH,		/* offsets past what a frame or code read reaches */
};

/*
 * Whether the ELF file on fd (at path, for its name) holds an interpreter
 * (defines the object _PyRuntime, in .dynsym; in .symtab too for a file
 * whose name or soname says "pythonX.Y"): 1 with *out filled, 0 if not,
 * or a negative errno. The version is the file's Py_Version (3.11 on),
 * else 3.10, 3.9 or 3.8 by the first it exports of Py_NewRef,
 * PyFrame_GetCode and PyCode_NewWithPosOnlyArgs, else the "pythonX.Y" of
 * its soname or name. The layout: the table's for 3.8 to 3.12, the file's own
 * _Py_DebugOffsets (read from the file's _PyRuntime, no process needed)
 * from 3.13 on. out->off.frames is PY_FRAMES_NONE, out->off.version still
 * said and out->unread why, for a version or a build bpfprof does not
 * read: neither in the table nor a _Py_DebugOffsets layout it knows, a
 * 32-bit or big-endian file, a Py_TRACE_REFS build (3.8-3.12), a
 * free-threaded build, _Py_DebugOffsets without the cookie, of another
 * version or with offsets outside their structs, offsets a frame or code
 * read cannot reach.
 */
int python_file_identify(int fd, const char *path, struct python_file *out);

#endif
