// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Named frames -> profile functions and locations (frame_names.h). */
#include <stdlib.h>

#include "bpfprof/demangle.h"
#include "bpfprof/frame_names.h"

uint32_t frame_function(struct profile *p, const struct sym_frame *fr)
{
	uint32_t system_name = profile_string(p, fr->name), name = system_name;
	/* Once per new location, so no cache: about 1.5 us for a C++ name. */
	char *readable = demangle(fr->name);

	if (readable) {
		name = profile_string(p, readable);
		free(readable);
	}
	return profile_function(p, name, system_name, fr->file ? profile_string(p, fr->file) : 0);
}

uint32_t frames_location(struct profile *p, uint32_t mapping, uint64_t addr, enum frame_kind kind,
			 const struct sym_frame *frames, uint16_t n)
{
	struct prof_line lines[MAX_INLINE_DEPTH];
	uint16_t i;

	for (i = 0; i < n && i < MAX_INLINE_DEPTH; i++) {
		lines[i].function = frame_function(p, &frames[i]);
		lines[i].line = frames[i].line;
	}
	return profile_location_add(p, mapping, addr, kind, lines, i);
}
