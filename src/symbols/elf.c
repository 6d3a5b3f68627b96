// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/util.h"

/* Symbols as read, with how good a name each is for its address. */
struct ranked_sym {
	struct elf_sym sym;
	bool sized;		/* the table gave its size */
	unsigned rank;
	size_t order;		/* as read: the last tie-break */
};

struct sym_builder {
	struct elf_symtab *t;
	struct ranked_sym *items;
	size_t nr, alloc, names_alloc;
};

/*
 * How much of a symbol's name is its name: a symbol version
 * (f@@GLIBC_2.34 in a debug file's .symtab) is not, except "@plt"; nor
 * are blanks at its end (no compiler writes them; a frame shown with
 * them would end a folded line in two spaces).
 */
static size_t name_len(const char *name)
{
	size_t n = strcspn(name, "@");

	if (!strcmp(name + n, "@plt"))
		return strlen(name);
	while (n && (name[n - 1] == ' ' || name[n - 1] == '\t'))
		n--;
	return n;
}

/* Cuts the name at off to its first ELF_MAX_NAME bytes, not inside a UTF-8 sequence. */
static void cut_name(char *names, size_t off)
{
	size_t n = strnlen(names + off, ELF_MAX_NAME + 1);

	if (n <= ELF_MAX_NAME)
		return;
	n = ELF_MAX_NAME;
	while (n && ((unsigned char)names[off + n] & 0xc0) == 0x80)
		n--;
	names[off + n] = '\0';
}

/*
 * Adds a symbol named by the string at t->names + off, in section own.
 * One without a size (crti's _init, a label in assembly) covers up to
 * the next one, as perf has it, but never past its own section: not
 * into the PLT.
 */
static void add_sym_at(struct sym_builder *b, const GElf_Sym *sym, size_t off, const GElf_Shdr *own)
{
	int bind = GELF_ST_BIND(sym->st_info);
	struct ranked_sym *r;

	ALLOC_GROW(b->items, b->nr + 1, b->alloc);
	r = &b->items[b->nr];
	r->sym.addr = sym->st_value;
	r->sym.size = sym->st_size;
	r->sized = sym->st_size != 0;
	if (!r->sized && sym->st_value >= own->sh_addr && sym->st_value - own->sh_addr < own->sh_size)
		r->sym.size = own->sh_size - (sym->st_value - own->sh_addr);
	r->sym.name = off;
	/* Prefer functions, then global over weak over local names, then sized symbols. */
	r->rank = (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE ? 8 : 0) +
		  (bind == STB_GLOBAL ? 4 : bind == STB_WEAK ? 2 : 0) + r->sized;
	r->order = b->nr++;
}

/* Adds a sized symbol with a name of its own (not in the string table), appended to the names. */
static void add_sym(struct sym_builder *b, const GElf_Sym *sym, const char *name)
{
	static const GElf_Shdr no_section;
	struct elf_symtab *t = b->t;
	size_t n = name_len(name), off = t->names_len;

	if (!n)
		return;
	ALLOC_GROW(t->names, t->names_len + n + 1, b->names_alloc);
	memcpy(t->names + off, name, n);
	t->names[off + n] = '\0';
	t->names_len += n + 1;
	cut_name(t->names, off);
	add_sym_at(b, sym, off, &no_section);
}

/*
 * A function, or a label in code: assembly entry points such as ld.so's
 * _start are NOTYPE symbols of size 0 in an executable section, and perf
 * names them too. Sets *own to the symbol's section.
 */
static bool is_code(Elf *elf, const GElf_Sym *sym, GElf_Shdr *own)
{
	int type = GELF_ST_TYPE(sym->st_info);

	if ((type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE) ||
	    sym->st_shndx == SHN_UNDEF || sym->st_shndx >= SHN_LORESERVE || sym->st_value == 0 ||
	    !gelf_getshdr(elf_getscn(elf, sym->st_shndx), own))
		return false;
	return type != STT_NOTYPE || (own->sh_flags & SHF_EXECINSTR);
}

