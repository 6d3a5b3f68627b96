// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A LuaJIT 2.1 VM in an ELF file, and the few numbers the BPF walk needs of
 * it, read from the stripped file's code (docs/research/luajit.md says what
 * each instruction is):
 *   the VM's code   the one .eh_frame FDE with the interpreter's frame
 *                   (CFA rsp+80; rbp, rbx, r15, r14 saved), up to the end of
 *                   lj_vm_ffi_call's FDE right after it; lua_resume,
 *                   lua_pcall and lua_close must call into it;
 *   dispatch_to_g   lj_vm_resume's "add $imm32, %r14" after it loads G(L),
 *                   confirmed by its stores to g->cur_L and g->vmstate;
 *   g_j             lua_close's "andl $~JIT_F_ON, J.flags(%rbp)", confirmed
 *                   by its store to J.state and the VM's loads of J.trace;
 *   GC64            lua_tocfunction's "sar $47" (a TValue's tag).
 * No instruction decoder: byte patterns, each at a place the exported
 * symbols point to, each confirmed by another. The table of Debian's
 * builds checks the code's answers; it never stands in for them.
 */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/elf.h"
#include "bpfprof/luajit_file.h"
#include "bpfprof/runtime_elf.h"
#include "bpfprof/util.h"

/* What one file may make us read, whatever it claims. */
#define MAX_FN_BYTES 4096		/* of an exported function's code */
#define MAX_VM_BYTES (1u << 20)		/* the VM's code: 16 KB in Debian's builds */
#define MAX_FFI_CALL_BYTES 0x1000	/* lj_vm_ffi_call: 0xa0 */
#define ENTRY_BYTES 128			/* of lj_vm_resume: DISPATCH is set up within them */
#define SET_DISPATCH_WITHIN 64		/* bytes of lj_vm_resume's start */

/* jit_State's members only this file reads (lua_close writes them). */
#define LJ_J_FLAGS 0xa8
#define LJ_J_STATE 0xec

/* x86-64 DWARF register numbers. */
enum { REG_RBX = 3, REG_RBP = 6, REG_RSP = 7, REG_R14 = 14, REG_R15 = 15, REG_RA = 16 };

/* Debian 12's builds (docs/research/luajit.md): what the code must say of them. */
static const struct known_build {
	const char *build_id;
	__u16 flavour, dispatch_to_g, g_j;
	__u64 vm_begin, vm_end;
} known_builds[] = {
	/* luajit 2.1.0~beta3+git20220320+dfsg-4.1+deb12u1: the library, /usr/bin/luajit */
	{ "2e18b5eadde600273e47ba2f83a1df8b6a5b2540", LUAJIT_UPSTREAM, 0xf80, 0x2d8,
	  0x8d70, 0xce55 },
	{ "79b0b8114f05a2726860c3141195279ceb0f6e29", LUAJIT_UPSTREAM, 0xf80, 0x2d8,
	  0x704e0, 0x745c5 },
	/* luajit2 2.1-20230119-1 (OpenResty): the same two files */
	{ "0a6563c55d870716908fd332f88bf7cdd9bc6a71", LUAJIT_OPENRESTY, 0xfa8, 0x2e0,
	  0x9e40, 0xdf32 },
	{ "3e3d615119e82f1b42bd151e94701750bfd15a9d", LUAJIT_OPENRESTY, 0xfa8, 0x2e0,
	  0x9b90, 0xdc82 },
};

struct fn {
	uint64_t addr, size;		/* 0: not exported */
};

/* The file as this reader sees it. */
struct lj_elf {
	Elf *elf;
	int fd;
	const char *path;
	bool x86_64;
	struct fn setmode, getexdata, tocfunction, resume, pcall, close;
	struct runtime_segments segs;	/* the executable ones */
	Elf_Scn *eh_frame;
	char build_id[2 * BUILD_ID_MAX + 1];
};

static uint32_t le32(const uint8_t *p)
{
	return p[0] | p[1] << 8 | p[2] << 16 | (uint32_t)p[3] << 24;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	p[0] = v;
	p[1] = v >> 8;
	p[2] = v >> 16;
	p[3] = v >> 24;
}

/* The ELF file: its exports, executable segments, .eh_frame, build ID ------ */

