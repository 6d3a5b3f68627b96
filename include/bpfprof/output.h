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

enum output_format {
	FORMAT_FOLDED,
	FORMAT_PPROF,
	FORMAT_CALLGRIND,
	FORMAT_SVG,
	FORMAT_OTLP,
	FORMAT_COUNT
};

struct write_options {
	bool per_pid;		/* folded, svg: "comm-PID" as the root frame */
	/* svg: a differential flame graph against this profile (bpfprof diff); NULL: none */
	const struct profile *before;
	const char *app_name;	/* otlp: the service's name (--app-name); NULL: the host's */
	bool gzip;		/* otlp: gzip-compressed (an HTTP body), not the bare protobuf */
};

/* FlameGraph's difffolded form: "stack BEFORE AFTER" per stack of either, sorted. */
int write_difffolded(FILE *out, const struct profile *before, const struct profile *after);

typedef int writer_fn(FILE *out, const struct profile *p, const struct write_options *o);

/* "folded", "pprof", ...; parse returns -1 for an unknown name. */
const char *format_name(enum output_format f);
int format_parse(const char *name);
/* The format a file name implies (.pb.gz, .pprof, .otlp.pb, .svg, callgrind.out*), or -1. */
int format_of_path(const char *path);
writer_fn *format_writer(enum output_format f);
/* The one entry for writing: profile p in format f to out; 0 or -errno. */
int write_profile(FILE *out, const struct profile *p, enum output_format f,
		  const struct write_options *o);
bool format_is_binary(enum output_format f);

/*
 * Collapsed stacks for flamegraph.pl: one line per distinct stack,
 * "comm;user_root;...;user_leaf;kernel_root_[k];...;kernel_leaf_[k] COUNT",
 * sorted, no ';' or control character inside a frame.
 */
int write_folded(FILE *out, const struct profile *p, const struct write_options *o);

/*
 * pprof: gzip-compressed protobuf (google/pprof profile.proto), streamed:
 * each top-level field is encoded and compressed as it is written.
 */
int write_pprof(FILE *out, const struct profile *p, const struct write_options *o);

/*
 * OpenTelemetry's OTLP profiles: an ExportProfilesServiceRequest
 * (profiles v1development), a profile per sample type, built in memory.
 */
int write_otlp(FILE *out, const struct profile *p, const struct write_options *o);

/* callgrind: for callgrind_annotate and kcachegrind; self and inclusive costs. */
int write_callgrind(FILE *out, const struct profile *p, const struct write_options *o);

/* A self-contained interactive SVG flame graph: hover, click to zoom, search. */
int write_svg(FILE *out, const struct profile *p, const struct write_options *o);

struct output_file {
	char *path;		/* the target, or NULL for stdout */
	char *tmp_path;		/* .NAME.RANDOM beside it, 0644, the sudo user's */
	FILE *f;
	bool in_place;		/* a device or FIFO, written where it is */
	struct output_file *next;	/* temporary files not yet in place */
};

/*
 * Opens the target now, so an unwritable path fails before sampling. The
 * output_file must stay where it is until output_commit or output_abort.
 */
int output_open(struct output_file *o, const char *path);
/* Flushes and renames into place; 0 or -errno. */
int output_commit(struct output_file *o);
/* Removes the temporary file. */
void output_abort(struct output_file *o);
/*
 * p in format f into the opened o, put in place; on failure one line says
 * why (of name, the path as given; NULL: stdout) and what to do, o is
 * aborted, and the negative errno returned.
 */
int output_write(struct output_file *o, const char *name, const struct profile *p,
		 enum output_format f, const struct write_options *wo);
/* Removes every temporary file not yet in place; async-signal-safe. */
void output_remove_temps(void);

#endif
