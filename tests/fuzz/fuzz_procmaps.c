// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * /proc/PID/maps text: the executable mappings, sorted, each a real range;
 * their paths, as frames nothing names show them ([file+0xoffset]), must
 * make valid folded lines.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/procs.h"
#include "fuzz.h"

int fuzz_procmaps(const uint8_t *data, size_t size)
{
	char *text = fuzz_cstring(data, size);
	struct proc_map *maps = NULL;
	size_t nr = 0, i;
	int err = procmaps_parse(text, &maps, &nr);

	FUZZ_CHECK(err == 0 || err == -EINVAL);
	if (err) {
		free(text);
		return 0;
	}
	FUZZ_CHECK(!nr || maps);
	for (i = 0; i < nr; i++) {
		const struct proc_map *m = &maps[i];
		size_t len = strlen(m->path);

		FUZZ_CHECK(m->start < m->end);
		FUZZ_CHECK(!i || maps[i - 1].start <= m->start);
		FUZZ_CHECK(m->file == -1);
		FUZZ_CHECK(!memchr(m->path, '\n', len));
		if (i < 16) {
			struct fuzz_loc loc = { { NULL }, 0, FRAME_USER };

			fuzz_fold("prog", m->path, &loc, 1);
		}
	}
	procmaps_free(maps, nr);
	free(text);
	return 0;
}
