// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/intern.h"
#include "bpfprof/util.h"

#define NO_NODE UINT32_MAX
/*
 * libdw is begun again once the units indexed through it had this many
 * line table rows (some 50 bytes each to libdw, and ours by then). Not
 * after each unit: it reads the headers of all the units before the one
 * asked for again, some 1.5 ms for libc's.
 */
#define DWARF_ROWS_PER_BEGIN 8192
#define LINE_END UINT32_MAX	/* a row that ends a sequence: no line from its address on */

/* A function, or a call inlined into one, that has code; names in the index's strings. */
struct dw_node {
	uint32_t name;		/* 0: none */
	uint32_t call_file;	/* inlined calls: where the caller makes the call; 0: none */
	uint32_t call_line;
	uint32_t parent;	/* the node it is inlined into; NO_NODE: a function */
};

/* An address range as read: possibly nested in others. */
struct dw_span {
	uint64_t lo, hi;
	uint32_t idx, depth;
};

/* Sorted, disjoint: [lo, hi) belongs to idx (innermost node, or unit). */
struct dw_range {
	uint64_t lo, hi;
	uint32_t idx;
};

/* A line table row, as libdw sorts them; rows that repeat the one before are left out. */
struct dw_line {
	uint64_t addr;
	uint32_t file;		/* in the index's strings; 0: none */
	uint32_t line;		/* 0 when unknown; LINE_END */
};

/*
 * What lookups in a unit need, copied out of libdw when the unit is first
 * looked up: libdw, and the debug sections it reads, can then be let go.
 */
struct dw_unit {
	Dwarf_Off offset;	/* its DIE's, in .debug_info */
	bool indexed;
	bool alone;		/* it refers to no other unit: it can be read by itself */
	/* Its bytes, header on, in .debug_info, its abbreviations and line program (0, 0: none). */
	uint32_t info_lo, info_hi, abbrev_lo, abbrev_hi, line_lo, line_hi;
	struct dw_node *nodes;
	uint32_t nr_nodes;
	struct dw_range *ranges;
	size_t nr_ranges;
	struct dw_line *lines;
	size_t nr_lines;
};

/*
 * The sections libdw needs for units, their ranges, names, inlined calls
 * and lines. Not locations (.debug_loclists is libc's second biggest),
 * call frames, macros nor type units: they are never read.
 */
enum { SCN_INFO, SCN_ABBREV, SCN_STR, SCN_STR_OFFSETS, SCN_LINE, SCN_LINE_STR, SCN_ADDR,
       SCN_RANGES, SCN_RNGLISTS, SCN_ARANGES, NR_SCNS };
static const char *const wanted_sections[NR_SCNS] = {
	[SCN_INFO] = "info", [SCN_ABBREV] = "abbrev", [SCN_STR] = "str",
	[SCN_STR_OFFSETS] = "str_offsets", [SCN_LINE] = "line", [SCN_LINE_STR] = "line_str",
	[SCN_ADDR] = "addr", [SCN_RANGES] = "ranges", [SCN_RNGLISTS] = "rnglists",
	[SCN_ARANGES] = "aranges",
};

struct dwarf_index {
	int fd;			/* ours: the sections are read from it again after a trim */
	struct stat st;		/* the file as its units were read */
	unsigned char *image;	/* an ELF image of the debug sections libdw needs, inflated */
	size_t image_size;	/* mapped: pages never written are never resident */
	struct {
		uint64_t at, size;	/* in a whole image; size 0: not there */
	} scn[NR_SCNS];
	bool msb;		/* the file's byte order */
	size_t reads_whole, reads_alone;	/* images read: all units', one unit's */
	uint32_t alone_now;	/* one unit's, since the last dwarf_index_trim() */
	Elf *elf;		/* over image; NULL when let go */
	Dwarf *dw;		/* over elf; NULL until units are read or indexed */
	size_t dw_rows;		/* line table rows libdw read since it began */
	bool units_read;
	bool failed;		/* the sections could not be read, or are not the units' any more */
	bool used;		/* the sections needed since the last dwarf_index_trim() */
	uint32_t idle;		/* trims in a row without */
	struct dw_unit *units;	/* in .debug_info order, so sorted by offset */
	size_t nr_units;
	struct dw_range *ranges;	/* unit ranges */
	size_t nr_ranges;
	struct dw_range *aranges;	/* .debug_aranges', for addresses no unit claims */
	size_t nr_aranges;
	struct strtab strings;	/* names and file names */
};

/* Its index in wanted_sections, or -1. */
static int wanted_section(const char *name)
{
	const char *base = !strncmp(name, ".debug_", 7) ? name + 7 :
			   !strncmp(name, ".zdebug_", 8) ? name + 8 : NULL;
	size_t i;

	for (i = 0; base && i < ARRAY_SIZE(wanted_sections); i++)
		if (!strcmp(base, wanted_sections[i]))
			return i;
	return -1;
}

/* Where a section's bytes are in the file, and how many libdw reads. */
struct scn_bytes {
	uint64_t offset, len;	/* in the file, past a compression header */
	uint64_t size;		/* inflated, or len */
	bool compressed;
	bool zlib;		/* compressed, and in a way we inflate */
};

/*
 * The inflated size is read from the section's first bytes alone: libelf's
 * gelf_getchdr() would read the whole section for it, some 4 MB for libc's
 * debug file, for every such file mapped.
 */
static int section_bytes(Elf *elf, int fd, const GElf_Shdr *sh, const char *name,
			 struct scn_bytes *b)
{
	const char *ident = elf_getident(elf, NULL);
	bool big_endian = ident && ident[EI_DATA] == ELFDATA2MSB;
	bool elf64 = gelf_getclass(elf) == ELFCLASS64;
	unsigned char head[24];
	size_t skip = 0;

