// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The DWARF index (dwarf.h): units, their address ranges, functions,
 * inlined calls and lines, copied out of libdw as lookups need them; the
 * debug sections libdw reads come from dwarf_image.c.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/intern.h"
#include "bpfprof/util.h"
#include "dwarf_private.h"

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
	drop_inflate_points(d);
	for (i = 0; i < d->nr_units; i++) {
		free(d->units[i].nodes);
		free(d->units[i].ranges);
		free(d->units[i].lines);
	}
	free(d->units);
	free(d->ranges);
	free(d->aranges);
	free(d->by_unit);
	d->by_unit = NULL;
	d->units = NULL;
	d->ranges = d->aranges = NULL;
	d->nr_units = d->nr_ranges = d->nr_aranges = 0;
	strtab_release(&d->strings);
	strtab_init(&d->strings);
	d->units_read = d->failed = d->by_need = false;
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

/* Units by need --------------------------------------------------------- */

/* A set of .debug_aranges: its unit's header offset, the set's place. */
struct arange_set {
	uint64_t info;
	uint32_t set;
};

static int set_cmp(const void *a, const void *b)
{
	const struct arange_set *x = a, *y = b;

	if (x->info != y->info)
		return x->info < y->info ? -1 : 1;
	return x->set < y->set ? -1 : x->set > y->set;
}

static int by_unit_cmp(const void *a, const void *b, void *ranges)
{
	const struct dw_range *x = (const struct dw_range *)ranges + *(const uint32_t *)a,
			      *y = (const struct dw_range *)ranges + *(const uint32_t *)b;

	if (x->idx != y->idx)
		return x->idx < y->idx ? -1 : 1;
	return x->lo < y->lo ? -1 : x->lo > y->lo;
}

/*
 * .debug_aranges' sets, as libdw reads them (dwarf_getaranges()): each a
 * unit's header offset and its address ranges, to two zeros. The units
 * it names, by offset, become the index's, not yet read; its ranges the
 * index's aranges. False if it is not there or not as libdw would take
 * it, or two units' ranges overlap (the unit whose ranges a lookup would
 * meet first is then the whole index's to say).
 */
static bool read_aranges_by_need(struct dwarf_index *d)
{
	const unsigned char *sec = d->image + d->scn[SCN_ARANGES].at;
	uint64_t size = d->scn[SCN_ARANGES].size, off = 0, body, end, addr, len, max_hi = 0;
	struct dw_span *spans = NULL;
	struct arange_set *sets = NULL;
	uint32_t *unit_of;
	size_t i, nr = 0, alloc = 0, nr_sets = 0, sets_alloc = 0, units_alloc = 0, max_idx = 0;
	unsigned osz, asz;
	bool ok = size > 0;

	while (ok && off < size) {
		uint64_t at;

		end = unit_end(sec, size, off, d->msb, &body, &osz);
		if (!end || end - body < 4 + osz || get_uint(sec + body, 2, d->msb) != 2 ||
		    nr_sets >= UINT32_MAX) {
			ok = false;
			break;
		}
		asz = sec[body + 2 + osz];
		if ((asz != 4 && asz != 8) || sec[body + 3 + osz] != 0) {
			ok = false;
			break;
		}
		ALLOC_GROW(sets, nr_sets + 1, sets_alloc);
		sets[nr_sets] = (struct arange_set){ get_uint(sec + body + 2, osz, d->msb), nr_sets };
		/* The tuples start at a multiple of twice the address size from the set's start. */
		at = body + 4 + osz;
		at += (2 * asz - (at - off) % (2 * asz)) % (2 * asz);
		for (;; at += 2 * asz) {
			if (at + 2 * asz > end) {
				ok = false;
				break;
			}
			addr = get_uint(sec + at, asz, d->msb);
			len = get_uint(sec + at + asz, asz, d->msb);
			if (!addr && !len)
				break;
			add_span(&spans, &nr, &alloc, addr, addr + len, nr_sets, 0);
		}
		nr_sets++;
		off = end;
	}
	/* Units by offset, one for the sets of each; spans then name units. */
	unit_of = xmalloc((nr_sets ? nr_sets : 1) * sizeof(*unit_of));
	if (nr_sets)
		qsort(sets, nr_sets, sizeof(*sets), set_cmp);
	for (i = 0; ok && i < nr_sets; i++) {
		if (!i || sets[i].info != sets[i - 1].info) {
			ALLOC_GROW(d->units, d->nr_units + 1, units_alloc);
			memset(&d->units[d->nr_units], 0, sizeof(*d->units));
			d->units[d->nr_units++].info_lo = sets[i].info;
		}
		unit_of[sets[i].set] = d->nr_units - 1;
	}
	for (i = 0; ok && i < nr; i++)
		spans[i].idx = unit_of[spans[i].idx];
	/* No two units' ranges overlap. */
	if (ok && nr)
		qsort(spans, nr, sizeof(*spans), span_cmp);
	for (i = 0; ok && i < nr; i++) {
		if (spans[i].lo < max_hi && spans[i].idx != max_idx)
			ok = false;
		if (spans[i].hi > max_hi) {
			max_hi = spans[i].hi;
			max_idx = spans[i].idx;
		}
	}
	if (ok) {
		d->aranges = flatten(spans, nr, &d->nr_aranges);
		d->by_unit = xmalloc((d->nr_aranges ? d->nr_aranges : 1) * sizeof(*d->by_unit));
		for (i = 0; i < d->nr_aranges; i++)
			d->by_unit[i] = i;
		if (d->nr_aranges)
			qsort_r(d->by_unit, d->nr_aranges, sizeof(*d->by_unit), by_unit_cmp,
				d->aranges);
	}
	free(unit_of);
	free(sets);
	free(spans);
	return ok && d->nr_units;
}