static void note_symbol(void *file, const char *name, const GElf_Sym *s, size_t index)
{
	static const struct {
		const char *name;
		size_t member;
	} wanted[] = {
		{ "luaJIT_setmode", offsetof(struct lj_elf, setmode) },
		{ "lua_getexdata", offsetof(struct lj_elf, getexdata) },
		{ "lua_tocfunction", offsetof(struct lj_elf, tocfunction) },
		{ "lua_resume", offsetof(struct lj_elf, resume) },
		{ "lua_pcall", offsetof(struct lj_elf, pcall) },
		{ "lua_close", offsetof(struct lj_elf, close) },
	};
	struct lj_elf *f = file;
	size_t i;

	(void)index;
	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || !s->st_value)
		return;
	for (i = 0; i < ARRAY_SIZE(wanted); i++) {
		if (!strcmp(name, wanted[i].name)) {
			struct fn *fn = (struct fn *)((char *)f + wanted[i].member);

			fn->addr = s->st_value;
			fn->size = s->st_size;
		}
	}
}

/* The sections and segments this reader uses: 0, or -EINVAL (headers libelf cannot read). */
static int read_elf(struct lj_elf *f)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (elf_kind(f->elf) != ELF_K_ELF)
		return 0;
	if (!gelf_getehdr(f->elf, &eh) || elf_getshdrstrndx(f->elf, &shstrndx))
		return -EINVAL;
	f->x86_64 = eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB &&
		    eh.e_machine == EM_X86_64;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type == SHT_DYNSYM)
			runtime_elf_symbols(f->elf, scn, &sh, note_symbol, f);
		else if (sh.sh_type == SHT_NOTE && !f->build_id[0])
			elf_note_build_id(scn, f->build_id);
		else if (sh.sh_type == SHT_PROGBITS && !f->eh_frame &&
			 (name = elf_strptr(f->elf, shstrndx, sh.sh_name)) &&
			 !strcmp(name, ".eh_frame") && !(sh.sh_flags & SHF_COMPRESSED))
			f->eh_frame = scn;
	}
	runtime_elf_segments(f->elf, true, &f->segs);
	return 0;
}

/*
 * An exported function's code (its first MAX_FN_BYTES; as many, to its
 * segment's end, if its size is not said) into buf: its length, 0 if none
 * or it is not all in the file, or -errno.
 */
static int fn_code(const struct lj_elf *f, const struct fn *fn, uint8_t *buf)
{
	const struct runtime_segment *s = runtime_segment_of(&f->segs, fn->addr);
	uint64_t len = fn->size && fn->size < MAX_FN_BYTES ? fn->size : MAX_FN_BYTES;
	int rc;

	if (!fn->addr || !s)
		return 0;
	if (len > s->filesz - (fn->addr - s->vaddr))
		len = s->filesz - (fn->addr - s->vaddr);
	rc = runtime_elf_read(&f->segs, f->fd, fn->addr, buf, len);
	return rc <= 0 ? rc : (int)len;
}

/* .eh_frame: the VM's FDE --------------------------------------------------- */

/* The interpreter's frame: CFA = rsp + 80; rbp, rbx, r15, r14 (and the return address) saved. */
static bool is_vm_row(const struct cfi_fde_head *r)
{
	static const int64_t want[CFI_HEAD_REGS] = {
		[REG_RBP] = -16, [REG_RBX] = -24, [REG_R15] = -32, [REG_R14] = -40, [REG_RA] = -8 };
	unsigned i;

	if (r->other || r->cfa_reg != REG_RSP || r->cfa_off != 80)
		return false;
	for (i = 0; i < CFI_HEAD_REGS; i++)
		if (r->saved[i] != (want[i] != 0) || (r->saved[i] && r->saved_at[i] != want[i]))
			return false;
	return true;
}

/* The FDEs with the interpreter's frame, and the FDE right after the last. */
struct vm_search {
	unsigned found;
	struct cfi_fde_head vm, ffi_call;
	bool has_ffi_call;
};

static void note_fde(void *search, const struct cfi_fde_head *fde)
{
	struct vm_search *v = search;

	if (v->found && fde->offset == v->vm.next) {
		v->ffi_call = *fde;
		v->has_ffi_call = true;
	}
	if (fde->row_ok && is_vm_row(fde)) {
		v->vm = *fde;
		v->has_ffi_call = false;
		v->found++;
	}
}

