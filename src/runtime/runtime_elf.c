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
		    ph.p_filesz <= INT64_MAX && ph.p_offset <= INT64_MAX - ph.p_filesz)
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

static int32_t elf_s32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/*
 * The bounds of the function holding vaddr, from .eh_frame_hdr's sorted
 * table (pairs of datarel sdata4 offsets) and the FDE it points at (pcrel
 * sdata4 start, sdata4 length, as GCC and ld write them): false if the
 * table or the FDE is of another form.
 */
bool runtime_elf_function_bounds(Elf_Scn *eh_frame_hdr, const struct runtime_segments *segs, int fd,
				 uint64_t vaddr, uint64_t *lo, uint64_t *hi)
{
	Elf_Data *d = eh_frame_hdr ? elf_section_data(eh_frame_hdr, 64u << 20) : NULL;
	GElf_Shdr sh;
	const uint8_t *h;
	uint8_t fde[16];
	int64_t best = -1;
	uint32_t n, i;
	uint64_t fde_at = 0;

	if (!d || !d->d_buf || d->d_size < 12 || !gelf_getshdr(eh_frame_hdr, &sh))
		return false;
	h = d->d_buf;
	/* version 1; eh_frame_ptr pcrel sdata4; fde_count udata4; table datarel sdata4 */
	if (h[0] != 1 || h[1] != 0x1b || h[2] != 0x03 || h[3] != 0x3b)
		return false;
	memcpy(&n, h + 8, 4);
	if (n > (d->d_size - 12) / 8)
		return false;
	for (i = 0; i < n; i++) {
		int64_t start = (int64_t)sh.sh_addr + elf_s32_at(h + 12 + 8 * i);

		if ((uint64_t)start <= vaddr && start > best) {
			best = start;
			fde_at = sh.sh_addr + elf_s32_at(h + 16 + 8 * i);
		}
	}
	if (best < 0 || runtime_elf_read(segs, fd, fde_at, fde, sizeof(fde)) != 1)
		return false;
	/* length, CIE pointer, then the FDE's start (pcrel) and length */
	if ((int64_t)(fde_at + 8 + elf_s32_at(fde + 8)) != best)
		return false;
	*lo = best;
	*hi = best + (uint32_t)elf_s32_at(fde + 12);
	return vaddr < *hi;
}