	*b = (struct scn_bytes){ sh->sh_offset, sh->sh_size, sh->sh_size, false, false };
	if (sh->sh_size > DWARF_MAX_BYTES)
		return -EFBIG;
	if (sh->sh_flags & SHF_COMPRESSED) {
		/* Elf64_Chdr: type, reserved, size, alignment; Elf32_Chdr: type, size, alignment. */
		skip = elf64 ? 24 : 12;
		if (sh->sh_size < skip || pread(fd, head, skip, sh->sh_offset) != (ssize_t)skip)
			return -EINVAL;
		b->size = elf64 ? get_uint(head + 8, 8, big_endian) : get_uint(head + 4, 4, big_endian);
		b->zlib = get_uint(head, 4, big_endian) == ELFCOMPRESS_ZLIB;
		b->compressed = true;
	} else if (!strncmp(name, ".zdebug_", 8)) {
		/* GNU's: "ZLIB", then the inflated size, big-endian. */
		skip = 12;
		if (sh->sh_size < skip || pread(fd, head, skip, sh->sh_offset) != (ssize_t)skip ||
		    memcmp(head, "ZLIB", 4))
			return -EINVAL;
		b->size = get_uint(head + 4, 8, true);
		b->zlib = b->compressed = true;
	}
	b->offset += skip;
	b->len -= skip;
	return b->size > DWARF_MAX_BYTES ? -EFBIG : 0;
}

/*
 * Whether the file has DWARF we can read, before any of it is read: some
 * .debug_info; no .gnu_debugaltlink (dwz) or .debug_sup, naming a file
 * libdw would open by that name on its own (a FIFO there would block us
 * forever); the sections we would hold within DWARF_MAX_BYTES.
 */
static int check_sections(Elf *elf, int fd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t total = 0;
	bool info = false;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		struct scn_bytes b;
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".gnu_debugaltlink") || !strcmp(name, ".debug_sup"))
			return -EOPNOTSUPP;
		if (wanted_section(name) < 0)
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			info = true;
		if ((err = section_bytes(elf, fd, &sh, name, &b)))
			return err;
		if (b.size > DWARF_MAX_BYTES - total)
			return -EFBIG;
		total += b.size;
	}
	return info ? 0 : -ENODATA;
}

/* The image ------------------------------------------------------------------ */

/*
 * libdw reads strings (names, directories) to their NUL without looking
 * where their section ends: in a file whose string runs to the end of a
 * section, past it. Each section in the image is followed by NULs: every
 * string then ends inside its section or right after it.
 */
#define SECTION_PAD 16

#define CHUNK (64 * 1024)

/*
 * Into out[lo, hi) the section's bytes there, as they are or inflated;
 * the rest of out is not written: in an image for one unit, the other
 * units' pages stay zero pages, never resident. Bytes before lo are
 * inflated through buf's second half and dropped. buf: 2 * CHUNK bytes.
 */
static bool read_section(int fd, const struct scn_bytes *b, unsigned char *out, uint64_t lo,
			 uint64_t hi, unsigned char *buf)
{
	z_stream z = { 0 };
	uint64_t done = 0;
	int rc = Z_OK;

	if (!b->compressed) {
		while (lo + done < hi) {
			ssize_t n = pread(fd, out + lo + done, hi - lo - done, b->offset + lo + done);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return false;
			done += n;
		}
		return true;
	}
	if (!b->zlib || inflateInit(&z) != Z_OK)
		return false;
	/* To its end when reading up to it: a whole section ends where its stream does. */
	while (rc == Z_OK && (z.total_out < hi || hi == b->size)) {
		if (!z.avail_in) {
			size_t want = b->len - done < CHUNK ? b->len - done : CHUNK;
			ssize_t n = want ? pread(fd, buf, want, b->offset + done) : 0;

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			done += n;
			z.next_in = buf;
			z.avail_in = n;
		}
		if (z.total_out < lo) {
			z.next_out = buf + CHUNK;
			z.avail_out = lo - z.total_out < CHUNK ? lo - z.total_out : CHUNK;
		} else {
			z.next_out = out + z.total_out;
			z.avail_out = hi - z.total_out;
		}
		rc = inflate(&z, Z_NO_FLUSH);
	}
	inflateEnd(&z);
	return z.total_out == hi && (hi < b->size || rc == Z_STREAM_END);
}

/* An ELF header with sections only, of the file's class and byte order. */
static void put_ehdr(unsigned char *p, const unsigned char *ident, const GElf_Ehdr *eh,
		     uint64_t shoff, size_t shnum)
{
	bool msb = ident[EI_DATA] == ELFDATA2MSB, elf64 = ident[EI_CLASS] == ELFCLASS64;

	memcpy(p, ident, EI_NIDENT);
	put_uint(p + 16, 2, eh->e_type, msb);
	put_uint(p + 18, 2, eh->e_machine, msb);
	put_uint(p + 20, 4, EV_CURRENT, msb);
	if (elf64) {
		put_uint(p + 40, 8, shoff, msb);
		put_uint(p + 48, 4, eh->e_flags, msb);
		put_uint(p + 52, 2, sizeof(Elf64_Ehdr), msb);
		put_uint(p + 58, 2, sizeof(Elf64_Shdr), msb);
		put_uint(p + 60, 2, shnum, msb);
		put_uint(p + 62, 2, shnum - 1, msb);	/* the names, last */
	} else {
		put_uint(p + 32, 4, shoff, msb);
		put_uint(p + 36, 4, eh->e_flags, msb);
		put_uint(p + 40, 2, sizeof(Elf32_Ehdr), msb);
		put_uint(p + 46, 2, sizeof(Elf32_Shdr), msb);
		put_uint(p + 48, 2, shnum, msb);
		put_uint(p + 50, 2, shnum - 1, msb);
	}
}

