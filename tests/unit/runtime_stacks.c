// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Recorded samples made into a profile's locations, for the merge tests (runtime_stacks.h). */
#include <stdarg.h>
#include <string.h>

#include "bpfprof/luajit_frames.h"
#include "bpfprof/python_code.h"
#include "bpfprof/ruby_frames.h"
#include "runtime_stacks.h"

uint32_t rs_mapping(struct profile *p, const char *file, uint64_t start, uint64_t offset,
		    uint64_t len)
{
	struct prof_mapping m = {
		.start = start, .limit = start + len, .offset = offset,
		.file = profile_string(p, file), .pid = 4242,
	};

	return profile_mapping(p, &m);
}

uint32_t rs_native(struct profile *p, uint32_t mapping, uint64_t address, ...)
{
	struct prof_line lines[8];
	const char *names[8], *name;
	uint32_t n = 0, i, loc;
	va_list ap;

	va_start(ap, address);
	while ((name = va_arg(ap, const char *)) && n < 8)
		names[n++] = name;
	va_end(ap);
	/* Lines are innermost first. */
	for (i = 0; i < n; i++) {
		uint32_t s = profile_string(p, names[n - 1 - i]);

		lines[i].function = profile_function(p, s, s, 0);
		lines[i].line = 0;
	}
	loc = profile_location_find(p, mapping, address);
	if (loc == ITAB_NONE)
		loc = profile_location_add(p, mapping, address, FRAME_USER, lines, n);
	return loc;
}

uint32_t rs_runtime(struct profile *p, enum frame_kind kind, const char *name, const char *file,
		    uint32_t first, uint32_t line)
{
	return interp_location(p, kind - FRAME_INTERP, interp_function(p, name, file, first), line);
}

char *rs_folded(const struct profile *p, const char *comm, const uint32_t *frames, uint32_t n)
{
	struct strbuf line;
	uint32_t i, j, nlines;

	strbuf_init(&line);
	strbuf_addstr(&line, comm);
	for (i = n; i-- > 0;) {
		const struct prof_location *l = &p->locations[frames[i]];

		/* As the folded writer: the outermost line first, inlined ones marked. */
		nlines = l->nlines ? l->nlines : 1;
		for (j = nlines; j-- > 0;) {
			strbuf_addch(&line, ';');
			profile_frame_name(p, frames[i], j, &line);
			strbuf_addstr(&line, j + 1 < nlines ? "_[i]" : frame_kind_suffix(l->kind));
		}
	}
	return strbuf_detach(&line);
}
