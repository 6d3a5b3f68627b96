// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "bpfprof/demangle.h"

char *demangle(const char *name)
{
	char *out;

	/* Most names are plain C: no call at all for them. */
	if (name[0] != '_' || (name[1] != 'Z' && name[1] != 'R'))
		return NULL;
	/*
	 * Rust first: a legacy Rust name is also valid Itanium, which would
	 * keep the hash as a last "::h0123..." component. rust_demangle()
	 * takes only those whose last component is such a hash, and v0 names.
	 */
	out = rust_demangle(name, DMGL_PARAMS | DMGL_ANSI);
	if (!out && name[1] == 'Z')
		out = cplus_demangle_v3(name, DMGL_PARAMS | DMGL_ANSI | DMGL_RET_DROP);
	/* An empty result would leave the frame without a name. */
	if (out && !*out) {
		free(out);
		out = NULL;
	}
	return out;
}