/*
 * The names are the symbol table's string table, copied once: whatever
 * its symbols point at (many may share one long string), they take no
 * more memory than the table itself. A name is cut in place (at a
 * version, or at ELF_MAX_NAME bytes): a name sharing its bytes reads
 * the same there anyway, or is as long as the limit already.
 */
static bool copy_strings(struct sym_builder *b, Elf *elf, size_t strndx)
{
	struct elf_symtab *t = b->t;
	Elf_Scn *scn = elf_getscn(elf, strndx);
	Elf_Data *data;
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type != SHT_STRTAB ||
	    (sh.sh_flags & SHF_COMPRESSED))
		return false;
	data = elf_section_data(scn, ELF_MAX_STRTAB_BYTES);
	if (!data || !data->d_buf || !data->d_size)
		return false;
	free(t->names);
	t->names = xmalloc(data->d_size + 1);
	memcpy(t->names, data->d_buf, data->d_size);
	/* A last string without its NUL is no name: this one ends it without making it one. */
	t->names[data->d_size] = '\0';
	t->names_len = b->names_alloc = data->d_size + 1;
	return true;
}

/* Adds the functions of one symbol section; returns how many. */
static size_t read_symbols(struct sym_builder *b, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	struct elf_symtab *t = b->t;
	size_t i, count, added = 0, strings_len;
	Elf_Data *data;

	if (!gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT) ||
	    !(data = elf_section_data(scn, ELF_MAX_SYMTAB_BYTES)) || !copy_strings(b, elf, sh->sh_link))
		return 0;
	strings_len = t->names_len - 1;
	count = data->d_size / gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		GElf_Shdr own;
		size_t n;

		if (!gelf_getsym(data, i, &sym) || !is_code(elf, &sym, &own) || sym.st_name >= strings_len)
			continue;
		/* Unterminated inside its table: not a name (elf_strptr() says the same). */
		n = strnlen(t->names + sym.st_name, strings_len - sym.st_name);
		if (sym.st_name + n == strings_len)
			continue;
		n = name_len(t->names + sym.st_name);
		if (!n)
			continue;
		t->names[sym.st_name + n] = '\0';
		cut_name(t->names, sym.st_name);
		add_sym_at(b, &sym, sym.st_name, &own);
		added++;
	}
	return added;
}

bool elf_note_build_id(Elf_Scn *scn, char *hex)
{
	Elf_Data *data = elf_section_data(scn, ELF_MAX_NOTE_BYTES);
	size_t off = 0, name_off, desc_off;
	GElf_Nhdr nh;

	while (data && (off = gelf_getnote(data, off, &nh, &name_off, &desc_off)) > 0) {
		const unsigned char *desc = (const unsigned char *)data->d_buf + desc_off;
		size_t i;

		if (nh.n_type != NT_GNU_BUILD_ID || nh.n_namesz != 4 ||
		    memcmp((const char *)data->d_buf + name_off, "GNU", 4) || !nh.n_descsz ||
		    nh.n_descsz > BUILD_ID_MAX)
			continue;
		for (i = 0; i < nh.n_descsz; i++)
			sprintf(hex + 2 * i, "%02x", desc[i]);
		return true;
	}
	return false;
}

/* By address, best rank first, then file order: deterministic for a given file. */
static int ranked_cmp(const void *a, const void *b)
{
	const struct ranked_sym *x = a, *y = b;

	if (x->sym.addr != y->sym.addr)
		return x->sym.addr < y->sym.addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	return x->order < y->order ? -1 : x->order > y->order;
}

/*
 * Sorts the symbols read and keeps the best name at each address. A
 * symbol without a size inside a sized one (a label in a function) is
 * dropped: it would take the name of the function's rest.
 */
