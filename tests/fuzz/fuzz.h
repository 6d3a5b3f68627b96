/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Fuzz targets for the readers of untrusted input: one function per reader
 * that takes any bytes, runs the reader on them, checks what it returns
 * (invariants, lookups, and the names written as the folded writer writes
 * them), and fails through FUZZ_CHECK.
 *
 * The same functions are linked into libFuzzer binaries (tests/fuzz/main.c,
 * make fuzz), where a failed check aborts, and into the unit tests
 * (tests/unit/test_fuzz_regressions.c), which feed them every saved input
 * and count the failures instead.
 */
#ifndef BPFPROF_FUZZ_H
#define BPFPROF_FUZZ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/profile.h"

/* Every target, by name: fuzz_NAME() in tests/fuzz/fuzz_NAME.c. */
#define FUZZ_TARGETS(X) X(elf) X(dwarf) X(procmaps) X(kallsyms) X(perfmap) X(sideband) X(cfi) X(python) \
	X(profile) X(luajit_file) X(luajit_proto) X(ruby_file) X(python_offsets) \
	X(java_file) X(java_names) X(php_file)

typedef int fuzz_target_fn(const uint8_t *data, size_t size);
#define FUZZ_DECLARE(name) fuzz_target_fn fuzz_##name;
FUZZ_TARGETS(FUZZ_DECLARE)
#undef FUZZ_DECLARE

/* Abort at the first failed check (libFuzzer), or count them (unit tests). */
extern bool fuzz_abort_on_failure;
extern unsigned fuzz_failures;

void fuzz_check_failed(const char *file, int line, const char *expr);
#define FUZZ_CHECK(cond)                                                                           \
	do {                                                                                       \
		if (!(cond))                                                                       \
			fuzz_check_failed(__FILE__, __LINE__, #cond);                              \
	} while (0)

/* An anonymous in-memory file holding data, at offset 0; -1 on failure. */
int fuzz_memfd(const uint8_t *data, size_t size);
/* fuzz_memfd(), for a reader that takes a file: a failure is a failed check. */
int fuzz_input_file(const uint8_t *data, size_t size);
/* A NUL-terminated copy of data, for readers that take a C string. */
char *fuzz_cstring(const uint8_t *data, size_t size);

/*
 * A minimal x86-64 shared object around one CFI section (.eh_frame at
 * FUZZ_CFI_SECTION_ADDR, or .debug_frame), whose one executable segment
 * maps FUZZ_CFI_TEXT_SIZE bytes from vaddr FUZZ_CFI_TEXT_VADDR to file
 * offset FUZZ_CFI_TEXT_OFFSET (fuzz_cfi.c). Caller frees; *size its bytes.
 */
#define FUZZ_CFI_SECTION_ADDR 0x8000
#define FUZZ_CFI_TEXT_VADDR 0x10000
#define FUZZ_CFI_TEXT_OFFSET 0x2000
#define FUZZ_CFI_TEXT_SIZE 0x40000000
void *fuzz_cfi_elf(const uint8_t *cfi, size_t len, bool debug_frame, size_t *size);

/*
 * A process's memory: size bytes from FUZZ_MEMORY_BASE. fuzz_memory_read()
 * reads it as a runtime reads a process (interp_read_fn; ctx: a struct
 * fuzz_memory): 0, or -EFAULT for bytes outside.
 */
#define FUZZ_MEMORY_BASE 0x10000
struct fuzz_memory {
	const uint8_t *data;
	size_t size;
};
int fuzz_memory_read(void *ctx, uint64_t addr, void *buf, size_t len);

/* Whether len bytes at p are all zero: what a reader says when it says nothing. */
bool fuzz_all_zero(const void *p, size_t len);
/* Whether s[0..len) has a control character (below 0x20, or DEL). */
bool fuzz_has_control(const char *s, size_t len);
/*
 * Whether str is printable UTF-8: no control character, and valid (no
 * overlong form, surrogate or code point past U+10FFFF).
 */
bool fuzz_clean_text(const char *str);

/* Consumes bytes from the end of an input, for choices that must not disturb its head. */
uint64_t fuzz_take(const uint8_t **data, size_t *size, unsigned bytes);

/* A location as the symbolizer makes one: its names innermost first (none: unnamed). */
#define FUZZ_MAX_CHAIN 16
struct fuzz_loc {
	const char *names[FUZZ_MAX_CHAIN];
	unsigned n;
	enum frame_kind kind;
};

#define FUZZ_FOLD_MAX 12

/*
 * Builds a profile of thread comm in a mapping of map_path with the
 * locations (leaf first; FUZZ_FOLD_MAX of them at most, spread over the
 * array), a sample for every depth from 1 to n, writes it
 * as folded (with and without --per-pid) and checks every line: the rules
 * of tests/check_folded.awk, one line per depth with exactly the frames
 * that depth has, and the total. Names go through demangle() as the
 * symbolizer's do.
 */
void fuzz_fold(const char *comm, const char *map_path, const struct fuzz_loc *locs, size_t n);

/*
 * What is wrong with folded text by the rules of tests/check_folded.awk,
 * or NULL if nothing is; *total is then the sum of the counts and *lines
 * the number of lines.
 */
const char *fuzz_folded_problem(const char *text, size_t len, uint64_t *total, size_t *lines);

#endif
