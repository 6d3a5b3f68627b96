/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Writers: each reads only the profile and writes one format to a stream;
 * 0, or a negative errno when the stream failed. And the output file that
 * never shows a torn profile: written under a temporary name in the same
 * directory, renamed over the target once complete.
 */
#ifndef BPFPROF_OUTPUT_H
#define BPFPROF_OUTPUT_H

#include <stdbool.h>
#include <stdio.h>

#include "bpfprof/profile.h"

struct write_options {
	bool per_pid;		/* folded: "comm-PID" as the root frame */
};

/*
 * Collapsed stacks for flamegraph.pl: one line per distinct stack,
 * "comm;user_root;...;user_leaf;kernel_root_[k];...;kernel_leaf_[k] COUNT",
 * sorted, no ';' or control character inside a frame.
 */
int write_folded(FILE *out, const struct profile *p, const struct write_options *o);

struct output_file {
	char *path;		/* the target, or NULL for stdout */
	char *tmp_path;
	FILE *f;
};

/* Opens the target now, so an unwritable path fails before sampling. */
int output_open(struct output_file *o, const char *path);
/* Flushes and renames into place; 0 or -errno. */
int output_commit(struct output_file *o);
/* Removes the temporary file. */
void output_abort(struct output_file *o);

#endif