static void finish_symbols(struct sym_builder *b)
{
	struct elf_symtab *t = b->t;
	uint64_t sized_end = 0;
	size_t i;

	if (b->nr)
		qsort(b->items, b->nr, sizeof(*b->items), ranked_cmp);
	t->syms = xmalloc((b->nr ? b->nr : 1) * sizeof(*t->syms));
	for (i = 0; i < b->nr; i++) {
		const struct ranked_sym *r = &b->items[i];

		if ((!t->nr || t->syms[t->nr - 1].addr != r->sym.addr) &&
		    (r->sized || r->sym.addr >= sized_end))
			t->syms[t->nr++] = r->sym;
		if (r->sized && r->sym.addr + r->sym.size > sized_end)
			sized_end = r->sym.addr + r->sym.size;
	}
	free(b->items);
}

/*
 * PLT stubs have no symbols: name them "func@plt" from the PLT's
 * relocations, as perf does. Stub i of .rela.plt sits at .plt.sec + 16 i
 * when there is a .plt.sec (IBT), else at .plt + 16 (i + 1), past PLT0.
 */
static void add_plt_symbols(struct sym_builder *b, Elf *elf, const GElf_Ehdr *eh)
{
	Elf_Scn *scn = NULL, *rela = NULL, *plt = NULL, *plt_sec = NULL;
	GElf_Shdr rela_sh = { 0 }, plt_sh = { 0 }, plt_sec_sh = { 0 }, dynsym_sh, sh;
	Elf_Data *data;
	uint64_t base;
	size_t i, count;

	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = elf_strptr(elf, eh->e_shstrndx, sh.sh_name)))
			continue;
		if (!strcmp(name, ".rela.plt") && sh.sh_type == SHT_RELA) {
			rela = scn;
			rela_sh = sh;
		} else if (!strcmp(name, ".plt")) {
			plt = scn;
			plt_sh = sh;
		} else if (!strcmp(name, ".plt.sec")) {
			plt_sec = scn;
			plt_sec_sh = sh;
		}
	}
	if (!rela || !(plt || plt_sec) || !(data = elf_section_data(rela, ELF_MAX_SYMTAB_BYTES)) ||
	    !rela_sh.sh_entsize || !gelf_getshdr(elf_getscn(elf, rela_sh.sh_link), &dynsym_sh) ||
	    !gelf_getshdr(elf_getscn(elf, dynsym_sh.sh_link), &sh) || sh.sh_size > ELF_MAX_STRTAB_BYTES)
		return;
	base = plt_sec ? plt_sec_sh.sh_addr : plt_sh.sh_addr + 16;
	count = rela_sh.sh_size / rela_sh.sh_entsize;
	if (count > ELF_MAX_PLT_STUBS)
		count = ELF_MAX_PLT_STUBS;
	for (i = 0; i < count; i++) {
		Elf_Data *syms = elf_section_data(elf_getscn(elf, rela_sh.sh_link), ELF_MAX_SYMTAB_BYTES);
		GElf_Rela r;
		GElf_Sym sym;
		const char *name;
		char buf[256];

		if (!gelf_getrela(data, i, &r) || !syms || !gelf_getsym(syms, GELF_R_SYM(r.r_info), &sym) ||
		    !(name = elf_strptr(elf, dynsym_sh.sh_link, sym.st_name)) || !*name)
			continue;
		snprintf(buf, sizeof(buf), "%.*s@plt", (int)strcspn(name, "@"), name);
		sym.st_value = base + 16 * i;
		sym.st_size = 16;
		sym.st_info = GELF_ST_INFO(STB_LOCAL, STT_FUNC);
		if (sym.st_value + 16 <= (plt_sec ? plt_sec_sh.sh_addr + plt_sec_sh.sh_size :
					  plt_sh.sh_addr + plt_sh.sh_size))
			add_sym(b, &sym, buf);
	}
}

