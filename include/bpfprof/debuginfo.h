/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Separate debug files, found as GDB finds them: first by the binary's GNU
 * build ID under DEBUG_DIR/.build-id/xx/rest.debug (the candidate's own
 * build ID must be the same), then by its .gnu_debuglink name next to the
 * binary, in .debug/ beside it, and in DEBUG_DIR/<the binary's dir>/ (the
 * candidate's CRC-32 must be the one the link records). A candidate that
 * fails its check is skipped, never used.
 *
 * Readers: they never print, they return an fd or 0, or a negative errno.
 */
#ifndef BPFPROF_DEBUGINFO_H
#define BPFPROF_DEBUGINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "bpfprof/elf.h"

#define DEBUGINFO_DEFAULT_DIR "/usr/lib/debug"
/* A debug file found by its CRC is read whole to check it: not past this. */
#define DEBUGINFO_MAX_FILE_BYTES (4ull << 30)

/* What an ELF file says of its debug information. */
struct debuginfo_elf {
	char build_id[2 * BUILD_ID_MAX + 1];	/* hex, "" if none */
	char *link_name;	/* .gnu_debuglink's file name (no '/'), or NULL; owned */
	uint32_t link_crc;	/* the CRC-32 the link records */
	bool has_dwarf;		/* a .debug_info with contents */
};

int debuginfo_elf_read(struct debuginfo_elf *e, int fd);
void debuginfo_elf_release(struct debuginfo_elf *e);

/* The CRC-32 of a whole file, as .gnu_debuglink records it (zlib's); -EFBIG past the limit. */
int debuginfo_file_crc(int fd, uint32_t *crc);

/* Where to look; all-zero means ours: "/" and DEBUGINFO_DEFAULT_DIR. */
struct debuginfo_dirs {
	/*
	 * Every path is resolved inside this directory, as the process whose
	 * root it is sees it (absolute symlinks included), e.g. "/proc/42/root".
	 */
	const char *root;
	const char *debug_dir;	/* global debug directory inside root */
};

/*
 * Opens the debug file of the binary that is at path (inside dirs->root)
 * and says bin of itself. Returns an fd, -ENOENT when there is no
 * candidate, -ESTALE when every candidate failed its check. *found (if
 * found is not NULL) is then the path used, inside the root; the caller's
 * to free.
 */
int debuginfo_find(const struct debuginfo_dirs *dirs, const char *path,
		   const struct debuginfo_elf *bin, char **found);

#endif
