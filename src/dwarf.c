// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <libelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/dwarf.h"
#include "bpfprof/elf.h"
#include "bpfprof/util.h"

#define NO_NODE UINT32_MAX

/* A function, or a call inlined into one, that has code. */
struct dw_node {
	const char *name;
	const char *call_file;	/* inlined calls: where the caller makes the call */
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

/* A file name as libdw has it, and joined to an absolute build directory. */
struct dw_file {
	const char *raw;
	char *joined;		/* NULL: raw is the name */
};

struct dw_unit {
	Dwarf_Die die;
	Dwarf_Off offset;
	bool indexed;
	struct dw_node *nodes;
	uint32_t nr_nodes;
	struct dw_range *ranges;
	size_t nr_ranges;
	struct dw_file *files;	/* by raw's address */
	size_t nr_files;
};

struct dwarf_index {
	int fd;			/* ours: libelf reads the file as libdw needs it */
	Elf *elf;
	void **copies;		/* sections given a NUL at their end (terminate_sections) */
	size_t nr_copies;
	Dwarf *dw;		/* NULL until the first lookup, or if libdw refused it */
	bool units_read;
	bool used;		/* looked up since the last dwarf_index_trim() */
	uint32_t idle;		/* trims in a row without a lookup */
	uint32_t patience;	/* idle trims before letting go; doubles each time */
	struct dw_unit *units;	/* in .debug_info order, so sorted by offset */
	size_t nr_units;
	struct dw_range *ranges;	/* unit ranges */
	size_t nr_ranges;
};

static bool is_debug_section(const char *name)
{
	return !strncmp(name, ".debug_", 7) || !strncmp(name, ".zdebug_", 8) ||
	       !strncmp(name, ".gnu.debuglto_.debug_", 21);
}

/* An unsigned field of the file's byte order, of 4 or 8 bytes. */
static uint64_t field(const unsigned char *p, int size, bool big_endian)
{
	uint64_t v = 0;
	int i;

	for (i = 0; i < size; i++)
		v |= (uint64_t)p[big_endian ? size - 1 - i : i] << (8 * i);
	return v;
}

/*
 * What libdw will hold of a section: its bytes, and as many again inflated
 * if compressed. The inflated size is read from the section's first bytes
 * alone: libelf's gelf_getchdr() would read the whole section for it, some
 * 4 MB for libc's debug file, for every such file mapped.
 */
static int section_bytes(Elf *elf, int fd, const GElf_Shdr *sh, const char *name, uint64_t *bytes)
{
	const char *ident = elf_getident(elf, NULL);
	bool big_endian = ident && ident[EI_DATA] == ELFDATA2MSB;
	bool elf64 = gelf_getclass(elf) == ELFCLASS64;
	unsigned char head[24];

	*bytes = sh->sh_size;
	if (sh->sh_size > DWARF_MAX_BYTES)
		return -EFBIG;
	if (sh->sh_flags & SHF_COMPRESSED) {
		/* Elf64_Chdr: type, reserved, size; Elf32_Chdr: type, size. */
		if (pread(fd, head, 16, sh->sh_offset) != 16)
			return -EINVAL;
		*bytes += elf64 ? field(head + 8, 8, big_endian) : field(head + 4, 4, big_endian);
	} else if (!strncmp(name, ".zdebug_", 8)) {
		/* GNU's: "ZLIB", then the inflated size, big-endian. */
		if (pread(fd, head, 12, sh->sh_offset) != 12 || memcmp(head, "ZLIB", 4))
			return -EINVAL;
		*bytes += field(head + 4, 8, true);
	}
	return *bytes > DWARF_MAX_BYTES ? -EFBIG : 0;
}

/*
 * Whether the file has DWARF we can read, before libdw reads any of it:
 * some .debug_info; no .gnu_debugaltlink (dwz) or .debug_sup, naming a
 * file libdw would open by that name on its own (a FIFO there would
 * block us forever); all its debug sections within DWARF_MAX_BYTES.
 */
static int check_sections(Elf *elf, int fd)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	uint64_t total = 0, bytes;
	bool info = false;
	int err;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return -ENODATA;
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || !sh.sh_size ||
		    !(name = elf_strptr(elf, shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".gnu_debugaltlink") || !strcmp(name, ".debug_sup"))
			return -EOPNOTSUPP;
		if (!is_debug_section(name))
			continue;
		if (!strcmp(name, ".debug_info") || !strcmp(name, ".zdebug_info"))
			info = true;
		if ((err = section_bytes(elf, fd, &sh, name, &bytes)))
			return err;
		if (bytes > DWARF_MAX_BYTES - total)
			return -EFBIG;
		total += bytes;
	}
	return info ? 0 : -ENODATA;
}

