// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <zlib.h>

#include "bpfprof/debuginfo.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"

/* What the binary says ------------------------------------------------- */

/*
 * .gnu_debuglink: a NUL-terminated file name, padding to 4 bytes, then
 * the CRC-32 in the file's byte order. Raw bytes: libelf does not convert.
 */
static void read_debuglink(struct debuginfo_elf *e, Elf_Scn *scn, bool big_endian)
{
	/* A file name (NAME_MAX), padding and the CRC: anything longer is no link. */
	Elf_Data *data = elf_section_data(scn, 4096 + 8);
	const unsigned char *p, *c;
	size_t len, crc_off;

	if (!data || !data->d_buf)
		return;
	p = data->d_buf;
	len = strnlen((const char *)p, data->d_size);
	crc_off = (len + 4) & ~(size_t)3;
	if (!len || crc_off + 4 > data->d_size)
		return;
	/* A file name, as objcopy writes it: no directory, so no way out of where it is looked for. */
	if (memchr(p, '/', len) || !strcmp((const char *)p, ".") || !strcmp((const char *)p, ".."))
		return;
	c = p + crc_off;
	e->link_name = xstrndup((const char *)p, len);
	e->link_crc = get_uint(c, 4, big_endian);
}

int debuginfo_elf_read(struct debuginfo_elf *e, int fd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	bool big_endian;
	const char *ident;
	Elf *elf;
	int err = 0;

	memset(e, 0, sizeof(*e));
	elf = elf_open_fd(fd);
	if (!elf)
		return -ENOEXEC;
	ident = elf_getident(elf, NULL);
	if (elf_kind(elf) != ELF_K_ELF || !ident || elf_getshdrstrndx(elf, &shstrndx)) {
		err = -ENOEXEC;
		goto out;
	}
	big_endian = ident[EI_DATA] == ELFDATA2MSB;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_NOTE && !e->build_id[0]) {
			elf_note_build_id(scn, e->build_id);
			continue;
		}
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (!name || sh.sh_type == SHT_NOBITS)
			continue;
		if (!strcmp(name, ".gnu_debuglink") && !e->link_name)
			read_debuglink(e, scn, big_endian);
		else if ((!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info")) && sh.sh_size)
			e->has_dwarf = true;
	}
out:
	elf_end(elf);
	return err;
}

void debuginfo_elf_release(struct debuginfo_elf *e)
{
	free(e->link_name);
	memset(e, 0, sizeof(*e));
}

/*
 * Read, not mapped (a file truncated under us would fault), and only up
 * to DEBUGINFO_MAX_FILE_BYTES: /proc/kcore is a regular file too.
 */
int debuginfo_file_crc(int fd, uint32_t *crc)
{
	enum { CHUNK = 256 * 1024 };
	unsigned char *buf;
	uint64_t done = 0;
	struct stat st;
	int err = 0;

	if (fstat(fd, &st))
		return -errno;
	if (!S_ISREG(st.st_mode))
		return -EINVAL;
	if ((uint64_t)st.st_size > DEBUGINFO_MAX_FILE_BYTES)
		return -EFBIG;
	buf = xmalloc(CHUNK);
	*crc = crc32_z(0, Z_NULL, 0);
	for (;;) {
		ssize_t n = pread(fd, buf, CHUNK, done);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0) {
			err = -errno;
			break;
		}
		if (!n)
			break;
		done += n;
		if (done > DEBUGINFO_MAX_FILE_BYTES) {
			err = -EFBIG;
			break;
		}
		*crc = crc32_z(*crc, buf, n);
	}
	free(buf);
	return err;
}

/* Finding the debug file -------------------------------------------------- */

struct lookup {
	int rootfd;		/* -1: our own root */
	int err;		/* -ENOENT until a candidate fails its check */
	const struct debuginfo_elf *bin;
};

enum check { CHECK_BUILD_ID, CHECK_CRC };

/* An fd on path if it is a regular file that passes the check, else -1. */
static int try_candidate(struct lookup *lk, const char *path, enum check check)
{
	struct debuginfo_elf cand;
	struct stat st;
	uint32_t crc;
	bool ok = false;
	/* As the process sees it: an absolute symlink (common under .build-id/) stays in its root. */
	int fd = open_in_root(lk->rootfd, path, O_RDONLY | O_CLOEXEC | O_NONBLOCK);

	if (fd < 0)
		return -1;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (check == CHECK_BUILD_ID) {
		ok = !debuginfo_elf_read(&cand, fd) && !strcmp(cand.build_id, lk->bin->build_id);
		debuginfo_elf_release(&cand);
	} else {
		ok = !debuginfo_file_crc(fd, &crc) && crc == lk->bin->link_crc;
	}
	if (!ok) {
		close(fd);
		lk->err = -ESTALE;
		return -1;
	}
	return fd;
}

int debuginfo_find(const struct debuginfo_dirs *dirs, const char *path,
		   const struct debuginfo_elf *bin, char **found)
{
	const char *debug_dir = dirs && dirs->debug_dir ? dirs->debug_dir : DEBUGINFO_DEFAULT_DIR;
	const char *slash = strrchr(path, '/');
	struct lookup lk = { .rootfd = -1, .err = -ENOENT, .bin = bin };
	struct strbuf sb, dir;
	int fd = -1, i;

	if (dirs && dirs->root && *dirs->root) {
		lk.rootfd = open(dirs->root, O_PATH | O_DIRECTORY | O_CLOEXEC);
		if (lk.rootfd < 0)
			return -errno;
	}
	strbuf_init(&sb);
	strbuf_init(&dir);
	if (strlen(bin->build_id) > 2) {
		strbuf_addf(&sb, "%s/.build-id/%.2s/%s.debug", debug_dir, bin->build_id,
			    bin->build_id + 2);
		fd = try_candidate(&lk, sb.buf, CHECK_BUILD_ID);
	}
	if (slash)
		strbuf_add(&dir, path, slash - path);
	else
		strbuf_addch(&dir, '.');
	/* GDB's order; the last place only for a binary named by an absolute path. */
	for (i = 0; fd < 0 && bin->link_name && i < 3; i++) {
		strbuf_reset(&sb);
		if (i == 0)
			strbuf_addf(&sb, "%s/%s", dir.buf, bin->link_name);
		else if (i == 1)
			strbuf_addf(&sb, "%s/.debug/%s", dir.buf, bin->link_name);
		else if (path[0] == '/')
			strbuf_addf(&sb, "%s%s/%s", debug_dir, dir.buf, bin->link_name);
		else
			break;
		fd = try_candidate(&lk, sb.buf, CHECK_CRC);
	}
	if (lk.rootfd >= 0)
		close(lk.rootfd);
	strbuf_release(&dir);
	if (fd < 0) {
		strbuf_release(&sb);
		return lk.err;
	}
	if (found)
		*found = strbuf_detach(&sb);
	else
		strbuf_release(&sb);
	return fd;
}
