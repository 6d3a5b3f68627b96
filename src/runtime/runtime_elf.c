// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* The runtimes' file readers' ELF: symbols, segments, bytes at an address (runtime_elf.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/runtime_elf.h"

Elf_Data *runtime_elf_section_data(Elf_Scn *scn, uint64_t max)
{
	GElf_Shdr sh;
	Elf_Data *d;

	if (!scn || !gelf_getshdr(scn, &sh) || (sh.sh_flags & SHF_COMPRESSED))
		return NULL;
	d = elf_section_data(scn, max);
	return d && d->d_buf ? d : NULL;
}

const char *runtime_elf_string(const Elf_Data *strings, uint64_t off)
{
	const char *s = strings->d_buf;

	if (!s || off >= strings->d_size || !memchr(s + off, '\0', strings->d_size - off))
		return NULL;
	return s + off;
}

void runtime_elf_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh,
			 runtime_elf_symbol_fn *fn, void *ctx)
{
	size_t i, n, entsize = gelf_fsize(elf, ELF_T_SYM, 1, EV_CURRENT);
	Elf_Data *d = runtime_elf_section_data(scn, ELF_MAX_SYMTAB_BYTES);
	Elf_Data *names = runtime_elf_section_data(elf_getscn(elf, sh->sh_link),
						   ELF_MAX_STRTAB_BYTES);

	if (!d || !names || !entsize)
		return;
	n = d->d_size / entsize;
	for (i = 0; i < n; i++) {
		const char *name;
		GElf_Sym sym;

		if (gelf_getsym(d, i, &sym) && sym.st_shndx != SHN_UNDEF &&
		    (name = runtime_elf_string(names, sym.st_name)))
			fn(ctx, name, &sym, i);
	}
}

void runtime_elf_segments(Elf *elf, bool exec_only, struct runtime_segments *out)
{
	size_t i, n;
	GElf_Phdr ph;

	out->nr = 0;
	if (elf_getphdrnum(elf, &n))
		return;
	/* Kept only if no sum of an address or offset inside can wrap. */
	for (i = 0; i < n && i < ELF_MAX_SEGMENTS && out->nr < RUNTIME_ELF_MAX_SEGMENTS; i++)
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && ph.p_filesz &&
		    (!exec_only || (ph.p_flags & PF_X)) && ph.p_vaddr + ph.p_filesz > ph.p_vaddr &&
		    ph.p_offset <= INT64_MAX - ph.p_filesz)
			out->seg[out->nr++] = (struct runtime_segment){
				ph.p_vaddr, ph.p_offset, ph.p_filesz, ph.p_flags & PF_X };
}

const struct runtime_segment *runtime_segment_of(const struct runtime_segments *segs,
						 uint64_t vaddr)
{
	size_t i;

	for (i = 0; i < segs->nr; i++)
		if (vaddr - segs->seg[i].vaddr < segs->seg[i].filesz)
			return &segs->seg[i];
	return NULL;
}

const struct runtime_segment *runtime_code_segment(const struct runtime_segments *segs)
{
	size_t i;

	for (i = 0; i < segs->nr; i++)
		if (segs->seg[i].exec)
			return &segs->seg[i];
	return NULL;
}

int runtime_elf_read(const struct runtime_segments *segs, int fd, uint64_t vaddr, void *buf,
		     size_t len)
{
	const struct runtime_segment *s = runtime_segment_of(segs, vaddr);
	ssize_t got;

	if (!s || len > s->filesz - (vaddr - s->vaddr))
		return 0;
	got = pread(fd, buf, len, s->offset + (vaddr - s->vaddr));
	if (got < 0)
		return -errno;
	return got == (ssize_t)len;
}
