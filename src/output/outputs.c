// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>

#include "bpfprof/outputs.h"
#include "bpfprof/rotate.h"
#include "bpfprof/util.h"

/* Opens every output now, so an unwritable one fails before sampling. */
struct output_file *outputs_open(const struct options *o)
{
	struct output_file *out = xcalloc(o->noutputs + 1, sizeof(*out));	/* none with --listen */
	size_t i;
	char *path;
	int err;

	for (i = 0; i < o->noutputs; i++) {
		/* --rotate: each interval's file is opened as it is written; tried once now. */
		path = o->rotate ? rotated_name(o->outputs[i].path, wall_ns()) : NULL;
		err = output_open(&out[i], path ? path : o->outputs[i].path);
		if (!err && path)
			output_abort(&out[i]);
		free(path);
		if (err) {
			while (i-- > 0)
				output_abort(&out[i]);
			free(out);
			return NULL;
		}
	}
	return out;
}

/* Writes the profile in each format and puts each file in place; 0 or -1. */
int outputs_write(const struct options *o, struct output_file *out, const struct profile *p)
{
	struct write_options wo = { .per_pid = o->per_pid, .app_name = o->app_name };
	int rc = 0;
	size_t i;

	for (i = 0; i < o->noutputs; i++)
		if (output_write(&out[i], o->outputs[i].path, p, o->outputs[i].format, &wo))
			rc = -1;
	return rc;
}

void outputs_release(const struct options *o, struct output_file *out)
{
	size_t i;

	/* Outputs already in place are untouched; the rest lose their temporary files. */
	for (i = 0; i < o->noutputs; i++)
		output_abort(&out[i]);
	free(out);
}
