/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * bpfprof diff BEFORE AFTER [-o FILE]...: two profiles (folded or pprof,
 * each told by its bytes) compared: FILE.svg a differential flame graph
 * (widths from AFTER; red grew, blue shrank, by share), FILE.folded (or
 * stdout) FlameGraph's difffolded form, "stack BEFORE AFTER".
 */
#ifndef BPFPROF_DIFF_H
#define BPFPROF_DIFF_H

/* argv[0] is "diff"; the exit code. */
int diff_main(int argc, char **argv);

/* Its usage line, as bpfprof --help lists it too. */
extern const char diff_synopsis[];

#endif