static void put_shdr(unsigned char *p, const unsigned char *ident, uint32_t name, uint32_t type,
		     uint64_t offset, uint64_t size)
{
	bool msb = ident[EI_DATA] == ELFDATA2MSB, elf64 = ident[EI_CLASS] == ELFCLASS64;

	put_uint(p, 4, name, msb);
	put_uint(p + 4, 4, type, msb);
	put_uint(p + (elf64 ? 24 : 16), elf64 ? 8 : 4, offset, msb);
	put_uint(p + (elf64 ? 32 : 20), elf64 ? 8 : 4, size, msb);
	put_uint(p + (elf64 ? 48 : 32), elf64 ? 8 : 4, 1, msb);	/* alignment */
}

#define ALIGN8(x) (((x) + 7) & ~(uint64_t)7)

struct image_scn {
	struct scn_bytes b;
	uint64_t at;		/* in the image */
	int wanted;
};

/*
 * The part of section w that an image for unit u holds, [*lo, *hi): all
 * of it in a whole image (u NULL). A unit by itself needs its own bytes
 * of .debug_info, .debug_abbrev and .debug_line (libc's 8 MB of 8.6
 * inflated), none of .debug_aranges, and the rest whole.
 */
static void section_part(const struct dw_unit *u, int w, uint64_t size, uint64_t *lo,
			 uint64_t *hi)
{
	*lo = 0;
	*hi = size;
	if (!u)
		return;
	switch (w) {
	case SCN_INFO:
		*lo = u->info_lo;
		*hi = u->info_hi;
		break;
	case SCN_ABBREV:
		*lo = u->abbrev_lo;
		*hi = u->abbrev_hi;
		break;
	case SCN_LINE:
		*lo = u->line_lo;
		*hi = u->line_hi;
		break;
	case SCN_ARANGES:
		*hi = 0;
		break;
	}
}

/*
 * libdw finds a unit by reading every unit header before it. In an image
 * for one unit, the bytes before it are one unit of our own: a DWARF 4
 * header (abbreviations at 0, never read) and no DIE, zeros to its end.
 */
static void put_filler_unit(unsigned char *info, uint64_t end, bool msb, bool elf64)
{
	put_uint(info, 4, end - 4, msb);
	put_uint(info + 4, 2, 4, msb);
	put_uint(info + 6, 4, 0, msb);
	info[10] = elf64 ? 8 : 4;
	info[11] = 0;		/* the unit's DIE: none */
}

/*
 * The sections libdw needs, inflated by us into one ELF image in memory
 * that libdw reads as it is: what it would inflate itself is every debug
 * section, each read whole as it is in the file first. A section that
 * cannot be read is left out, as libdw leaves it out. Whole (u NULL), or
 * for unit u alone (section_part()), with the same layout.
 */
static int load_image(struct dwarf_index *d, const struct dw_unit *u)
{
	struct image_scn scns[NR_SCNS];
	bool seen[NR_SCNS] = { false };
	unsigned char ident[EI_NIDENT], *buf = NULL, *shdrs;
	size_t shstrndx, nr = 0, i, shnum = 1, names_len = 1, shentsize;
	uint64_t size, names_at, shoff, lo, hi;
	Elf_Scn *scn = NULL;
	GElf_Ehdr eh;
	struct stat st;
	Elf *elf;
	int err;

	/* Not the file its units were read from: their offsets would mean nothing. */
	if (fstat(d->fd, &st) || (d->nr_units && (st.st_size != d->st.st_size ||
						  st.st_mtim.tv_sec != d->st.st_mtim.tv_sec ||
						  st.st_mtim.tv_nsec != d->st.st_mtim.tv_nsec)))
		return -ESTALE;
	d->st = st;
	elf = elf_open_fd(d->fd);
	err = -ENOEXEC;
	if (!elf || elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh) ||
	    !elf_getident(elf, NULL) || elf_getshdrstrndx(elf, &shstrndx))
		goto out;
	if ((err = check_sections(elf, d->fd)))
		goto out;
	memcpy(ident, elf_getident(elf, NULL), EI_NIDENT);
	d->msb = ident[EI_DATA] == ELFDATA2MSB;
	shentsize = ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr);
	size = ident[EI_CLASS] == ELFCLASS64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr);
	/* The first of each name, as libdw takes it. */
	while ((scn = elf_nextscn(elf, scn))) {
		struct image_scn *s = &scns[nr];
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)) ||
		    (s->wanted = wanted_section(name)) < 0 || seen[s->wanted] ||
		    section_bytes(elf, d->fd, &sh, name, &s->b))
			continue;
		seen[s->wanted] = true;
		s->at = ALIGN8(size);
		size = s->at + s->b.size + SECTION_PAD;
		nr++;
	}
	names_at = size;
	for (i = 0; i < nr; i++)
		size += strlen(".debug_") + strlen(wanted_sections[scns[i].wanted]) + 1;
	size += strlen(".shstrtab") + 2;
	shoff = ALIGN8(size);
	size = shoff + (nr + 2) * shentsize;
	err = -ENOMEM;
	d->image = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
			-1, 0);
	if (d->image == MAP_FAILED) {
		d->image = NULL;
		goto out;
	}
	d->image_size = size;
	if (!u)
		memset(d->scn, 0, sizeof(d->scn));
	buf = xmalloc(2 * CHUNK);
	shdrs = d->image + shoff;
	for (i = 0; i < nr; i++) {
		int w = scns[i].wanted;

		section_part(u, w, scns[i].b.size, &lo, &hi);
		if (hi > scns[i].b.size || lo > hi ||
		    !read_section(d->fd, &scns[i].b, d->image + scns[i].at, lo, hi, buf)) {
			/* libdw can do nothing without it. */
			if (w == SCN_INFO) {
				err = -EINVAL;
				goto out;
			}
			continue;
		}
		if (w == SCN_INFO && lo)
			put_filler_unit(d->image + scns[i].at, lo, d->msb,
					ident[EI_CLASS] == ELFCLASS64);
		if (!u) {
			d->scn[w].at = scns[i].at;
			d->scn[w].size = scns[i].b.size;
		}
		put_shdr(shdrs + shnum++ * shentsize, ident, names_len, SHT_PROGBITS, scns[i].at,
			 scns[i].b.size);
		names_len += sprintf((char *)d->image + names_at + names_len, ".debug_%s",
				     wanted_sections[w]) + 1;
	}
	put_shdr(shdrs + shnum++ * shentsize, ident, names_len, SHT_STRTAB, names_at,
		 names_len + strlen(".shstrtab") + 1);
	strcpy((char *)d->image + names_at + names_len, ".shstrtab");
	put_ehdr(d->image, ident, &eh, shoff, shnum);
	d->elf = elf_open_mem(d->image, size);
	err = d->elf ? 0 : -EINVAL;
