/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * For the runtimes' merge tests (test_merge_*.c): a recorded sample's
 * native frames and runtime frames made into a profile's locations, and a
 * merged stack shown as a folded line shows it.
 */
#ifndef BPFPROF_RUNTIME_STACKS_H
#define BPFPROF_RUNTIME_STACKS_H

#include <stdint.h>

#include "bpfprof/profile.h"

/* A mapping of file (a path) in a process: bytes at file offset offset from start, len of them. */
uint32_t rs_mapping(struct profile *p, const char *file, uint64_t start, uint64_t offset,
		    uint64_t len);
/*
 * A native frame at address of mapping: named by the functions after it,
 * outermost first (later ones inlined into it), NULL-ended; unnamed (a
 * stripped file's) when the first is NULL.
 */
uint32_t rs_native(struct profile *p, uint32_t mapping, uint64_t address, ...);
/*
 * A runtime's frame as its merge makes one: function name of file (NULL: a
 * C method of none) starting at first, at line; kind FRAME_INTERP + RUNTIME_PYTHON,
 * FRAME_INTERP + RUNTIME_LUAJIT or FRAME_INTERP + RUNTIME_RUBY.
 */
uint32_t rs_runtime(struct profile *p, enum frame_kind kind, const char *name, const char *file,
		    uint32_t first, uint32_t line);
/* frames[0..n) (leaf first) of a thread named comm: a folded line without its count (free it). */
char *rs_folded(const struct profile *p, const char *comm, const uint32_t *frames, uint32_t n);

#endif
