/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * cgroup v2 ids -> paths. An id is the inode of the cgroup's directory, so
 * the cgroup v2 mount is walked to find it; a walk is repeated on a miss at
 * most once a second (cgroups come and go).
 */
#ifndef BPFPROF_CGROUPS_H
#define BPFPROF_CGROUPS_H

#include <stdint.h>

#include "bpfprof/intern.h"

struct cgroups {
	char *mount;		/* NULL when no cgroup v2 hierarchy is mounted */
	struct cgroup_entry {
		uint64_t id;
		char *path;	/* relative to the mount, "/" for the root */
	} *entries;
	uint32_t nr, alloc;
	struct itab index;
	uint64_t last_walk_ns;
};

void cgroups_init(struct cgroups *c, const char *mount);
void cgroups_release(struct cgroups *c);
/* The cgroup's path, or NULL if it is not (or no longer) there. */
const char *cgroups_path(struct cgroups *c, uint64_t id);
/* The cgroup v2 mount point from /proc/self/mounts; the caller frees it. */
char *cgroup2_mount(void);

#endif