out:
	if (err && d->image) {
		munmap(d->image, d->image_size);
		d->image = NULL;
	}
	free(buf);
	if (elf)
		elf_end(elf);
	return err;
}

/* Lets libdw go: what it read of units, abbreviations, line tables. */
static void end_dwarf(struct dwarf_index *d)
{
	d->dw_rows = 0;
	if (d->dw)
		dwarf_end(d->dw);
	d->dw = NULL;
}

/* And the sections it read. */
static void drop_image(struct dwarf_index *d)
{
	end_dwarf(d);
	if (d->elf)
		elf_end(d->elf);
	d->elf = NULL;
	if (d->image)
		munmap(d->image, d->image_size);
	d->image = NULL;
}

/* libdw, over the sections read again if they were let go; false if it cannot be had. */
static bool begin_dwarf(struct dwarf_index *d)
{
	if (d->failed)
		return false;
	d->used = true;
	if (d->dw)
		return true;
	if (!d->elf) {
		if (load_image(d, NULL)) {
			d->failed = true;
			return false;
		}
		d->reads_whole++;
	}
	if (!(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		d->failed = true;
		return false;
	}
	return true;
}

/* libdw over an image of unit u's bytes alone; false if it cannot be had. */
static bool begin_alone(struct dwarf_index *d, const struct dw_unit *u)
{
	if (d->failed)
		return false;
	d->used = true;
	if (load_image(d, u))
		return false;
	if (!(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		drop_image(d);
		return false;
	}
	d->reads_alone++;
	d->alone_now++;
	return true;
}

/*
 * Nothing is read here but the section headers: files are opened as they
 * are mapped, most never sampled. The index reads the file through a
 * descriptor of its own, never a mapping that a truncation of the file
 * would turn into SIGBUS.
 */
int dwarf_index_open(struct dwarf_index **out, int fd)
{
	struct dwarf_index *d;
	int own = fcntl(fd, F_DUPFD_CLOEXEC, 0), err;
	Elf *elf;

	*out = NULL;
	if (own < 0)
		return -errno;
	elf = elf_open_fd(own);
	if (!elf || elf_kind(elf) != ELF_K_ELF) {
		if (elf)
			elf_end(elf);
		close(own);
		return -ENOEXEC;
	}
	err = check_sections(elf, own);
	elf_end(elf);
	if (err) {
		close(own);
		return err;
	}
	d = xcalloc(1, sizeof(*d));
	d->fd = own;
	strtab_init(&d->strings);
	*out = d;
	return 0;
}

/* Drops the whole index: the next lookup reads the units again. */
static void forget_units(struct dwarf_index *d)
{
	size_t i;

	drop_image(d);
	for (i = 0; i < d->nr_units; i++) {
		free(d->units[i].nodes);
		free(d->units[i].ranges);
		free(d->units[i].lines);
	}
	free(d->units);
	free(d->ranges);
	free(d->aranges);
	d->units = NULL;
	d->ranges = d->aranges = NULL;
	d->nr_units = d->nr_ranges = d->nr_aranges = 0;
	strtab_release(&d->strings);
	strtab_init(&d->strings);
	d->units_read = d->failed = false;
}

void dwarf_index_free(struct dwarf_index *d)
{
	if (!d)
		return;
	forget_units(d);
	strtab_release(&d->strings);
	close(d->fd);
	free(d);
}

/*
 * libc's debug sections are some 9 MB inflated, and lookups need none of
 * it once their unit is indexed. The sections, and libdw, go once no unit
 * needed them for DWARF_IDLE_TRIMS drains (dwarf.h) (the next unit reads them again,
 * some 30 ms for libc's): at most one read each so many drains, and a
 * long-running agent, whose lookups keep to units indexed long ago, holds
 * them only for the while after a new one. An index that failed starts
 * anew then.
 */
void dwarf_index_trim(struct dwarf_index *d)
{
	if (!d)
		return;
	d->idle = d->used ? 0 : d->idle + 1;
	d->used = false;
	d->alone_now = 0;
	if ((d->elf || d->failed) && d->idle >= DWARF_IDLE_TRIMS) {
		if (d->failed)
			forget_units(d);
		drop_image(d);
	}
}

/* Ranges ------------------------------------------------------------------ */

static void add_span(struct dw_span **spans, size_t *nr, size_t *alloc, uint64_t lo, uint64_t hi,
		     uint32_t idx, uint32_t depth)
{
	/* Code the linker dropped keeps its ranges, moved to 0. */
	if (!lo || hi <= lo)
		return;
	ALLOC_GROW(*spans, *nr + 1, *alloc);
	(*spans)[(*nr)++] = (struct dw_span){ lo, hi, idx, depth };
}

/*
 * By start; at the same start the wider, then the outer one first. Of
 * two alike (aliases of one function), the one read first comes last,
 * innermost, and owns the range: what a reader walking the tree finds.
 */
static int span_cmp(const void *a, const void *b)
{
	const struct dw_span *x = a, *y = b;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->hi != y->hi)
		return x->hi > y->hi ? -1 : 1;
	if (x->depth != y->depth)
		return x->depth < y->depth ? -1 : 1;
	return x->idx > y->idx ? -1 : x->idx < y->idx;
}

static void emit(struct dw_range **out, size_t *nr, size_t *alloc, uint64_t lo, uint64_t hi,
		 uint32_t idx)
{
	struct dw_range *last = *nr ? &(*out)[*nr - 1] : NULL;

	if (lo >= hi)
		return;
	if (last && last->hi == lo && last->idx == idx) {
		last->hi = hi;
		return;
	}
	ALLOC_GROW(*out, *nr + 1, *alloc);
	(*out)[(*nr)++] = (struct dw_range){ lo, hi, idx };
}

/*
 * Nested spans to disjoint ranges, each owned by the innermost span over
 * it, in one sweep with a stack of the open spans. A span that overlaps
 * its enclosing one without nesting (bad DWARF) is cut at its end.
 */
static struct dw_range *flatten(struct dw_span *s, size_t n, size_t *nr_out)
{
	struct dw_span *stack = xmalloc((n ? n : 1) * sizeof(*stack));
	struct dw_range *out = NULL;
	size_t i, top = 0, nr = 0, alloc = 0;
	uint64_t cur = 0;

	if (n)
		qsort(s, n, sizeof(*s), span_cmp);
	for (i = 0; i < n; i++) {
		struct dw_span span = s[i];

		while (top && stack[top - 1].hi <= span.lo) {
			top--;
			emit(&out, &nr, &alloc, cur, stack[top].hi, stack[top].idx);
			if (stack[top].hi > cur)
				cur = stack[top].hi;
		}
		if (top) {
			emit(&out, &nr, &alloc, cur, span.lo, stack[top - 1].idx);
			if (span.hi > stack[top - 1].hi)
				span.hi = stack[top - 1].hi;
		}
		cur = span.lo;
		stack[top++] = span;
	}
	while (top) {
		top--;
		emit(&out, &nr, &alloc, cur, stack[top].hi, stack[top].idx);
		if (stack[top].hi > cur)
			cur = stack[top].hi;
	}
	free(stack);
	/* Kept as long as the index: no room to grow. */
	if (nr)
		out = xrealloc(out, nr * sizeof(*out));
	*nr_out = nr;
	return out;
}

static const struct dw_range *range_find(const struct dw_range *r, size_t n, uint64_t addr)
{
	size_t i = COUNT_AT_OR_BELOW(r, n, lo, addr);

	return i && addr < r[i - 1].hi ? &r[i - 1] : NULL;
}

/* Units ------------------------------------------------------------------- */

/* The unit whose DIE is at off, or NULL. */
static struct dw_unit *unit_at(struct dwarf_index *d, Dwarf_Off off)
{
	size_t i = COUNT_AT_OR_BELOW(d->units, d->nr_units, offset, off);

	return i && d->units[i - 1].offset == off ? &d->units[i - 1] : NULL;
}

/*
 * A unit that does not say its ranges may still be in .debug_aranges:
 * its entries, for the addresses no unit claims.
 */
static void read_aranges(struct dwarf_index *d)
{
	Dwarf_Aranges *ar;
	struct dw_span *spans = NULL;
	size_t i, n, nr_spans = 0, spans_alloc = 0;

	if (dwarf_getaranges(d->dw, &ar, &n))
		return;
	for (i = 0; i < n; i++) {
		Dwarf_Arange *a = dwarf_onearange(ar, i);
		Dwarf_Addr addr;
		Dwarf_Word len;
		Dwarf_Off off;
		struct dw_unit *u;

		if (a && !dwarf_getarangeinfo(a, &addr, &len, &off) && (u = unit_at(d, off)))
			add_span(&spans, &nr_spans, &spans_alloc, addr, addr + len, u - d->units, 0);
	}
	d->aranges = flatten(spans, nr_spans, &d->nr_aranges);
	free(spans);
}

/* A ULEB128 at p, before end, into *v: past it, NULL if it runs to end (or p is NULL). */
static const unsigned char *read_uleb(const unsigned char *p, const unsigned char *end,
				      uint64_t *v)
{
	unsigned shift = 0;

	*v = 0;
	while (p && p < end) {
		uint8_t b = *p++;

		if (shift < 64)
			*v |= (uint64_t)(b & 0x7f) << shift;
		shift += 7;
		if (!(b & 0x80))
			return p;
	}
	return NULL;
}

/* A form whose value is in another unit, or another file. */
static bool refers_out(uint64_t form)
{
	switch (form) {
	case DW_FORM_ref_addr:
	case DW_FORM_ref_sig8:
	case DW_FORM_indirect:	/* any form, the DIE says which */
	case DW_FORM_ref_sup4:
	case DW_FORM_ref_sup8:
	case DW_FORM_strp_sup:
	case DW_FORM_GNU_ref_alt:
	case DW_FORM_GNU_strp_alt:
		return true;
	}
	return false;
}

/*
 * The abbreviation table at off in sec[size]: where it ends, past the 0
 * that ends it, or 0 if it runs past size. *out: a form in it refers out
 * of the unit.
 */
static uint64_t abbrev_end(const unsigned char *sec, uint64_t size, uint64_t off, bool *out)
{
	const unsigned char *p = off < size ? sec + off : NULL, *end = sec + size;
	uint64_t code, v, name, form;

	while ((p = read_uleb(p, end, &code)) && code) {
		/* The tag, then whether it has children. */
		if (!(p = read_uleb(p, end, &v)) || p++ >= end)
			return 0;
		do {
			if (!(p = read_uleb(p, end, &name)) || !(p = read_uleb(p, end, &form)) ||
			    (form == DW_FORM_implicit_const && !(p = read_uleb(p, end, &v))))
				return 0;
			*out |= refers_out(form);
		} while (name || form);
	}
	return p ? p - sec : 0;
}

/*
 * The unit (or line program) at off in sec[size]: where it ends, as its
 * initial length says, or 0 if past size. *body: where its header goes
 * on; *osz: 4 or 8, the size of its section offsets.
 */
static uint64_t unit_end(const unsigned char *sec, uint64_t size, uint64_t off, bool msb,
			 uint64_t *body, unsigned *osz)
{
	uint64_t len;

	if (off > size || size - off < 4)
		return 0;
	len = get_uint(sec + off, 4, msb);
	*osz = 4;
	off += 4;
	if (len == 0xffffffff) {
		if (size - off < 8)
			return 0;
		len = get_uint(sec + off, 8, msb);
		*osz = 8;
		off += 8;
	}
	*body = off;
	return len <= size - off ? off + len : 0;
}

/*
 * Where unit u's bytes are, from the whole image: its header on in
 * .debug_info, its abbreviations, its line program. It can be read alone
 * if none of its forms refers out of it (DW_FORM_ref_addr: dwz's
 * partial units, LTO) and all of it is within 4 GiB.
 */
static void unit_parts(struct dwarf_index *d, struct dw_unit *u, Dwarf_Die *cudie)
{
	const unsigned char *info = d->image + d->scn[SCN_INFO].at;
	uint64_t start = dwarf_dieoffset(cudie) - dwarf_cuoffset(cudie), body, end, at, ab,
		 ab_end, stmt = 0, line_end = 0;
	unsigned osz, version, skip;
	Dwarf_Attribute a;
	Dwarf_Word w;
	bool out = false;

	end = unit_end(info, d->scn[SCN_INFO].size, start, d->msb, &body, &osz);
	if (!end || end - body < 2)
		return;
	version = get_uint(info + body, 2, d->msb);
	/* Past the version, and DWARF 5's unit type and address size, to the abbreviations. */
	skip = version >= 5 ? 4 : 2;
	if (version < 2 || version > 5 || end - body < skip + osz)
		return;
	ab = get_uint(info + body + skip, osz, d->msb);
	ab_end = abbrev_end(d->image + d->scn[SCN_ABBREV].at, d->scn[SCN_ABBREV].size, ab, &out);
	if (dwarf_attr(cudie, DW_AT_stmt_list, &a) && !dwarf_formudata(&a, &w)) {
		stmt = w;
		line_end = unit_end(d->image + d->scn[SCN_LINE].at, d->scn[SCN_LINE].size, stmt,
				    d->msb, &at, &osz);
		if (!line_end)
			return;
	}
	/* The filler unit before it takes 12 bytes (put_filler_unit()). */
	if (!ab_end || out || end > UINT32_MAX || ab_end > UINT32_MAX || line_end > UINT32_MAX ||
	    (start && start < 12))
		return;
	u->info_lo = start;
	u->info_hi = end;
	u->abbrev_lo = ab;
	u->abbrev_hi = ab_end;
	u->line_lo = stmt;
	u->line_hi = line_end;
	u->alone = true;
}

/*
 * The first lookup reads where each compile unit's code is: from the
 * units themselves, as .debug_aranges is often missing (Clang does not
 * write it). Type, partial and skeleton units hold none. libdw's reading
 * of every unit goes right after.
 */
static void read_units(struct dwarf_index *d)
{
	Dwarf_CU *cu = NULL, *next;
	Dwarf_Die cudie;
	Dwarf_Half version;
	struct dw_span *spans = NULL;
	size_t nr_spans = 0, spans_alloc = 0, units_alloc = 0;
	uint8_t type;

	d->units_read = true;
	if (!begin_dwarf(d))
		return;
	/*
	 * No subdie: for a skeleton unit libdw would open the split unit's
	 * .dwo file by the name the unit gives, wherever it points.
	 */
	for (; dwarf_get_units(d->dw, cu, &next, &version, &type, &cudie, NULL) == 0; cu = next) {
		Dwarf_Addr base, lo, hi;
		ptrdiff_t off = 0;

		if (type != DW_UT_compile)
			continue;
		ALLOC_GROW(d->units, d->nr_units + 1, units_alloc);
		memset(&d->units[d->nr_units], 0, sizeof(d->units[0]));
		d->units[d->nr_units].offset = dwarf_dieoffset(&cudie);
		unit_parts(d, &d->units[d->nr_units], &cudie);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			add_span(&spans, &nr_spans, &spans_alloc, lo, hi, d->nr_units, 0);
		d->nr_units++;
	}
	d->ranges = flatten(spans, nr_spans, &d->nr_ranges);
	free(spans);
	read_aranges(d);
	end_dwarf(d);
}

static struct dw_unit *find_unit(struct dwarf_index *d, uint64_t addr)
{
	const struct dw_range *r = range_find(d->ranges, d->nr_ranges, addr);

	if (!r)
		r = range_find(d->aranges, d->nr_aranges, addr);
	return r ? &d->units[r->idx] : NULL;
}

/* One unit's functions, inlined calls and lines ------------------------- */

struct unit_builder {
	struct dwarf_index *d;
	struct dw_unit *u;
	Dwarf_Die cudie;
	Dwarf_Files *files;
	size_t nfiles;
	uint32_t *file_ids;	/* by file number, as interned; 0 until needed */
	const char *comp_dir;	/* NULL unless absolute */
	struct dw_span *spans;
	size_t nr_spans, spans_alloc, nodes_alloc;
};

/*
 * File idx of the unit's table, interned. A file name relative to an
 * absolute build directory is joined to it, as addr2line does. A relative
 * build directory is what is left of one after -fdebug-prefix-map
 * (distribution packages): joining it would only repeat directories.
 */
static uint32_t file_id(struct unit_builder *b, size_t idx)
{
	const char *raw;
	struct strbuf sb;

	if (idx >= b->nfiles)
		return 0;
	if (b->file_ids[idx])
		return b->file_ids[idx];
	raw = dwarf_filesrc(b->files, idx, NULL, NULL);
	if (!raw)
		return 0;
	if (!b->comp_dir || raw[0] == '/')
		return b->file_ids[idx] = strtab_intern(&b->d->strings, raw);
	strbuf_init(&sb);
	strbuf_addf(&sb, "%s/%s", b->comp_dir, raw);
	b->file_ids[idx] = strtab_intern(&b->d->strings, sb.buf);
	strbuf_release(&sb);
	return b->file_ids[idx];
}

/* As the symbol table spells it when DWARF knows that spelling; interned, 0 if none. */
static uint32_t die_name(struct unit_builder *b, Dwarf_Die *die)
{
	static const unsigned attrs[] = { DW_AT_linkage_name, DW_AT_MIPS_linkage_name, DW_AT_name };
	Dwarf_Attribute a;
	const char *s;
	size_t i;

	/*
	 * An empty name is none (it would be an empty frame), nor one ending
	 * in a blank, which no compiler writes (it would end a folded line in
	 * two spaces).
	 */
	for (i = 0; i < ARRAY_SIZE(attrs); i++)
		if (dwarf_attr_integrate(die, attrs[i], &a) && (s = dwarf_formstring(&a)) && *s &&
		    s[strlen(s) - 1] != ' ' && s[strlen(s) - 1] != '\t')
			return strtab_intern(&b->d->strings, s);
	return 0;
}

static uint64_t die_udata(Dwarf_Die *die, unsigned name)
{
	Dwarf_Attribute a;
	Dwarf_Word w;

	return dwarf_attr(die, name, &a) && !dwarf_formudata(&a, &w) ? w : 0;
}

/* A node for die if it has code; its index, or NO_NODE. */
static uint32_t add_node(struct unit_builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	struct dw_unit *u = b->u;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	size_t before = b->nr_spans;
	struct dw_node *n;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		add_span(&b->spans, &b->nr_spans, &b->spans_alloc, lo, hi, u->nr_nodes, depth);
	if (b->nr_spans == before)
		return NO_NODE;
	ALLOC_GROW(u->nodes, u->nr_nodes + 1, b->nodes_alloc);
	n = &u->nodes[u->nr_nodes];
	n->name = die_name(b, die);
	n->parent = parent;
	n->call_file = 0;
	n->call_line = 0;
	if (parent != NO_NODE) {
		n->call_file = file_id(b, die_udata(die, DW_AT_call_file));
		n->call_line = die_udata(die, DW_AT_call_line);
	}
	return u->nr_nodes++;
}

/* Only where code can be: not into types, variables and such. */
static void walk(struct unit_builder *b, Dwarf_Die *die, uint32_t parent, uint32_t depth)
{
	Dwarf_Die child;
	uint32_t node;

	/* Real code nests a few dozen deep; a file nesting deeper would overflow our stack. */
	if (depth >= DWARF_MAX_NESTING || dwarf_child(die, &child) != 0)
		return;
	do {
		switch (dwarf_tag(&child)) {
		case DW_TAG_subprogram:
			/* Nested or not, a function of its own: not inlined into parent. */
			node = add_node(b, &child, NO_NODE, depth);
			if (node != NO_NODE)
				walk(b, &child, node, depth + 1);
			break;
		case DW_TAG_inlined_subroutine:
			node = add_node(b, &child, parent, depth);
			if (node != NO_NODE)
				walk(b, &child, node, depth + 1);
			break;
		case DW_TAG_lexical_block:
		case DW_TAG_try_block:
		case DW_TAG_catch_block:
		case DW_TAG_namespace:
		case DW_TAG_module:
			walk(b, &child, parent, depth + 1);
			break;
		}
	} while (dwarf_siblingof(&child, &child) == 0);
}

/*
 * The unit's line table, as libdw sorts it. A row with the file and line
 * of the row before, in the same sequence, is left out: a lookup finds
 * the last row at or below its address, and the one before answers the
 * same (most rows only move a column or a view).
 */
static void copy_lines(struct unit_builder *b)
{
	struct dw_unit *u = b->u;
	Dwarf_Lines *lines;
	size_t i, n, alloc = 0;

	if (dwarf_getsrclines(&b->cudie, &lines, &n))
		return;
	b->d->dw_rows += n;
	for (i = 0; i < n; i++) {
		Dwarf_Line *l = dwarf_onesrcline(lines, i);
		struct dw_line row = { 0, 0, LINE_END };
		struct dw_line *last = u->nr_lines ? &u->lines[u->nr_lines - 1] : NULL;
		const char *raw;
		Dwarf_Files *files;
		size_t idx;
		bool end;
		int line;

		if (!l || dwarf_lineaddr(l, &row.addr) || dwarf_lineendsequence(l, &end))
			continue;
		if (!end) {
			/* The unit's own file table, but for a unit whose lines are another's. */
			if (!dwarf_line_file(l, &files, &idx) && files == b->files)
				row.file = file_id(b, idx);
			else if ((raw = dwarf_linesrc(l, NULL, NULL)))
				row.file = strtab_intern(&b->d->strings, raw);
			row.line = dwarf_lineno(l, &line) || line < 0 ? 0 : line;
			if (last && last->line != LINE_END && last->file == row.file &&
			    last->line == row.line)
				continue;
		}
		ALLOC_GROW(u->lines, u->nr_lines + 1, alloc);
		u->lines[u->nr_lines++] = row;
	}
	if (u->nr_lines)
		u->lines = xrealloc(u->lines, u->nr_lines * sizeof(*u->lines));
}

/* Copies the unit's functions, inlined calls and lines out of libdw. */
static void copy_unit(struct dwarf_index *d, struct dw_unit *u, Dwarf_Die *cudie)
{
	struct unit_builder b = { .d = d, .u = u, .cudie = *cudie };
	Dwarf_Attribute a;

	if (dwarf_getsrcfiles(&b.cudie, &b.files, &b.nfiles)) {
		b.files = NULL;
		b.nfiles = 0;
	}
	b.file_ids = xcalloc(b.nfiles ? b.nfiles : 1, sizeof(*b.file_ids));
	b.comp_dir = dwarf_formstring(dwarf_attr(&b.cudie, DW_AT_comp_dir, &a));
	if (b.comp_dir && b.comp_dir[0] != '/')
		b.comp_dir = NULL;
	walk(&b, &b.cudie, NO_NODE, 0);
	if (u->nr_nodes)
		u->nodes = xrealloc(u->nodes, u->nr_nodes * sizeof(*u->nodes));
	u->ranges = flatten(b.spans, b.nr_spans, &u->nr_ranges);
	copy_lines(&b);
	free(b.spans);
	free(b.file_ids);
}

/*
 * A unit is read by itself if it can be, and the sections are not in
 * memory: libc's then cost some 0.5 MB for a moment, not 9 MB held for
 * DWARF_IDLE_TRIMS drains, so an agent whose processes touch a new unit
 * now and then keeps a flat RSS. Past DWARF_ALONE_PER_DRAIN of them in a
 * drain (a program starting, the first drains), the sections are read
 * whole: one read for them all.
 */
static void index_unit(struct dwarf_index *d, struct dw_unit *u)
{
	bool alone = u->alone && !d->elf && d->alone_now < DWARF_ALONE_PER_DRAIN &&
		     begin_alone(d, u);
	Dwarf_Die cudie;

	u->indexed = true;
	if ((alone || begin_dwarf(d)) && dwarf_offdie(d->dw, u->offset, &cudie))
		copy_unit(d, u, &cudie);
	if (alone)
		drop_image(d);
	else if (d->dw_rows >= DWARF_ROWS_PER_BEGIN)
		end_dwarf(d);
}

/* Lookups ----------------------------------------------------------------- */

static const char *string_or_null(const struct dwarf_index *d, uint32_t id)
{
	return id ? strtab_get(&d->strings, id) : NULL;
}

int dwarf_index_frames(struct dwarf_index *d, uint64_t vaddr, struct dwarf_frame *out, int max)
{
	const struct dw_range *r;
	struct dw_unit *u;
	uint32_t node, depth = 0, i, file = 0, line = 0;
	size_t k;
	int n = 0;

	if (max <= 0)
		return 0;
	if (!d->units_read)
		read_units(d);
	u = find_unit(d, vaddr);
	if (!u)
		return 0;
	if (!u->indexed)
		index_unit(d, u);
	/* As libdw's dwarf_getsrc_die(): the last row at or below, unless it ends a sequence. */
	k = COUNT_AT_OR_BELOW(u->lines, u->nr_lines, addr, vaddr);
	if (k && u->lines[k - 1].line != LINE_END) {
		file = u->lines[k - 1].file;
		line = u->lines[k - 1].line;
	}
	r = range_find(u->ranges, u->nr_ranges, vaddr);
	if (!r) {
		out[0] = (struct dwarf_frame){ NULL, string_or_null(d, file), line };
		return 1;
	}
	for (node = r->idx; node != NO_NODE; node = u->nodes[node].parent)
		depth++;
	/*
	 * The line table says where in the innermost function; each inlined
	 * call says where in the function it was inlined into.
	 */
	for (i = 0, node = r->idx; node != NO_NODE; i++, node = u->nodes[node].parent) {
		const struct dw_node *nd = &u->nodes[node];

		if (i + max >= depth)
			out[n++] = (struct dwarf_frame){ string_or_null(d, nd->name),
							 string_or_null(d, file), line };
		file = nd->call_file;
		line = nd->call_line;
	}
	return n;
}

void dwarf_index_reads(const struct dwarf_index *d, size_t *whole, size_t *alone)
{
	*whole = d->reads_whole;
	*alone = d->reads_alone;
}