/*
 * The VM's code from .eh_frame into [*begin, *end): the one FDE with the
 * interpreter's frame, and lj_vm_ffi_call's, the next entry, which starts
 * where it ends and keeps its CFA on rbp. false if not so.
 */
static bool find_vm(const struct lj_elf *f, uint64_t *begin, uint64_t *end)
{
	Elf_Data *d = f->eh_frame ? elf_section_data(f->eh_frame, CFI_MAX_SECTION_BYTES) : NULL;
	struct vm_search v = { 0 };
	const struct cfi_fde_head *vm = &v.vm, *ffi = &v.ffi_call;
	GElf_Shdr sh;

	if (!d || !d->d_buf || !gelf_getshdr(f->eh_frame, &sh)) {
		debug("luajit: '%s': no .eh_frame", f->path);
		return false;
	}
	cfi_fde_heads(d->d_buf, d->d_size, sh.sh_addr, note_fde, &v);
	if (v.found != 1) {
		debug("luajit: '%s': %u FDEs with the interpreter's frame, not 1", f->path, v.found);
		return false;
	}
	if (!v.has_ffi_call || !ffi->row_ok || ffi->start != vm->end ||
	    ffi->cfa_reg != REG_RBP || ffi->end - ffi->start > MAX_FFI_CALL_BYTES ||
	    vm->end - vm->start > MAX_VM_BYTES) {
		debug("luajit: '%s': the VM's FDE at %#llx is not followed by lj_vm_ffi_call's",
		      f->path, (unsigned long long)vm->start);
		return false;
	}
	*begin = vm->start;
	*end = ffi->end;
	return true;
}

/* The code's instructions -------------------------------------------------- */

/*
 * The call or jmp rel32 in code (at vaddr) that go into [begin, end): how
 * many, *target the first one's; *alike false if they go to different
 * places. Every byte is tried (no decoder): a false hit would need the
 * four bytes after an 0xe8 or 0xe9 to land in the VM's few kilobytes.
 */
static unsigned branches_into(const uint8_t *code, size_t len, uint64_t vaddr, uint64_t begin,
			      uint64_t end, uint64_t *target, bool *alike)
{
	unsigned n = 0;
	size_t i;

	*alike = true;
	for (i = 0; i + 5 <= len; i++) {
		uint64_t to;

		if (code[i] != 0xe8 && code[i] != 0xe9)
			continue;
		to = vaddr + i + 5 + (int64_t)(int32_t)le32(code + i + 1);
		if (to < begin || to >= end)
			continue;
		if (n++ == 0)
			*target = to;
		else if (to != *target)
			*alike = false;
	}
	return n;
}

/* Whether code has pat[0..n). */
static bool has(const uint8_t *code, size_t len, const uint8_t *pat, size_t n)
{
	return memmem(code, len, pat, n) != NULL;
}

/* lua_tocfunction's "sar $0x2f, %reg": a TValue's tag is its top 17 bits (GC64). */
static bool is_gc64(const uint8_t *code, size_t len)
{
	size_t i;

	for (i = 0; i + 4 <= len; i++)
		if ((code[i] & 0xfe) == 0x48 && code[i + 1] == 0xc1 && code[i + 2] >= 0xf8 &&
		    code[i + 3] == 0x2f)
			return true;
	return false;
}

/*
 * dispatch_to_g from lj_vm_resume's first instructions: "mov 0x10(%rbp),
 * %r14; add $imm32, %r14" (DISPATCH = L->glref + GG.dispatch - GG.g),
 * confirmed by "mov %rbp, cur_L(%r14)" and "movl $-1, vmstate(%r14)" after
 * it (g->cur_L = L; g->vmstate = ~LJ_VMST_INTERP). 0 if not so.
 */
