// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* What every runtime's naming shares (interp_names.h). */
#include <string.h>

#include "bpfprof/interp_names.h"
#include "bpfprof/profile.h"
#include "bpfprof/runtime_info.h"
#include "bpfprof/util.h"

uint32_t interp_function(struct profile *p, const char *name, const char *file, uint32_t first)
{
	struct strbuf system;
	uint32_t function;

	if (!file)
		return profile_function_at(p, profile_string(p, name), profile_string(p, name), 0, 0);
	strbuf_init(&system);
	interp_frame_name(&system, name, file, first);
	function = profile_function_at(p, profile_string(p, name), profile_string(p, system.buf),
				       profile_string(p, file), first);
	strbuf_release(&system);
	return function;
}

uint32_t interp_location(struct profile *p, uint32_t kind, uint32_t function, uint32_t line)
{
	struct prof_line l = { function, line };
	uint64_t address = 1ull << 63 | (uint64_t)kind << 56 | (uint64_t)function << 24 |
			   (line & 0xffffff);
	uint32_t loc = profile_location_find(p, 0, address);

	return loc != ITAB_NONE ? loc : profile_location_add(p, 0, address, FRAME_INTERP + kind, &l, 1);
}

void interp_frame_name(struct strbuf *sb, const char *name, const char *file, uint32_t first)
{
	strbuf_addf(sb, "%s (%s:%u)", name, interp_short_file(file), first);
}

/* A file a runtime names for its folder (runtime_info.folder_files), as a package's. */
static bool stands_for_folder(const char *name)
{
	const char *const *f;
	uint32_t i;

	for (i = 0; i < runtime_info_count(); i++)
		for (f = runtime_info_at(i)->folder_files; f && *f; f++)
			if (!strcmp(name, *f))
				return true;
	return false;
}

const char *interp_short_file(const char *path)
{
	const char *name = strrchr(path, '/'), *dir;

	if (!name)
		return path;
	name++;
	if (!stands_for_folder(name))
		return name;
	/* Back over the slash (or slashes) before name, then over the folder's name. */
	for (dir = name - 1; dir > path && dir[-1] == '/'; dir--)
		;
	if (dir == path)
		return name;
	while (dir > path && dir[-1] != '/')
		dir--;
	return dir;
}
