// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <gelf.h>
#include <libelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/elf.h"
#include "bpfprof/util.h"

/* Symbols as read, with how good a name each is for its address. */
struct ranked_sym {
	struct elf_sym sym;
	unsigned rank;
};

struct sym_builder {
	struct elf_symtab *t;
	struct ranked_sym *items;
	size_t nr, alloc, names_alloc;
};

static void add_sym(struct sym_builder *b, const GElf_Sym *sym, const char *name)
{
	struct elf_symtab *t = b->t;
	size_t n = strlen(name);
	int bind = GELF_ST_BIND(sym->st_info);
	struct ranked_sym *r;

	ALLOC_GROW(b->items, b->nr + 1, b->alloc);
	ALLOC_GROW(t->names, t->names_len + n + 1, b->names_alloc);
	memcpy(t->names + t->names_len, name, n + 1);
	r = &b->items[b->nr++];
	r->sym.addr = sym->st_value;
	r->sym.size = sym->st_size;
	r->sym.name = t->names_len;
	/* Prefer global over weak over local names, then sized symbols. */
	r->rank = (bind == STB_GLOBAL ? 4 : bind == STB_WEAK ? 2 : 0) + (sym->st_size != 0);
	t->names_len += n + 1;
}

static bool is_function(const GElf_Sym *sym)
{
	int type = GELF_ST_TYPE(sym->st_info);

	return (type == STT_FUNC || type == STT_GNU_IFUNC) && sym->st_shndx != SHN_UNDEF &&
	       sym->st_value != 0;
}

/* Adds the functions of one symbol section; returns how many. */
static size_t read_symbols(struct sym_builder *b, Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh)
{
	Elf_Data *data = elf_getdata(scn, NULL);
	size_t i, count, added = 0;

	if (!data || !sh->sh_entsize)
		return 0;
	count = sh->sh_size / sh->sh_entsize;
	for (i = 0; i < count; i++) {
		GElf_Sym sym;
		const char *name;

		if (!gelf_getsym(data, i, &sym) || !is_function(&sym))
			continue;
		name = elf_strptr(elf, sh->sh_link, sym.st_name);
		if (!name || !*name)
			continue;
		add_sym(b, &sym, name);
		added++;
	}
	return added;
}

bool elf_note_build_id(Elf_Scn *scn, char *hex)
{
	Elf_Data *data = elf_getdata(scn, NULL);
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
	return x->sym.name < y->sym.name ? -1 : x->sym.name > y->sym.name;
}

/* Sorts the symbols read and keeps the best name at each address. */
static void finish_symbols(struct sym_builder *b)
{
	struct elf_symtab *t = b->t;
	size_t i;

	qsort(b->items, b->nr, sizeof(*b->items), ranked_cmp);
	t->syms = xmalloc((b->nr ? b->nr : 1) * sizeof(*t->syms));
	for (i = 0; i < b->nr; i++)
		if (!t->nr || t->syms[t->nr - 1].addr != b->items[i].sym.addr)
			t->syms[t->nr++] = b->items[i].sym;
	free(b->items);
}

static int read_elf(struct elf_symtab *t, Elf *elf)
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

/* Reads an opened Elf handle (NULL if libelf could not open it) and ends it. */
static int read_and_end(struct elf_symtab *t, Elf *elf)
{
	int err;

	if (!elf) {
		memset(t, 0, sizeof(*t));
		return -ENOEXEC;
	}
	err = elf_kind(elf) == ELF_K_ELF ? read_elf(t, elf) : -ENOEXEC;
	elf_end(elf);
	if (err)
		elf_symtab_release(t);
	return err;
}

int elf_symtab_read_fd(struct elf_symtab *t, int fd)
{
	init_libelf();
	return read_and_end(t, elf_begin(fd, ELF_C_READ_MMAP, NULL));
}

int elf_symtab_read_mem(struct elf_symtab *t, const void *image, size_t size)
{
	init_libelf();
	return read_and_end(t, elf_memory((char *)image, size));
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

		if (offset >= s->offset && offset < s->offset + s->filesz) {
			*vaddr = offset - s->offset + s->vaddr;
			return 0;
		}
	}
	return -ENOENT;
}

const struct elf_sym *elf_symtab_lookup(const struct elf_symtab *t, uint64_t vaddr)
{
	size_t lo = 0, hi = t->nr;
	const struct elf_sym *s;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (t->syms[mid].addr <= vaddr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	s = &t->syms[lo - 1];
	/* A sized symbol covers only its bytes; PLT stubs and padding lie between. */
	if (s->size && vaddr >= s->addr + s->size)
		return NULL;
	return s;
}