static uint32_t dispatch_to_g(const uint8_t *entry, size_t len)
{
	static const uint8_t set_dispatch[] = { 0x4c, 0x8b, 0x75, 0x10, 0x49, 0x81, 0xc6 };
	uint8_t cur_l[7] = { 0x49, 0x89, 0xae }, vmstate[11] = { 0x41, 0xc7, 0x86 };
	const uint8_t *p = memmem(entry, len < SET_DISPATCH_WITHIN ? len : SET_DISPATCH_WITHIN,
				  set_dispatch, sizeof(set_dispatch));
	const uint8_t *rest;
	uint32_t d2g;

	if (!p || (size_t)(p - entry) + sizeof(set_dispatch) + 4 > len)
		return 0;
	d2g = le32(p + sizeof(set_dispatch));
	if (!d2g || d2g > UINT16_MAX)
		return 0;
	rest = p + sizeof(set_dispatch) + 4;
	put_le32(cur_l + 3, LJ_G_CUR_L - d2g);
	put_le32(vmstate + 3, LJ_G_VMSTATE - d2g);
	put_le32(vmstate + 7, 0xffffffff);
	if (!has(rest, entry + len - rest, cur_l, sizeof(cur_l)) ||
	    !has(rest, entry + len - rest, vmstate, sizeof(vmstate)))
		return 0;
	return d2g;
}

/*
 * g_j from lua_close: "andl $0xfffffffe, disp32(%rbp)" (g in rbp: J->flags
 * &= ~JIT_F_ON), confirmed by "movl $0, J.state(%rbp)" (J->state =
 * LJ_TRACE_IDLE). 0 if not so.
 */
static uint32_t g_to_j(const uint8_t *code, size_t len)
{
	uint8_t idle[10] = { 0xc7, 0x85 };
	uint32_t disp;
	size_t i;

	for (i = 0; i + 7 <= len; i++) {
		if (code[i] != 0x83 || code[i + 1] != 0xa5 || code[i + 6] != 0xfe)
			continue;
		disp = le32(code + i + 2);
		if (disp <= LJ_J_FLAGS || disp - LJ_J_FLAGS > UINT16_MAX)
			return 0;
		put_le32(idle + 2, disp - LJ_J_FLAGS + LJ_J_STATE);
		return has(code, len, idle, sizeof(idle)) ? disp - LJ_J_FLAGS : 0;
	}
	return 0;
}

/*
 * How many "mov disp32(%r14), %reg" (op 0x8b) or "mov %reg, disp32(%r14)"
 * (op 0x89) with this disp the VM's code has: its reads of J->trace (JLOOP)
 * and writes of g->jit_base, at their offsets from DISPATCH.
 */
static unsigned r14_moves(const uint8_t *vm, size_t len, uint8_t op, uint32_t disp)
{
	unsigned n = 0;
	size_t i;

	for (i = 0; i + 7 <= len; i++)
		n += (vm[i] & 0xfb) == 0x49 && vm[i + 1] == op && (vm[i + 2] & 0xc7) == 0x86 &&
		     le32(vm + i + 3) == disp;
	return n;
}

/* The table's entry for the file's build ID: false if it is there and says otherwise. */
static bool as_table_says(const struct lj_elf *f, const struct luajit_file *l)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(known_builds); i++) {
		const struct known_build *k = &known_builds[i];

		if (strcmp(f->build_id, k->build_id))
			continue;
		if (k->flavour == l->flavour && k->dispatch_to_g == l->dispatch_to_g &&
		    k->g_j == l->g_j && k->vm_begin == l->vm_begin_rel &&
		    k->vm_end == l->vm_end_rel)
			return true;
		debug("luajit: '%s' (build ID %s): the code says VM %#llx..%#llx, DISPATCH - %#x, "
		      "J at g + %#x; Debian's build says %#llx..%#llx, %#x, %#x", f->path,
		      f->build_id, (unsigned long long)l->vm_begin_rel,
		      (unsigned long long)l->vm_end_rel, l->dispatch_to_g, l->g_j,
		      (unsigned long long)k->vm_begin, (unsigned long long)k->vm_end,
		      k->dispatch_to_g, k->g_j);
		return false;
	}
	return true;
}

/* Why a LuaJIT is not known: a debug line, and 0. */
#define unknown(f, fmt, ...) (debug("luajit: '%s': " fmt, (f)->path, ##__VA_ARGS__), 0)

