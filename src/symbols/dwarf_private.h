/* SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only */
/*
 * Inside the DWARF index (dwarf.h): its types, shared by dwarf.c (units,
 * ranges, lines, lookups) and dwarf_image.c (the debug sections read into
 * an ELF image in memory for libdw, whole or for one unit alone).
 */
#ifndef BPFPROF_DWARF_PRIVATE_H
#define BPFPROF_DWARF_PRIVATE_H

#include <elfutils/libdw.h>
#include <gelf.h>
#include <libelf.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/stat.h>
#include <zlib.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/intern.h"

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

/*
 * Where inflating a compressed section can start again, other than at its
 * start: a deflate block's first bit and the 32 KiB of output before it,
 * which its back-references may reach (as zlib's examples/zran.c). Taken
 * every INFLATE_SPAN bytes of output while a section is read whole, so
 * that one unit's bytes, read alone later, are inflated from the last
 * point before them, not from the section's start.
 */
#define INFLATE_SPAN (1024 * 1024)
#define INFLATE_WINDOW 32768

struct inflate_point {
	uint64_t out;		/* inflated bytes before it */
	uint64_t in;		/* compressed bytes before it, the last maybe in part */
	int bits;		/* of the byte before in, still to inflate (0: none) */
	unsigned char window[INFLATE_WINDOW];
};

struct inflate_points {
	struct inflate_point *p;
	size_t n;
	bool taken;		/* the section was read whole once: p is all there will be */
};

/* Where a section's bytes are in the file, and how many libdw reads. */
struct scn_bytes {
	uint64_t offset, len;	/* in the file, past a compression header */
	uint64_t size;		/* inflated, or len */
	bool compressed;
	bool zlib;		/* compressed, and in a way we inflate */
};

/*
 * A section of an image by need (load_image()'s prefix): its bytes from
 * its start up to have, and where inflating them stopped, to go on from
 * there when a unit further on is needed.
 */
struct scn_prefix {
	struct scn_bytes b;
	uint64_t have;		/* bytes in the image */
	uint64_t in;		/* compressed bytes read */
	bool open;		/* z inflates on from have */
	z_stream z;
	unsigned char *buf;	/* z's input */
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
	size_t reads_need;	/* units read by need */
	uint32_t alone_now;	/* one unit's, since the last dwarf_index_trim() */
	Elf *elf;		/* over image; NULL when let go */
	Dwarf *dw;		/* over elf; NULL until units are read or indexed */
	size_t dw_rows;		/* line table rows libdw read since it began */
	bool units_read;
	bool no_by_need;	/* every unit read on the first lookup, as without .debug_aranges */
	bool by_need;		/* units known from .debug_aranges, read as lookups reach them */
	bool partial;		/* the image holds prefix[]'s bytes of .debug_info, abbrev, line */
	struct scn_prefix prefix[NR_SCNS];
	bool failed;		/* the sections could not be read, or are not the units' any more */
	bool used;		/* the sections needed since the last dwarf_index_trim() */
	uint32_t idle;		/* trims in a row without */
	struct dw_unit *units;	/* in .debug_info order, so sorted by offset */
	size_t nr_units;
	struct dw_range *ranges;	/* unit ranges */
	size_t nr_ranges;
	struct dw_range *aranges;	/* .debug_aranges', for addresses no unit claims */
	size_t nr_aranges;
	uint32_t *by_unit;	/* by need: aranges' indexes, by unit, then address */
	struct strtab strings;	/* names and file names */
	struct inflate_points points[NR_SCNS];	/* of the compressed sections */
};

/* dwarf_image.c ----------------------------------------------------------- */

/*
 * Whether the file has DWARF we can read, before any of it is read
 * (0, or -ENODATA, -EOPNOTSUPP, -EFBIG, -EINVAL).
 */
int check_sections(Elf *elf, int fd);
/* libdw, over the sections read again if they were let go; false if it cannot be had. */
bool begin_dwarf(struct dwarf_index *d);
/* libdw over an image of unit u's bytes alone; false if it cannot be had. */
bool begin_alone(struct dwarf_index *d, const struct dw_unit *u);
/*
 * An image by need: the small sections whole (and .debug_aranges), none
 * of .debug_info, .debug_abbrev and .debug_line yet; 0 or a negative errno.
 */
int begin_by_need(struct dwarf_index *d);
/* Section w of it read up to at least hi (or its end); false if it cannot be. */
bool grow_section(struct dwarf_index *d, int w, uint64_t hi);
/* All of it: the whole image, as begin_dwarf() would read it; false if it cannot be. */
bool complete_image(struct dwarf_index *d);
/* Forgets where inflating can start again: the file's bytes are to be read anew. */
void drop_inflate_points(struct dwarf_index *d);
/* Lets libdw go: what it read of units, abbreviations, line tables. */
void end_dwarf(struct dwarf_index *d);
/* And the sections it read. */
void drop_image(struct dwarf_index *d);

#endif