/* Reads elf's symbols and segments; the PLT stubs' names from plt_elf's relocations. */
static int read_elf(struct elf_symtab *t, Elf *elf, Elf *plt_elf)
{
	struct sym_builder b = { .t = t };
	Elf_Scn *scn = NULL, *symtab = NULL, *dynsym = NULL;
	GElf_Shdr symtab_sh, dynsym_sh;
	size_t i, phnum, segs_alloc = 0;
	GElf_Ehdr eh;

	memset(t, 0, sizeof(*t));
	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	if (eh.e_type != ET_EXEC && eh.e_type != ET_DYN)
		return -ENOEXEC;
	if (elf_getphdrnum(elf, &phnum))
		return -EINVAL;
	for (i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD)
			continue;
		ALLOC_GROW(t->segs, t->nsegs + 1, segs_alloc);
		t->segs[t->nsegs++] = (struct elf_segment){ ph.p_offset, ph.p_filesz, ph.p_vaddr, ph.p_memsz };
	}
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			continue;
		if (sh.sh_type == SHT_SYMTAB) {
			symtab = scn;
			symtab_sh = sh;
		} else if (sh.sh_type == SHT_DYNSYM) {
			dynsym = scn;
			dynsym_sh = sh;
		} else if (sh.sh_type == SHT_NOTE && !t->build_id[0]) {
			elf_note_build_id(scn, t->build_id);
		}
	}
	/* .symtab has every function when present; .dynsym only the exports. */
	if (symtab && read_symbols(&b, elf, symtab, &symtab_sh))
		t->from_symtab = true;
	else if (dynsym)
		read_symbols(&b, elf, dynsym, &dynsym_sh);
	if (!t->names) {
		/* Name 0 is "": the PLT's names are appended after it. */
		t->names = xcalloc(1, 1);
		t->names_len = b.names_alloc = 1;
	}
	if (plt_elf != elf && !gelf_getehdr(plt_elf, &eh))
		plt_elf = NULL;
	if (plt_elf)
		add_plt_symbols(&b, plt_elf, &eh);
	/* Kept as long as the file: no room to grow (a PLT name doubles a copied string table). */
	t->names = xrealloc(t->names, t->names_len);
	finish_symbols(&b);
	return 0;
}

static void init_libelf(void)
{
	static bool done;

	if (!done) {
		elf_version(EV_CURRENT);
		done = true;
	}
}

/*
 * Reads an opened Elf handle (NULL if libelf could not open it), its PLT
 * from plt_elf's (NULL: its own), and ends both.
 */
static int read_and_end(struct elf_symtab *t, Elf *elf, Elf *plt_elf)
{
	int err;

	memset(t, 0, sizeof(*t));
	if (!elf) {
		if (plt_elf)
			elf_end(plt_elf);
		return -ENOEXEC;
	}
	err = elf_kind(elf) == ELF_K_ELF ? read_elf(t, elf, plt_elf ? plt_elf : elf) : -ENOEXEC;
	elf_end(elf);
	if (plt_elf)
		elf_end(plt_elf);
	if (err)
		elf_symtab_release(t);
	return err;
}

int elf_symtab_read_fd(struct elf_symtab *t, int fd)
{
	return read_and_end(t, elf_open_fd(fd), NULL);
}

int elf_symtab_read_debug_fd(struct elf_symtab *t, int fd, int bin_fd)
{
	Elf *bin = elf_open_fd(bin_fd);

	if (bin && elf_kind(bin) != ELF_K_ELF) {
		elf_end(bin);
		bin = NULL;
	}
	/* Without the binary, its stubs go unnamed: an empty PLT is no error. */
	return read_and_end(t, elf_open_fd(fd), bin);
}

int elf_symtab_read_mem(struct elf_symtab *t, const void *image, size_t size)
{
	return read_and_end(t, elf_open_mem(image, size), NULL);
}

/* Opening, within limits -------------------------------------------------- */

/* A file, or an image in memory. */
struct elf_src {
	int fd;
	const unsigned char *image;
	size_t size;
};

static bool src_read(const struct elf_src *src, uint64_t off, void *buf, size_t len)
{
	if (src->image) {
		if (off > src->size || len > src->size - off)
			return false;
		memcpy(buf, src->image + off, len);
		return true;
	}
	return pread(src->fd, buf, len, off) == (ssize_t)len;
}

