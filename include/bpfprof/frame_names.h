/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Frames named by whatever names them (a file's symbols and DWARF, a JIT's
 * perf map) made profile functions and locations: the one step every
 * namer ends in (src/symbols/frame_names.c). Apart from the symbolizer so
 * that the namers it calls (jit.c) need not call back into it.
 */
#ifndef BPFPROF_FRAME_NAMES_H
#define BPFPROF_FRAME_NAMES_H

#include <stdint.h>

#include "bpfprof/profile.h"

/* Inlined calls named per address at most. */
#define MAX_INLINE_DEPTH 16

/* What names one frame; strings borrowed from the file's tables. */
struct sym_frame {
	const char *name;	/* as the symbol table spells it (mangled) */
	const char *file;	/* source file, or NULL */
	uint32_t line;		/* 0 when unknown */
};

/* A profile function for a symbol: its readable name, the symbol as it is, the source file. */
uint32_t frame_function(struct profile *p, const struct sym_frame *fr);
/* The location at addr named by frames (innermost first; none: unnamed). */
uint32_t frames_location(struct profile *p, uint32_t mapping, uint64_t addr, enum frame_kind kind,
			 const struct sym_frame *frames, uint16_t n);

#endif
