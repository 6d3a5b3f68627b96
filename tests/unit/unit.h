/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* A tiny TAP producer for the unit tests: CHECK prints one "ok"/"not ok". */
#ifndef BPFPROF_UNIT_H
#define BPFPROF_UNIT_H

#include <stdbool.h>
#include <stdio.h>
#include <unistd.h>

extern int unit_count, unit_failed, unit_skipped;
extern const char *unit_fixtures;	/* folder of built fixture files */

bool unit_check(bool ok, const char *file, int line, const char *expr, const char *fmt, ...)
	__attribute__((format(printf, 5, 6)));

/* Checks got == want; on a difference shows both as TAP diagnostics. */
bool expect_text(const char *got, const char *want, const char *what);

#define CHECK(cond, ...) unit_check(!!(cond), __FILE__, __LINE__, #cond, __VA_ARGS__)

/* One check not made, counted as TAP "ok N - ... # SKIP why". */
void unit_skip(const char *why, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Skips the check "what" unless root, which must be able to: the caller tried and failed. */
#define CHECK_ROOT(cond, ...) \
	(geteuid() != 0 && !(cond) ? (unit_skip("needs root", __VA_ARGS__), false) : CHECK(cond, __VA_ARGS__))

#include "bpfprof/output.h"

/* The small hand-built profile the writers' tests share (test_model.c). */
void unit_build_profile(struct profile *p);
/* What writer w writes for p, as a string (caller frees); *err its return value. */
char *unit_write(writer_fn *w, const struct profile *p, bool per_pid, int *err);
/* Runs cmd with input on its stdin; returns its stdout (caller frees) or NULL. */
char *unit_pipe(const char *cmd, const void *input, size_t len);

/* Each test file defines one or more of these; main.c lists them. */
typedef void unit_test_fn(void);

#endif