/*
 * libdw is started on the first lookup, not here: it inflates every
 * compressed debug section as it starts (80 ms for libc's), and files are
 * opened as they are mapped, most never sampled. The index reads the file
 * through a descriptor of its own: no mapping that a truncation of the
 * file would turn into SIGBUS.
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
	if ((err = check_sections(elf, own))) {
		elf_end(elf);
		close(own);
		return err;
	}
	d = xcalloc(1, sizeof(*d));
	d->fd = own;
	d->elf = elf;
	*out = d;
	return 0;
}

/* Drops what libdw read and our index of it; the file stays open. */
static void forget_units(struct dwarf_index *d)
{
	size_t i;

	for (i = 0; i < d->nr_units; i++) {
		struct dw_unit *u = &d->units[i];
		size_t j;

		for (j = 0; j < u->nr_files; j++)
			free(u->files[j].joined);
		free(u->files);
		free(u->nodes);
		free(u->ranges);
	}
	free(d->units);
	free(d->ranges);
	d->units = NULL;
	d->ranges = NULL;
	d->nr_units = d->nr_ranges = 0;
	if (d->dw)
		dwarf_end(d->dw);
	d->dw = NULL;
	/* The inflated sections belong to the Elf handle: end it too. */
	if (d->elf)
		elf_end(d->elf);
	d->elf = NULL;
	for (i = 0; i < d->nr_copies; i++)
		free(d->copies[i]);
	free(d->copies);
	d->copies = NULL;
	d->nr_copies = 0;
	d->units_read = false;
}

void dwarf_index_free(struct dwarf_index *d)
{
	if (!d)
		return;
	forget_units(d);
	close(d->fd);
	free(d);
}

/*
 * libc's debug file alone inflates to some 10 MB, held while libdw has it.
 * A file not looked up for a while lets that go (the next lookup reads it
 * again, some 50 ms for libc's). The while doubles each time, so a file
 * needed now and then is read again only a few times over a long run.
 */
void dwarf_index_trim(struct dwarf_index *d)
{
	if (!d)
		return;
	d->idle = d->used ? 0 : d->idle + 1;
	d->used = false;
	if (!d->patience)
		d->patience = 1;
	if (d->units_read && d->idle >= d->patience) {
		forget_units(d);
		d->patience *= 2;
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
	*nr_out = nr;
	return out;
}

static const struct dw_range *range_find(const struct dw_range *r, size_t n, uint64_t addr)
{
	size_t lo = 0, hi = n;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (r[mid].lo <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && addr < r[lo - 1].hi ? &r[lo - 1] : NULL;
}

/* Units ------------------------------------------------------------------- */

/*
 * libdw reads strings (names, directories) to their NUL without looking
 * where their section ends: in a file whose string runs to the end of a
 * section, past it. Each debug section libdw holds (inflated, if it was
 * compressed) that does not end in a NUL is therefore replaced, under
 * libdw, by a copy with NULs after its end, its size the same: every
 * string then ends inside its section or right after it.
 */
#define SECTION_PAD 16

static void terminate_sections(struct dwarf_index *d)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx, alloc = 0;

	if (elf_getshdrstrndx(d->elf, &shstrndx))
		return;
	while ((scn = elf_nextscn(d->elf, scn))) {
		const char *name;
		Elf_Data *data;
		GElf_Shdr sh;
		char *copy;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS ||
		    !(name = elf_strptr(d->elf, shstrndx, sh.sh_name)) || !is_debug_section(name))
			continue;
		/* What libdw read: elf_getdata() gives the same buffer, inflated. */
		data = elf_getdata(scn, NULL);
		if (!data || !data->d_buf || !data->d_size ||
		    !((const char *)data->d_buf)[data->d_size - 1])
			continue;
		copy = xmalloc(data->d_size + SECTION_PAD);
		memcpy(copy, data->d_buf, data->d_size);
		memset(copy + data->d_size, 0, SECTION_PAD);
		data->d_buf = copy;
		ALLOC_GROW(d->copies, d->nr_copies + 1, alloc);
		d->copies[d->nr_copies++] = copy;
	}
}

/*
 * The first lookup starts libdw and reads where each compile unit's code
 * is: from the units themselves, as .debug_aranges is often missing
 * (Clang does not write it). Type, partial and skeleton units hold none.
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
	/* Trimmed: the file again, checked again (it may have changed since). */
	if (!d->elf) {
		d->elf = elf_open_fd(d->fd);
		if (!d->elf || elf_kind(d->elf) != ELF_K_ELF || check_sections(d->elf, d->fd))
			return;
	}
	d->dw = dwarf_begin_elf(d->elf, DWARF_C_READ, NULL);
	if (!d->dw)
		return;
	terminate_sections(d);
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
		d->units[d->nr_units].die = cudie;
		d->units[d->nr_units].offset = dwarf_dieoffset(&cudie);
		while ((off = dwarf_ranges(&cudie, off, &base, &lo, &hi)) > 0)
			add_span(&spans, &nr_spans, &spans_alloc, lo, hi, d->nr_units, 0);
		d->nr_units++;
	}
	d->ranges = flatten(spans, nr_spans, &d->nr_ranges);
	free(spans);
}

static struct dw_unit *find_unit(struct dwarf_index *d, uint64_t addr)
{
	const struct dw_range *r = range_find(d->ranges, d->nr_ranges, addr);
	size_t lo = 0, hi = d->nr_units;
	Dwarf_Die cudie;
	Dwarf_Off off;

