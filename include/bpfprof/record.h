/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
#ifndef BPFPROF_RECORD_H
#define BPFPROF_RECORD_H

#include "bpfprof/cli.h"

/* Runs one profiling session; returns the process exit code. */
int record(const struct options *o);

#endif