/*
 * The first lookup of a file with .debug_aranges reads that alone (and
 * the small sections libdw needs whole): which unit has an address, its
 * offset; the units' bytes are read as lookups reach them
 * (index_by_need()). Without it, or when libdw would read it otherwise,
 * every unit at once, as read_units() does.
 */
static bool units_by_need(struct dwarf_index *d)
{
	if (d->no_by_need || begin_by_need(d))
		return false;
	if (read_aranges_by_need(d)) {
		d->units_read = d->by_need = true;
		return true;
	}
	free(d->units);
	free(d->aranges);
	free(d->by_unit);
	d->units = NULL;
	d->aranges = NULL;
	d->by_unit = NULL;
	d->nr_units = d->nr_aranges = 0;
	drop_image(d);
	return false;
}

/*
 * From units by need to the whole index, for an address .debug_aranges
 * does not place, or a unit that cannot be read by need: every unit read
 * as read_units() does, the image by need read on to the sections' ends
 * (what it holds is not read again), the units indexed by need kept as
 * they are (the same unit's, the file the same).
 */
static void index_whole(struct dwarf_index *d)
{
	struct dw_unit *old = d->units;
	size_t nr_old = d->nr_units, i;
	struct stat st = d->st;

	if (d->elf && !complete_image(d))
		drop_image(d);
	free(d->aranges);
	free(d->by_unit);
	d->aranges = NULL;
	d->by_unit = NULL;
	d->nr_aranges = 0;
	d->units = NULL;
	d->nr_units = 0;
	d->by_need = false;
	read_units(d);
	for (i = 0; i < nr_old; i++) {
		struct dw_unit *u = old[i].indexed ? unit_at(d, old[i].offset) : NULL;

		if (u && !u->indexed && st.st_size == d->st.st_size &&
		    st.st_mtim.tv_sec == d->st.st_mtim.tv_sec &&
		    st.st_mtim.tv_nsec == d->st.st_mtim.tv_nsec) {
			u->indexed = true;
			u->nodes = old[i].nodes;
			u->nr_nodes = old[i].nr_nodes;
			u->ranges = old[i].ranges;
			u->nr_ranges = old[i].nr_ranges;
			u->lines = old[i].lines;
			u->nr_lines = old[i].nr_lines;
			continue;
		}
		free(old[i].nodes);
		free(old[i].ranges);
		free(old[i].lines);
	}
	free(old);
}

/*
 * Whether unit u's own ranges (its DIE's) are its .debug_aranges ranges:
 * then the unit aranges gives an address is the one the whole index
 * gives it (its units' ranges first).
 */
static bool same_ranges(struct dwarf_index *d, const struct dw_unit *u, Dwarf_Die *cudie)
{
	struct dw_span *spans = NULL;
	struct dw_range *own;
	size_t nr_spans = 0, alloc = 0, nr_own, i, k = 0, lo_i, hi_i;
	uint32_t idx = u - d->units;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	bool same = true;

	while ((off = dwarf_ranges(cudie, off, &base, &lo, &hi)) > 0)
		add_span(&spans, &nr_spans, &alloc, lo, hi, idx, 0);
	own = flatten(spans, nr_spans, &nr_own);
	free(spans);
	/* The unit's first in by_unit, then each in turn. */
	for (lo_i = 0, hi_i = d->nr_aranges; lo_i < hi_i;) {
		size_t mid = lo_i + (hi_i - lo_i) / 2;

		if (d->aranges[d->by_unit[mid]].idx < idx)
			lo_i = mid + 1;
		else
			hi_i = mid;
	}
	for (i = lo_i; i < d->nr_aranges && d->aranges[d->by_unit[i]].idx == idx && same; i++, k++) {
		const struct dw_range *r = &d->aranges[d->by_unit[i]];

		same = k < nr_own && own[k].lo == r->lo && own[k].hi == r->hi;
	}
	same = same && k == nr_own;
	free(own);
	return same;
}