	if (r)
		return &d->units[r->idx];
	/* A unit that does not say its ranges may still be in .debug_aranges. */
	if (!dwarf_addrdie(d->dw, addr, &cudie))
		return NULL;
	off = dwarf_dieoffset(&cudie);
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (d->units[mid].offset == off)
			return &d->units[mid];
		if (d->units[mid].offset < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	return NULL;
}

/* One unit's functions and inlined calls ------------------------------ */

struct unit_builder {
	struct dw_unit *u;
	Dwarf_Files *files;
	size_t nfiles;
	const char *comp_dir;	/* NULL unless absolute */
	struct dw_span *spans;
	size_t nr_spans, spans_alloc, nodes_alloc;
};

static int file_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)((const struct dw_file *)a)->raw;
	uintptr_t y = (uintptr_t)((const struct dw_file *)b)->raw;

	return x < y ? -1 : x > y;
}

/*
 * A file name relative to an absolute build directory, joined to it as
 * addr2line does. A relative build directory is what is left of one
 * after -fdebug-prefix-map (distribution packages): joining it would only
 * repeat directories.
 */
static void read_files(struct unit_builder *b)
{
	struct dw_unit *u = b->u;
	Dwarf_Attribute a;
	size_t i;

	b->comp_dir = dwarf_formstring(dwarf_attr(&u->die, DW_AT_comp_dir, &a));
	if (!b->comp_dir || b->comp_dir[0] != '/' || !b->files)
		return;
	u->files = xcalloc(b->nfiles ? b->nfiles : 1, sizeof(*u->files));
	for (i = 0; i < b->nfiles; i++) {
		const char *raw = dwarf_filesrc(b->files, i, NULL, NULL);
		struct strbuf sb;

		if (!raw)
			continue;
		u->files[u->nr_files].raw = raw;
		if (raw[0] != '/') {
			strbuf_init(&sb);
			strbuf_addf(&sb, "%s/%s", b->comp_dir, raw);
			u->files[u->nr_files].joined = strbuf_detach(&sb);
		}
		u->nr_files++;
	}
	qsort(u->files, u->nr_files, sizeof(*u->files), file_cmp);
}

/* The name to show for a file name libdw gave for this unit. */
static const char *file_name(const struct dw_unit *u, const char *raw)
{
	struct dw_file key = { raw, NULL };
	const struct dw_file *f;

	if (!raw || !u->nr_files)
		return raw;
	f = bsearch(&key, u->files, u->nr_files, sizeof(*u->files), file_cmp);
	return f && f->joined ? f->joined : raw;
}

/* As the symbol table spells it when DWARF knows that spelling. */
static const char *die_name(Dwarf_Die *die)
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
			return s;
	return NULL;
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
	uint64_t file;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0)
		add_span(&b->spans, &b->nr_spans, &b->spans_alloc, lo, hi, u->nr_nodes, depth);
	if (b->nr_spans == before)
		return NO_NODE;
	ALLOC_GROW(u->nodes, u->nr_nodes + 1, b->nodes_alloc);
	n = &u->nodes[u->nr_nodes];
	n->name = die_name(die);
	n->parent = parent;
	n->call_file = NULL;
	n->call_line = 0;
	if (parent != NO_NODE) {
		file = die_udata(die, DW_AT_call_file);
		if (b->files && file < b->nfiles)
			n->call_file = file_name(u, dwarf_filesrc(b->files, file, NULL, NULL));
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

static void index_unit(struct dw_unit *u)
{
	struct unit_builder b = { .u = u };

	u->indexed = true;
	if (dwarf_getsrcfiles(&u->die, &b.files, &b.nfiles))
		b.files = NULL;
	read_files(&b);
	walk(&b, &u->die, NO_NODE, 0);
	u->ranges = flatten(b.spans, b.nr_spans, &u->nr_ranges);
	free(b.spans);
}

/* Lookups ----------------------------------------------------------------- */

int dwarf_index_frames(struct dwarf_index *d, uint64_t vaddr, struct dwarf_frame *out, int max)
{
	const struct dw_range *r;
	struct dw_unit *u;
	Dwarf_Line *row;
	const char *file = NULL;
	uint32_t node, depth = 0, i;
	int line = 0, n = 0;

	if (max <= 0)
		return 0;
	d->used = true;
	if (!d->units_read)
		read_units(d);
	if (!d->dw)
		return 0;
	u = find_unit(d, vaddr);
	if (!u)
		return 0;
	if (!u->indexed)
		index_unit(u);
	row = dwarf_getsrc_die(&u->die, vaddr);
	if (row) {
		file = file_name(u, dwarf_linesrc(row, NULL, NULL));
		if (dwarf_lineno(row, &line) || line < 0)
			line = 0;
	}
	r = range_find(u->ranges, u->nr_ranges, vaddr);
	if (!r) {
		out[0] = (struct dwarf_frame){ NULL, file, line };
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
			out[n++] = (struct dwarf_frame){ nd->name, file, line };
		file = nd->call_file;
		line = nd->call_line;
	}
	return n;
}
