// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The DWARF index's image: the debug sections libdw needs, inflated by us
 * into one ELF image in memory, whole or with one unit's bytes alone.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include <zlib.h>

#include "bpfprof/elf.h"
#include "bpfprof/util.h"
#include "dwarf_private.h"

/* The names of the sections the image holds (dwarf_private.h's SCN_*), after .debug_. */
static const char *const wanted_sections[NR_SCNS] = {
	[SCN_INFO] = "info", [SCN_ABBREV] = "abbrev", [SCN_STR] = "str",
	[SCN_STR_OFFSETS] = "str_offsets", [SCN_LINE] = "line", [SCN_LINE_STR] = "line_str",
	[SCN_ADDR] = "addr", [SCN_RANGES] = "ranges", [SCN_RNGLISTS] = "rnglists",
	[SCN_ARANGES] = "aranges",
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
int check_sections(Elf *elf, int fd)
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

/* A point where inflating can start again, if the last is INFLATE_SPAN behind (read: bytes in). */
static void take_point(struct inflate_points *pts, const z_stream *z, const unsigned char *out,
		       uint64_t read)
{
	uint64_t at = z->total_out;
	struct inflate_point *p;

	if (at < INFLATE_SPAN || at - (pts->n ? pts->p[pts->n - 1].out : 0) < INFLATE_SPAN)
		return;
	pts->p = xrealloc(pts->p, (pts->n + 1) * sizeof(*pts->p));
	p = &pts->p[pts->n++];
	p->out = at;
	p->in = read - z->avail_in;
	p->bits = z->data_type & 7;
	memcpy(p->window, out + at - INFLATE_WINDOW, INFLATE_WINDOW);
}

/* The last point at or before lo, or NULL: inflate from the start. */
static const struct inflate_point *point_before(const struct inflate_points *pts, uint64_t lo)
{
	size_t i = pts ? pts->n : 0;

	while (i > 0 && pts->p[i - 1].out > lo)
		i--;
	return i ? &pts->p[i - 1] : NULL;
}

/* z set to inflate from point p on (a raw deflate stream there), or from the start (p NULL). */
static bool inflate_from(z_stream *z, int fd, const struct scn_bytes *b,
			 const struct inflate_point *p)
{
	unsigned char c;

	if (!p)
		return inflateInit(z) == Z_OK;
	if (inflateInit2(z, -15) != Z_OK)
		return false;
	if ((p->bits && (pread(fd, &c, 1, b->offset + p->in - 1) != 1 ||
			 inflatePrime(z, p->bits, c >> (8 - p->bits)) != Z_OK)) ||
	    inflateSetDictionary(z, p->window, INFLATE_WINDOW) != Z_OK) {
		inflateEnd(z);
		return false;
	}
	return true;
}

/*
 * Into out[lo, hi) the section's bytes there, as they are or inflated;
 * the rest of out is not written: in an image for one unit, the other
 * units' pages stay zero pages, never resident. Bytes before lo are
 * inflated through buf's second half and dropped, from the last of pts
 * before lo on; a whole read takes pts (NULL: none kept). buf: 2 * CHUNK
 * bytes.
 */
static bool read_section(int fd, const struct scn_bytes *b, unsigned char *out, uint64_t lo,
			 uint64_t hi, unsigned char *buf, struct inflate_points *pts)
{
	bool whole = !lo && hi == b->size, take = whole && pts && !pts->taken;
	const struct inflate_point *from = whole ? NULL : point_before(pts, lo);
	uint64_t done = from ? from->in : 0, base = from ? from->out : 0;
	z_stream z = { 0 };
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
	if (!b->zlib || !inflate_from(&z, fd, b, from))
		return false;
	if (take)
		pts->n = 0;
	/* To its end when reading up to it: a whole section ends where its stream does. */
	while (rc == Z_OK && (base + z.total_out < hi || hi == b->size)) {
		uint64_t at = base + z.total_out;

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
		if (at < lo) {
			z.next_out = buf + CHUNK;
			z.avail_out = lo - at < CHUNK ? lo - at : CHUNK;
		} else {
			z.next_out = out + at;
			z.avail_out = hi - at;
		}
		/* Taking points, inflate stops at each block's end: where one can be. */
		rc = inflate(&z, take ? Z_BLOCK : Z_NO_FLUSH);
		if (take && rc == Z_OK && (z.data_type & 128) && !(z.data_type & 64))
			take_point(pts, &z, out, done);
	}
	inflateEnd(&z);
	if (base + z.total_out != hi || (hi == b->size && rc != Z_STREAM_END))
		return false;
	if (take)
		pts->taken = true;
	return true;
}

void drop_inflate_points(struct dwarf_index *d)
{
	int w;

	for (w = 0; w < NR_SCNS; w++) {
		free(d->points[w].p);
		d->points[w] = (struct inflate_points){ NULL, 0, false };
	}
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

/* Whether an image for one unit holds a part of section w (section_part()): worth points. */
static bool read_in_part(int w)
{
	return w == SCN_INFO || w == SCN_ABBREV || w == SCN_LINE;
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
 * for unit u alone (section_part()), or by need (prefix: none of the
 * sections read in part yet, grow_section() reads them on), with the same
 * layout.
 */
static int load_image(struct dwarf_index *d, const struct dw_unit *u, bool prefix)
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
	d->partial = prefix;
	buf = xmalloc(2 * CHUNK);
	shdrs = d->image + shoff;
	for (i = 0; i < nr; i++) {
		int w = scns[i].wanted;

		section_part(u, w, scns[i].b.size, &lo, &hi);
		if (prefix && read_in_part(w)) {
			d->prefix[w] = (struct scn_prefix){ .b = scns[i].b };
			hi = 0;
		}
		if (hi > scns[i].b.size || lo > hi ||
		    !read_section(d->fd, &scns[i].b, d->image + scns[i].at, lo, hi, buf,
				  read_in_part(w) ? &d->points[w] : NULL)) {
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
void end_dwarf(struct dwarf_index *d)
{
	d->dw_rows = 0;
	if (d->dw)
		dwarf_end(d->dw);
	d->dw = NULL;
}

/* The sections' prefixes read by need let go: the image is read whole, or dropped. */
static void end_prefixes(struct dwarf_index *d)
{
	int w;

	for (w = 0; w < NR_SCNS; w++) {
		if (d->prefix[w].open)
			inflateEnd(&d->prefix[w].z);
		free(d->prefix[w].buf);
		d->prefix[w] = (struct scn_prefix){ 0 };
	}
	d->partial = false;
}

/* And the sections it read. */
void drop_image(struct dwarf_index *d)
{
	end_dwarf(d);
	end_prefixes(d);
	if (d->elf)
		elf_end(d->elf);
	d->elf = NULL;
	if (d->image)
		munmap(d->image, d->image_size);
	d->image = NULL;
}

/* libdw, over the sections read again if they were let go; false if it cannot be had. */
bool begin_dwarf(struct dwarf_index *d)
{
	if (d->failed)
		return false;
	d->used = true;
	if (d->dw)
		return true;
	if (!d->elf) {
		if (load_image(d, NULL, false)) {
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
bool begin_alone(struct dwarf_index *d, const struct dw_unit *u)
{
	if (d->failed)
		return false;
	d->used = true;
	if (load_image(d, u, false))
		return false;
	if (!(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		drop_image(d);
		return false;
	}
	d->reads_alone++;
	d->alone_now++;
	return true;
}

int begin_by_need(struct dwarf_index *d)
{
	int err;

	if (d->failed)
		return -EINVAL;
	d->used = true;
	if (d->elf)
		drop_image(d);
	if ((err = load_image(d, NULL, true)))
		return err;
	if (!(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL))) {
		drop_image(d);
		return -EINVAL;
	}
	return 0;
}

/*
 * A prefix is inflated straight into the image, from where it stopped:
 * every byte before the furthest unit needed is inflated once (a deflate
 * stream has no other way to it) and kept, the units' headers before it
 * with it (libdw walks them to find a unit). Taken in steps of CHUNK at
 * least, and points where inflating can start again on the way, as a
 * whole read takes them, for units read alone later.
 */
bool grow_section(struct dwarf_index *d, int w, uint64_t hi)
{
	struct scn_prefix *p = &d->prefix[w];
	unsigned char *out = d->image + d->scn[w].at;
	struct inflate_points *pts = &d->points[w];
	int rc = Z_OK;

	if (!d->partial || !d->scn[w].size)
		return false;
	if (hi > d->scn[w].size)
		hi = d->scn[w].size;
	if (p->have >= hi)
		return true;
	hi = hi - p->have < CHUNK ? p->have + CHUNK : hi;
	if (hi > d->scn[w].size)
		hi = d->scn[w].size;
	if (!p->b.compressed) {
		while (p->have < hi) {
			ssize_t n = pread(d->fd, out + p->have, hi - p->have, p->b.offset + p->have);

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				return false;
			p->have += n;
		}
		return true;
	}
	if (!p->b.zlib)
		return false;
	if (!p->open) {
		if (p->have || inflateInit(&p->z) != Z_OK)
			return false;
		p->open = true;
		p->buf = xmalloc(CHUNK);
		if (!pts->taken)
			pts->n = 0;
	}
	while (rc == Z_OK && p->have < hi) {
		if (!p->z.avail_in) {
			size_t want = p->b.len - p->in < CHUNK ? p->b.len - p->in : CHUNK;
			ssize_t n = want ? pread(d->fd, p->buf, want, p->b.offset + p->in) : 0;

			if (n < 0 && errno == EINTR)
				continue;
			if (n <= 0)
				break;
			p->in += n;
			p->z.next_in = p->buf;
			p->z.avail_in = n;
		}
		p->z.next_out = out + p->have;
		p->z.avail_out = hi - p->have;
		rc = inflate(&p->z, Z_BLOCK);
		p->have = p->z.total_out;
		if (!pts->taken && rc == Z_OK && (p->z.data_type & 128) && !(p->z.data_type & 64))
			take_point(pts, &p->z, out, p->in);
	}
	if (rc == Z_STREAM_END) {
		inflateEnd(&p->z);
		p->open = false;
		if (p->have != d->scn[w].size)
			return false;
		pts->taken = true;
	}
	return p->have >= hi;
}

/*
 * An image by need made whole: its sections read on to their ends, from
 * where they stopped (none of it read twice). False if one cannot be.
 */
bool complete_image(struct dwarf_index *d)
{
	int w;

	if (!d->elf || !d->partial)
		return false;
	for (w = 0; w < NR_SCNS; w++)
		if (read_in_part(w) && d->scn[w].size && !grow_section(d, w, d->scn[w].size))
			return false;
	end_prefixes(d);
	d->reads_whole++;
	return true;
}