/*
 * Unit u's bytes read by need: its header, then the rest of it in
 * .debug_info, its abbreviations, its line program, each section
 * inflated on from where the last unit's left it. False (nothing
 * indexed) when it is not a compile unit that can be read alone and
 * whose ranges are its .debug_aranges' (the whole index is then read).
 */
static bool index_by_need(struct dwarf_index *d, struct dw_unit *u)
{
	const unsigned char *info = d->image + d->scn[SCN_INFO].at;
	const unsigned char *abbrev = d->image + d->scn[SCN_ABBREV].at;
	uint64_t h = u->info_lo, end, body, next, ab, ab_end = 0, want, stmt, at;
	size_t hsize;
	unsigned osz;
	uint8_t type;
	bool out = false;
	Dwarf_Die cudie;
	Dwarf_Attribute a;
	Dwarf_Word w;

	d->used = true;
	if (!d->dw && !(d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL)))
		return false;
	if (!grow_section(d, SCN_INFO, h + 12) ||
	    !(end = unit_end(info, d->scn[SCN_INFO].size, h, d->msb, &body, &osz)) ||
	    !grow_section(d, SCN_INFO, end) ||
	    dwarf_next_unit(d->dw, h, &next, &hsize, NULL, &ab, NULL, NULL, NULL, NULL) ||
	    next != end)
		return false;
	/* The abbreviations: read on until their table ends. */
	for (want = ab + 4096; !ab_end; want += want - ab) {
		if (!grow_section(d, SCN_ABBREV, want))
			return false;
		ab_end = abbrev_end(abbrev, d->prefix[SCN_ABBREV].have, ab, &out);
		if (!ab_end && d->prefix[SCN_ABBREV].have >= d->scn[SCN_ABBREV].size)
			return false;
	}
	if (out || !dwarf_offdie(d->dw, h + hsize, &cudie) ||
	    dwarf_cu_info(cudie.cu, NULL, &type, NULL, NULL, NULL, NULL, NULL) ||
	    type != DW_UT_compile)
		return false;
	if (dwarf_attr(&cudie, DW_AT_stmt_list, &a) && !dwarf_formudata(&a, &w)) {
		stmt = w;
		if (!grow_section(d, SCN_LINE, stmt + 12) ||
		    !(end = unit_end(d->image + d->scn[SCN_LINE].at, d->scn[SCN_LINE].size, stmt,
				     d->msb, &at, &osz)) ||
		    !grow_section(d, SCN_LINE, end))
			return false;
	}
	if (!same_ranges(d, u, &cudie))
		return false;
	u->offset = h + hsize;
	unit_parts(d, u, &cudie);
	if (!u->alone)
		return false;
	u->indexed = true;
	d->reads_need++;
	copy_unit(d, u, &cudie);
	if (d->dw_rows >= DWARF_ROWS_PER_BEGIN)
		end_dwarf(d);
	return true;
}

static struct dw_unit *find_unit(struct dwarf_index *d, uint64_t addr)
{
	const struct dw_range *r;

	if (d->by_need) {
		r = range_find(d->aranges, d->nr_aranges, addr);
		if (r)
			return &d->units[r->idx];
		index_whole(d);
	}
	r = range_find(d->ranges, d->nr_ranges, addr);
	if (!r)
		r = range_find(d->aranges, d->nr_aranges, addr);
	return r ? &d->units[r->idx] : NULL;
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
	if (!d->units_read && !units_by_need(d))
		read_units(d);
	u = find_unit(d, vaddr);
	if (!u)
		return 0;
	/* Once the image by need was let go, the next unit is read as without .debug_aranges. */
	if (!u->indexed && d->by_need && (!d->elf || !index_by_need(d, u))) {
		index_whole(d);
		u = find_unit(d, vaddr);
		if (!u)
			return 0;
	}
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

size_t dwarf_index_reads_by_need(const struct dwarf_index *d)
{
	return d->reads_need;
}

void dwarf_index_by_need(struct dwarf_index *d, bool on)
{
	d->no_by_need = !on;
}