/* The VM's layout into *l: 1 if found and confirmed, 0 if not, or -errno. */
static int read_layout(const struct lj_elf *f, struct luajit_file *l)
{
	uint8_t code[MAX_FN_BYTES], entry[ENTRY_BYTES];
	const struct runtime_segment *seg;
	uint64_t begin, end, resume, anchor;
	uint8_t *vm = NULL;
	int len, rc;
	bool alike;

	if (!f->x86_64)
		return unknown(f, "not x86-64");
	if ((len = fn_code(f, &f->tocfunction, code)) < 0)
		return len;
	if (!is_gc64(code, len))
		return unknown(f, "not a GC64 build (lua_tocfunction has no sar $47)");
	if (!find_vm(f, &begin, &end))
		return 0;
	/* Offsets from the code's (vaddr - offset), as the mapping holding it has them. */
	seg = runtime_segment_of(&f->segs, begin);
	if (!seg || end - seg->vaddr > seg->filesz)
		return unknown(f, "the VM's code is not in one executable segment");
	l->vm_begin_rel = begin - (seg->vaddr - seg->offset);
	l->vm_end_rel = end - (seg->vaddr - seg->offset);

	/* Anchors: lua_pcall calls lj_vm_pcall, lua_close lj_vm_cpcall, in the VM. */
	if ((len = fn_code(f, &f->pcall, code)) < 0)
		return len;
	rc = branches_into(code, len, f->pcall.addr, begin, end, &anchor, &alike);
	if ((len = fn_code(f, &f->close, code)) < 0)
		return len;
	if (!rc && !branches_into(code, len, f->close.addr, begin, end, &anchor, &alike))
		return unknown(f, "neither lua_pcall nor lua_close calls the VM at %#llx..%#llx",
			       (unsigned long long)begin, (unsigned long long)end);
	if (!(l->g_j = g_to_j(code, len)))
		return unknown(f, "lua_close clears no JIT_F_ON in a jit_State it also idles");

	/* lua_resume jumps to lj_vm_resume, which sets up DISPATCH. */
	if ((len = fn_code(f, &f->resume, code)) < 0)
		return len;
	if (!branches_into(code, len, f->resume.addr, begin, end, &resume, &alike) || !alike)
		return unknown(f, "lua_resume does not go to one place in the VM");
	if (end - resume < ENTRY_BYTES)
		return unknown(f, "lj_vm_resume at %#llx is the VM's last bytes",
			       (unsigned long long)resume);
	if ((rc = runtime_elf_read(&f->segs, f->fd, resume, entry, sizeof(entry))) <= 0)
		return rc;
	if (!(l->dispatch_to_g = dispatch_to_g(entry, sizeof(entry))))
		return unknown(f, "lj_vm_resume at %#llx sets no DISPATCH it confirms",
			       (unsigned long long)resume);

	/* The VM itself reads J->trace and writes g->jit_base where these say. */
	vm = xmalloc(end - begin);
	if ((rc = runtime_elf_read(&f->segs, f->fd, begin, vm, end - begin)) > 0 &&
	    (!r14_moves(vm, end - begin, 0x8b, l->g_j + LJ_J_TRACE - l->dispatch_to_g) ||
	     !r14_moves(vm, end - begin, 0x89, LJ_G_JIT_BASE - l->dispatch_to_g)))
		rc = unknown(f, "the VM reads no J->trace at DISPATCH - %#x + %#x, or writes no "
			     "jit_base", l->dispatch_to_g, l->g_j + LJ_J_TRACE);
	free(vm);
	if (rc <= 0)
		return rc;
	return as_table_says(f, l);
}

int luajit_file_identify(int fd, const char *path, struct luajit_file *out)
{
	struct lj_elf f = { .fd = fd, .path = path ? path : "?" };
	struct luajit_file l = { 0 };
	int rc;

	memset(out, 0, sizeof(*out));
	if (!(f.elf = elf_open_fd(fd)))
		return 0;
	rc = read_elf(&f);
	if (rc || !f.setmode.addr)
		goto out;
	l.flavour = f.getexdata.addr ? LUAJIT_OPENRESTY : LUAJIT_UPSTREAM;
	if ((rc = read_layout(&f, &l)) < 0)
		goto out;
	if (rc) {
		l.known = 1;
		*out = l;
	} else {
		out->flavour = l.flavour;
	}
	rc = 1;
out:
	elf_end(f.elf);
	return rc;
}