/*
 * libelf allocates for every section and program header the ELF header
 * (or section 0, for counts that overflow it) claims, as far as the file
 * goes: a sparse file goes far. What libelf cannot read is left to it.
 */
static bool counts_ok(const struct elf_src *src)
{
	unsigned char h[64], sh0[64];
	uint64_t shoff, shnum, phnum;
	bool is64, msb;

	if (!src_read(src, 0, h, EI_NIDENT) || memcmp(h, ELFMAG, SELFMAG) ||
	    (h[EI_CLASS] != ELFCLASS32 && h[EI_CLASS] != ELFCLASS64))
		return true;
	is64 = h[EI_CLASS] == ELFCLASS64;
	msb = h[EI_DATA] == ELFDATA2MSB;
	if (!src_read(src, 0, h, is64 ? sizeof(Elf64_Ehdr) : sizeof(Elf32_Ehdr)))
		return true;
	shoff = is64 ? get_uint(h + 40, 8, msb) : get_uint(h + 32, 4, msb);
	phnum = get_uint(h + (is64 ? 56 : 44), 2, msb);
	shnum = get_uint(h + (is64 ? 60 : 48), 2, msb);
	if ((!shnum || phnum == PN_XNUM) && shoff &&
	    src_read(src, shoff, sh0, is64 ? sizeof(Elf64_Shdr) : sizeof(Elf32_Shdr))) {
		if (!shnum)
			shnum = is64 ? get_uint(sh0 + 32, 8, msb) : get_uint(sh0 + 20, 4, msb);
		if (phnum == PN_XNUM)
			phnum = is64 ? get_uint(sh0 + 44, 4, msb) : get_uint(sh0 + 28, 4, msb);
	}
	return shnum <= ELF_MAX_SECTIONS && phnum <= ELF_MAX_SEGMENTS;
}

/* The section names, read by every elf_strptr() on them, within their limit too. */
static Elf *checked(Elf *elf)
{
	size_t ndx;
	GElf_Shdr sh;

	if (elf && elf_kind(elf) == ELF_K_ELF && !elf_getshdrstrndx(elf, &ndx) && ndx &&
	    gelf_getshdr(elf_getscn(elf, ndx), &sh) && sh.sh_size > ELF_MAX_SHSTRTAB_BYTES) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}

Elf *elf_open_fd(int fd)
{
	struct elf_src src = { .fd = fd };

	init_libelf();
	if (!counts_ok(&src))
		return NULL;
	/* Read, not mapped: a file truncated under us fails a read rather than fault (SIGBUS). */
	return checked(elf_begin(fd, ELF_C_READ, NULL));
}

Elf *elf_open_mem(const void *image, size_t size)
{
	struct elf_src src = { .fd = -1, .image = image, .size = size };

	init_libelf();
	if (!counts_ok(&src))
		return NULL;
	return checked(elf_memory((char *)image, size));
}

Elf_Data *elf_section_data(Elf_Scn *scn, uint64_t max)
{
	GElf_Shdr sh;

	if (!scn || !gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS || sh.sh_size > max)
		return NULL;
	return elf_getdata(scn, NULL);
}

void elf_symtab_release(struct elf_symtab *t)
{
	free(t->syms);
	free(t->names);
	free(t->segs);
	memset(t, 0, sizeof(*t));
}

int elf_symtab_offset_to_vaddr(const struct elf_symtab *t, uint64_t offset, uint64_t *vaddr)
{
	size_t i;

	for (i = 0; i < t->nsegs; i++) {
		const struct elf_segment *s = &t->segs[i];

		if (offset >= s->offset && offset - s->offset < s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_sym *elf_symtab_lookup(const struct elf_symtab *t, uint64_t vaddr)
{
	size_t i = COUNT_AT_OR_BELOW(t->syms, t->nr, addr, vaddr);
	const struct elf_sym *s;

	if (!i)
		return NULL;
	s = &t->syms[i - 1];
	/* A sized symbol covers only its bytes; PLT stubs and padding lie between. */
	if (s->size && vaddr - s->addr >= s->size)
		return NULL;
	return s;
}
