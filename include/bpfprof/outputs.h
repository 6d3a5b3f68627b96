/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/* The run's -o files: opened before sampling (so a bad path fails first), written after it. */
#ifndef BPFPROF_OUTPUTS_H
#define BPFPROF_OUTPUTS_H

#include "bpfprof/cli.h"
#include "bpfprof/output.h"

/* One per -o, open (with --rotate: each tried once, then let go); NULL if one cannot be (said). */
struct output_file *outputs_open(const struct options *o);
/* The profile in each -o's format, each put in place; 0, or -1 if one could not be (said). */
int outputs_write(const struct options *o, struct output_file *out, const struct profile *p);
/* Those not written lose their temporary files; out is freed. */
void outputs_release(const struct options *o, struct output_file *out);

#endif
