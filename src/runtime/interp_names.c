// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* What every runtime's naming shares (interp_names.h). */
#include <string.h>

#include "bpfprof/interp_names.h"

const char *interp_short_file(const char *path)
{
	const char *name = strrchr(path, '/'), *dir;

	if (!name)
		return path;
	name++;
	if (strcmp(name, "__init__.py") && strcmp(name, "__main__.py"))
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
