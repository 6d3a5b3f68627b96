/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Names of a HotSpot JVM's code, read from its memory (src/runtime/
 * java_names.c) with the offsets its file gave (java_file.h, a java_vm
 * completed by java_vm_read_offsets, vm->o.known): a Method's class,
 * name, source file and lines; the methods a compiled frame's pc stands
 * for, inlined ones included; a stub's name.
 *
 * Pure: no I/O but through the read callback, never prints, nothing
 * cached (the caller caches, by the ids java_frames.h records: a Method*
 * with its ConstMethod, an nmethod with its compile id). Every read is
 * bounded: names at JAVA_NAME_MAX, scopes at JAVA_MAX_SCOPES, PcDescs
 * scanned at JAVA_MAX_PC_DESCS. Errors are negative errnos: -EINVAL for
 * memory that is not what it should be (freed, reused, corrupt).
 */
#ifndef BPFPROF_JAVA_NAMES_H
#define BPFPROF_JAVA_NAMES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/java_file.h"

#define JAVA_NAME_MAX 1024		/* a name's bytes with its NUL; longer ones are cut */
#define JAVA_LINES_MAX 4096		/* a method's line table's bytes kept; more are cut */
#define JAVA_MAX_SCOPES 64		/* inlined methods at one pc */
#define JAVA_MAX_PC_DESCS (1u << 16)	/* PcDescs of one nmethod looked at */

/* A Java method, as java_method_read finds it. */
struct java_method {
	char klass[JAVA_NAME_MAX];	/* as Java shows it: java.util.zip.Deflater, Outer$Inner,
					   Foo$$Lambda/0x0000000801001200 (hidden) */
	char name[JAVA_NAME_MAX];	/* deflate, <init>, lambda$main$0 */
	char signature[JAVA_NAME_MAX];	/* (I[B)V */
	char file[JAVA_NAME_MAX];	/* Deflater.java; "" if the class says none */
	bool native;			/* a native method: no bytecodes, no lines */
	uint64_t const_method;		/* its ConstMethod (java_frames.h's check: >> 3) */
	uint16_t code_size;		/* bytecodes */
	uint16_t lines_len;		/* bytes of lines; 0: no line table */
	bool lines_cut;			/* the table was longer than JAVA_LINES_MAX */
	uint8_t lines[JAVA_LINES_MAX];	/* the compressed line number table, as HotSpot keeps it */
};

/*
 * The Method at address method: 0 and *m filled; -EINVAL if it does not
 * read as a Method of this JVM; another negative errno from read.
 */
int java_method_read(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t method,
		     struct java_method *m);

/*
 * The source line of bytecode index bci in m (pure, no reads): as
 * HotSpot's Method::line_number_from_bci, the line of the table's entry
 * at bci, else of the closest one before it; 0 if there is none (a native
 * method, no table, bci JAVA_BCI_NONE or past the code).
 */
uint32_t java_method_line(const struct java_vm *vm, const struct java_method *m, uint32_t bci);

/* One method of a compiled frame: a Method* and the bytecode index in it (JAVA_BCI_NONE: none). */
struct java_scope {
	uint64_t method;
	uint32_t bci;
};

/*
 * The methods compiled code stands for at a pc: the nmethod (its CodeBlob)
 * at address nmethod, pc_offset the pc less its code's begin, compile_id
 * the one the sample recorded. scopes[] filled innermost first (the
 * method whose code the pc is in, then each caller it was inlined into,
 * the nmethod's own method last); returns how many (1..max), from the
 * PcDesc at pc_offset, else the nearest following one (HotSpot's
 * pc_desc_near); a native method's wrapper, or a pc with no debug
 * information, gives the nmethod's method alone with bci JAVA_BCI_NONE.
 * -ESTALE: the nmethod's compile id is not compile_id (freed, or its
 * memory reused since the sample); -EINVAL: unreadable or inconsistent
 * debug information; another negative errno from read.
 */
int java_compiled_scopes(const struct java_vm *vm, interp_read_fn *read, void *ctx,
			 uint64_t nmethod, uint32_t pc_offset, uint32_t compile_id,
			 struct java_scope *scopes, size_t max);

/*
 * A code blob's name (CodeBlob::_name: "StubRoutines (1)", "Interpreter",
 * "nmethod", "I2C/C2I adapters"...) into buf (size bytes, at most
 * JAVA_NAME_MAX kept): 0, or a negative errno.
 */
int java_blob_name(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t blob,
		   char *buf, size_t size);

/* A Symbol's bytes into buf as a string (cut to size - 1): its length, or a negative errno. */
int java_symbol_read(const struct java_vm *vm, interp_read_fn *read, void *ctx, uint64_t symbol,
		     char *buf, size_t size);

#endif
