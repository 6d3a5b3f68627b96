// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Which files hold a CRuby VM, and where (ruby_file.h). */
#include <errno.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/elf.h"
#include "bpfprof/ruby_file.h"
#include "bpfprof/runtime_elf.h"
#include "bpfprof/util.h"

/*
 * What the walk and the names read, by version (x86-64; vm_core.h, iseq.h,
 * rstring.h, rarray.h, class.h): a row a version, the next version a row.
 * 3.1's is Debian's, checked against live processes; 3.3's was read from
 * the DWARF of a 3.3.8 built from its release (docs/research/ruby.md) and
 * checked against it running. 2.7, 3.0 and 3.2 differ in more than
 * offsets (the research says how) and have no row yet.
 */
static const struct ruby_row {
	unsigned major, minor;
	struct ruby_layout l;
	struct ruby_names n;
} rows[] = {
	{ 3, 1, { .cfp_size = 64, .ec_tag = 0x18, .tag_buf = 0x10, .tag_prev = 0x38 },
	  { .body_pathobj = 0x40, .body_label = 0x50, .body_first_lineno = 0x58,
	    .first_lineno_fixnum = true, .body_insns_info = 0x78, .body_insns_size = 0x88,
	    .body_succ_table = 0x90, .insn_info_size = 12, .str_len_at = 0, .str_embed_at = 16,
	    .ary_embed_len_mask = 0x3, .class_ext = 0x18 } },
	{ 3, 3, { .cfp_size = 56, .ec_tag = 0x18, .tag_buf = 0x10, .tag_prev = 0x38 },
	  { .body_pathobj = 0x40, .body_label = 0x50, .body_first_lineno = 0x58,
	    .first_lineno_fixnum = false, .body_insns_info = 0x70, .body_insns_size = 0x80,
	    .body_succ_table = 0x88, .insn_info_size = 12, .str_len_at = 16, .str_embed_at = 24,
	    .ary_embed_len_mask = 0x7f, .class_path = 0x98, .class_attached = 0x80 } },
};

static const struct ruby_row *row_of(unsigned version)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(rows); i++)
		if ((rows[i].major << 8 | rows[i].minor) == version)
			return &rows[i];
	return NULL;
}

const struct ruby_layout *ruby_layout_of(unsigned major, unsigned minor)
{
	const struct ruby_row *r = row_of(major << 8 | minor);

	return r ? &r->l : NULL;
}

const struct ruby_names *ruby_names_of(unsigned version)
{
	const struct ruby_row *r = row_of(version);

	return r ? &r->n : NULL;
}

#define R_DTPMOD64 16		/* R_X86_64_DTPMOD64 */
#define R_RELATIVE 8		/* R_X86_64_RELATIVE */

struct rb_elf {
	Elf *elf;
	const char *path;
	size_t ec_sym;			/* ruby_current_ec's index in .dynsym; 0: none */
	bool has_ec;			/* ruby_current_ec found, exported or in .symtab */
	uint64_t ec_offset;		/* its offset in the file's TLS block */
	uint64_t api_version;		/* ruby_api_version's address */
	uint64_t vm_exec, vm_exec_size;	/* rb_vm_exec's */
	uint64_t id2str;		/* rb_id2str's */
	uint64_t during_gc;		/* rb_during_gc's */
	uint64_t vm_ptr;		/* ruby_current_vm_ptr's */
	uint64_t global_symbols;	/* ruby_global_symbols' (in .symtab only) */
	uint64_t exec_core;		/* vm_exec_core's (in .symtab only) */
	uint64_t errinfo;		/* rb_errinfo's: reads ruby_current_ec */
	uint64_t eval_main, eval_main_size;	/* rb_iseq_eval_main's: ends in rb_vm_exec */
	Elf_Scn *rela, *eh_frame_hdr;
	bool executable;		/* a program (ET_EXEC, or PIE: PT_INTERP), not a library */
	uint64_t tls_vaddr, tls_memsz, tls_align;	/* its PT_TLS; memsz 0: none */
	struct runtime_segments segs;
	bool reading_dynsym;		/* the table read: its indexes are relocations' symbols */
};

/*
 * The symbols the walk needs, from .dynsym (Debian's 3.1 exports them) or,
 * where a build hides them (3.3 built from its release: ruby_current_ec,
 * rb_vm_exec and ruby_current_vm_ptr are local), from .symtab if not
 * stripped. A symbol found in .dynsym is not looked for again.
 */
static void note_symbol(void *file, const char *name, const GElf_Sym *sym, size_t index)
{
	struct rb_elf *f = file;

	if (GELF_ST_TYPE(sym->st_info) == STT_TLS && !strcmp(name, "ruby_current_ec") &&
	    !f->has_ec) {
		f->ec_sym = f->reading_dynsym ? index : 0;
		f->ec_offset = sym->st_value;
		f->has_ec = true;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT &&
		   !strcmp(name, "ruby_api_version") && sym->st_size >= 12 && !f->api_version) {
		f->api_version = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "rb_vm_exec") &&
		   !f->vm_exec) {
		f->vm_exec = sym->st_value, f->vm_exec_size = sym->st_size;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "rb_id2str") &&
		   !f->id2str) {
		f->id2str = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "rb_during_gc") &&
		   !f->during_gc) {
		f->during_gc = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT &&
		   !strcmp(name, "ruby_current_vm_ptr") && !f->vm_ptr) {
		f->vm_ptr = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "vm_exec_core") &&
		   !f->exec_core) {
		f->exec_core = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_OBJECT &&
		   !strcmp(name, "ruby_global_symbols") && !f->global_symbols) {
		f->global_symbols = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "rb_errinfo") &&
		   !f->errinfo) {
		f->errinfo = sym->st_value;
	} else if (GELF_ST_TYPE(sym->st_info) == STT_FUNC && !strcmp(name, "rb_iseq_eval_main") &&
		   !f->eval_main) {
		f->eval_main = sym->st_value, f->eval_main_size = sym->st_size;
	}
}

static void read_symbols(struct rb_elf *f, Elf_Scn *scn, const GElf_Shdr *sh)
{
	f->reading_dynsym = sh->sh_type == SHT_DYNSYM;
	runtime_elf_symbols(f->elf, scn, sh, note_symbol, f);
}

/* Whether the file is a program, and its TLS segment's. */
static void read_program_headers(struct rb_elf *f, const GElf_Ehdr *eh)
{
	size_t i, n;
	GElf_Phdr ph;

	f->executable = eh->e_type == ET_EXEC;
	if (elf_getphdrnum(f->elf, &n))
		return;
	for (i = 0; i < n; i++) {
		if (!gelf_getphdr(f->elf, (int)i, &ph))
			return;
		if (ph.p_type == PT_INTERP)
			f->executable = true;
		else if (ph.p_type == PT_TLS)
			f->tls_vaddr = ph.p_vaddr, f->tls_memsz = ph.p_memsz,
			f->tls_align = ph.p_align ? ph.p_align : 1;
	}
}

static int read_elf(struct rb_elf *f)
{
	Elf_Scn *scn = NULL, *symtab = NULL;
	GElf_Shdr symtab_sh;
	size_t shstrndx;
	GElf_Ehdr eh;

	if (elf_kind(f->elf) != ELF_K_ELF)
		return 0;
	if (!gelf_getehdr(f->elf, &eh) || elf_getshdrstrndx(f->elf, &shstrndx))
		return -EINVAL;
	if (eh.e_ident[EI_CLASS] != ELFCLASS64 || eh.e_machine != EM_X86_64)
		return 0;
	while ((scn = elf_nextscn(f->elf, scn))) {
		const char *name;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		name = elf_strptr(f->elf, shstrndx, sh.sh_name);
		if (sh.sh_type == SHT_DYNSYM)
			read_symbols(f, scn, &sh);
		else if (sh.sh_type == SHT_SYMTAB)
			symtab = scn, symtab_sh = sh;
		else if (sh.sh_type == SHT_RELA && name && !strcmp(name, ".rela.dyn"))
			f->rela = scn;
		else if (sh.sh_type == SHT_PROGBITS && name && !strcmp(name, ".eh_frame_hdr"))
			f->eh_frame_hdr = scn;
	}
	if (symtab)
		read_symbols(f, symtab, &symtab_sh);
	runtime_elf_segments(f->elf, false, &f->segs);
	read_program_headers(f, &eh);
	return 1;
}

/*
 * The GOT pair's address: the DTPMOD64 relocation of ruby_current_ec; for
 * a hidden one (no symbol: the linker wrote its offset into the pair's
 * second word), the relocation whose pair holds that offset. 0 if none.
 */
static uint64_t ec_tls_pair(const struct rb_elf *f, int fd)
{
	Elf_Data *d = f->rela ? elf_section_data(f->rela, ELF_MAX_SYMTAB_BYTES) : NULL;
	uint64_t offset;
	GElf_Rela r;
	int i;

	for (i = 0; d && f->has_ec && gelf_getrela(d, i, &r); i++) {
		if (GELF_R_TYPE(r.r_info) != R_DTPMOD64)
			continue;
		if (f->ec_sym && GELF_R_SYM(r.r_info) == f->ec_sym)
			return r.r_offset;
		if (!f->ec_sym && !GELF_R_SYM(r.r_info) &&
		    runtime_elf_read(&f->segs, fd, r.r_offset + 8, &offset, sizeof(offset)) == 1 &&
		    offset == f->ec_offset)
			return r.r_offset;
	}
	return 0;
}

static int32_t s32_at(const uint8_t *p)
{
	int32_t v;

	memcpy(&v, p, 4);
	return v;
}

/* Whether a DTPMOD64 relocation of no symbol (a hidden variable's) fills the pair at. */
static bool hidden_tls_pair(const struct rb_elf *f, uint64_t at)
{
	Elf_Data *d = f->rela ? elf_section_data(f->rela, ELF_MAX_SYMTAB_BYTES) : NULL;
	GElf_Rela r;
	int i;

	for (i = 0; d && gelf_getrela(d, i, &r); i++)
		if (GELF_R_TYPE(r.r_info) == R_DTPMOD64 && !GELF_R_SYM(r.r_info) && r.r_offset == at)
			return true;
	return false;
}

/*
 * ruby_current_ec's GOT pair where the variable is hidden (no symbol, as
 * in Debian trixie's stripped libruby-3.3), from rb_errinfo's code: the
 * general-dynamic TLS access "lea PAIR(%rip),%rdi; call __tls_get_addr"
 * (66 48 8d 3d rel32, 66 66 48 e8 rel32), the pair one a DTPMOD64
 * relocation of no symbol fills. 0 if the code is not of that shape.
 */
static uint64_t ec_tls_pair_from_code(const struct rb_elf *f, int fd)
{
	uint8_t code[32];
	uint64_t pair;
	size_t i;

	if (!f->errinfo || runtime_elf_read(&f->segs, fd, f->errinfo, code, sizeof(code)) != 1)
		return 0;
	for (i = 0; i + 11 <= sizeof(code); i++) {
		if (code[i] != 0x48 || code[i + 1] != 0x8d || code[i + 2] != 0x3d)
			continue;
		if (code[i + 7] != 0x66 || code[i + 8] != 0x66 || code[i + 9] != 0x48 ||
		    code[i + 10] != 0xe8)
			return 0;
		pair = f->errinfo + i + 7 + s32_at(code + i + 3);
		return hidden_tls_pair(f, pair) ? pair : 0;
	}
	return 0;
}

/*
 * In a ruby executable built static: ruby_current_ec's offset from the
 * thread pointer. The program's TLS block is the first below the thread
 * pointer (x86-64's variant II), where glibc puts it for module 1
 * (_dl_determine_tlsoffset): tp - roundup(memsz - firstbyte, align) -
 * firstbyte, firstbyte what p_vaddr's misalignment asks for (0 as ld lays
 * it out); the variable at its st_value in the block. Without the symbol
 * (stripped), the offset the executable's own code uses in rb_errinfo:
 * "mov %fs:OFFSET,%reg" (64 48 8b, ModRM with SIB 25, disp32), or, as ld
 * relaxes an initial-exec access (GCC 12's 3.3.8), "mov $OFFSET,%reg;
 * mov %fs:(%reg),%reg" (48 c7 c0+r imm32, 64 48 8b ModRM of r). 0 if
 * neither.
 */
static int64_t ec_tp_offset(const struct rb_elf *f, int fd)
{
	uint64_t a = f->tls_align, first = (0 - (f->tls_vaddr & (a - 1))) & (a - 1), block;
	uint8_t code[32];
	size_t i;

	if (f->has_ec && f->tls_memsz && !(a & (a - 1)) && f->ec_offset < f->tls_memsz) {
		block = ((f->tls_memsz - first + a - 1) & ~(a - 1)) + first;
		return (int64_t)f->ec_offset - (int64_t)block;
	}
	if (f->has_ec || !f->errinfo ||
	    runtime_elf_read(&f->segs, fd, f->errinfo, code, sizeof(code)) != 1)
		return 0;
	for (i = 0; i + 11 <= sizeof(code); i++) {
		if (code[i] == 0x64 && code[i + 1] == 0x48 && code[i + 2] == 0x8b &&
		    (code[i + 3] & 0xc7) == 0x04 && code[i + 4] == 0x25 && s32_at(code + i + 5) < 0)
			return s32_at(code + i + 5);
		if (code[i] == 0x48 && code[i + 1] == 0xc7 && (code[i + 2] & 0xf8) == 0xc0 &&
		    (code[i + 2] & 7) != 4 && (code[i + 2] & 7) != 5 && code[i + 7] == 0x64 &&
		    code[i + 8] == 0x48 && code[i + 9] == 0x8b &&
		    (code[i + 10] & 0xc7) == (code[i + 2] & 7) && s32_at(code + i + 3) < 0)
			return s32_at(code + i + 3);
	}
	return 0;
}

/*
 * The lowest address of vm_exec_core's instruction table: the longest run
 * of relative relocations in consecutive slots whose targets lie in the
 * 64 KiB of code below rb_vm_exec, or the 128 KiB above if above (the
 * VM's instructions are labels of one function, vm_exec_core, of vm.c as
 * rb_vm_exec is: Debian's libruby has it just below, a static 3.3 of
 * GCC 12's -O3 62 to 84 KiB above); 0 if no run of 64 or more.
 */
static uint64_t lowest_instruction(const struct rb_elf *f, bool above)
{
	Elf_Data *d = f->rela ? elf_section_data(f->rela, ELF_MAX_SYMTAB_BYTES) : NULL;
	uint64_t prev = 0, run_lo = ~0ull, best_lo = 0;
	unsigned run = 0, best = 0;
	GElf_Rela r;
	int i;

	for (i = 0; d && f->vm_exec && gelf_getrela(d, i, &r); i++) {
		uint64_t t = (uint64_t)r.r_addend;
		bool in = GELF_R_TYPE(r.r_info) == R_RELATIVE &&
			  (above ? t > f->vm_exec && t - f->vm_exec <= 0x20000
				 : t < f->vm_exec && f->vm_exec - t <= 0x10000);

		if (in && run && r.r_offset == prev + 8) {
			run++;
			if (t < run_lo)
				run_lo = t;
		} else if (in) {
			run = 1;
			run_lo = t;
		} else {
			run = 0;
		}
		if (run > best) {
			best = run;
			best_lo = run_lo;
		}
		prev = r.r_offset;
	}
	return best >= 64 ? best_lo : 0;
}

/* The bounds of the function holding vaddr (runtime_elf_function_bounds). */
static bool function_bounds(const struct rb_elf *f, int fd, uint64_t vaddr, uint64_t *lo,
			    uint64_t *hi)
{
	return runtime_elf_function_bounds(f->eh_frame_hdr, &f->segs, fd, vaddr, lo, hi);
}

/*
 * rb_vm_exec where it is hidden (Debian trixie's libruby-3.3): the VM's
 * entry rb_iseq_eval_main ends in, a tail call "jmp rel32" (e9) out of
 * it to the start of a function in .eh_frame_hdr's table; the last such
 * jump. Its bounds are that function's. false if none.
 */
static bool vm_exec_from_code(struct rb_elf *f, int fd)
{
	uint8_t code[512];
	uint64_t lo, hi, found = 0, found_hi = 0;
	size_t i, n = f->eval_main_size;

	if (!f->eval_main || n < 5 || n > sizeof(code) ||
	    runtime_elf_read(&f->segs, fd, f->eval_main, code, n) != 1)
		return false;
	for (i = 0; i + 5 <= n; i++) {
		uint64_t t = f->eval_main + i + 5 + s32_at(code + i + 1);

		if (code[i] != 0xe9 || (t >= f->eval_main && t < f->eval_main + n))
			continue;
		if (function_bounds(f, fd, t, &lo, &hi) && lo == t)
			found = t, found_hi = hi;
	}
	if (!found)
		return false;
	f->vm_exec = found, f->vm_exec_size = found_hi - found;
	return true;
}

/*
 * In code at (n bytes of it read into look): the first RIP-relative
 * "cmp %reg32,X(%rip)" (39, ModRM 00 reg 101), the table's last_id,
 * confirmed by a load "mov X+16(%rip),%reg64" (48 8b) of its ids array
 * after it. false if none.
 */
static bool table_in(const uint8_t *look, size_t n, uint64_t at, uint64_t *last_id)
{
	size_t i, j;

	for (i = 0; i + 6 <= n; i++) {
		uint64_t x;

		if (look[i] != 0x39 || (look[i + 1] & 0xc7) != 0x05)
			continue;
		x = at + i + 6 + s32_at(look + i + 2);
		for (j = i + 6; j + 7 <= n; j++) {
			if (look[j] != 0x48 || look[j + 1] != 0x8b || (look[j + 2] & 0xc7) != 0x05)
				continue;
			if (at + j + 7 + s32_at(look + j + 3) == x + 16) {
				*last_id = x;
				return true;
			}
		}
		return false;
	}
	return false;
}

/*
 * Where the symbol table is (ruby_global_symbols, not exported): rb_id2str
 * turns an ID into its serial (cmp $tLAST_OP_ID, then shr 4) and looks it
 * up, in a function it jumps to (Debian's libruby) or inline (a static
 * 3.3 of GCC 12's -O3), whose first RIP-relative cmp reads the table's
 * last_id, confirmed by the load of its ids array 16 bytes on; the
 * symbol, where .symtab has it. false if the code is not of that shape.
 */
static bool symbol_table(const struct rb_elf *f, int fd, uint64_t *last_id, uint32_t *last_op_id)
{
	uint8_t code[160], look[160];
	uint64_t at;
	size_t i;

	if (!f->id2str || runtime_elf_read(&f->segs, fd, f->id2str, code, sizeof(code)) != 1)
		return false;
	/* (within 64 bytes: 3.3 starts with endbr64 and puts the shr first, or saves registers) */
	for (i = 0; i + 7 <= 64 && !(code[i] == 0x48 && code[i + 1] == 0x81 && code[i + 2] == 0xff); i++)
		;
	if (i + 7 > 64)
		return false;
	memcpy(last_op_id, code + i + 3, 4);
	if (f->global_symbols) {
		*last_id = f->global_symbols;
		return true;
	}
	/* The lookup's jump within the first 32 bytes, else the lookup inline. */
	for (i = 0; i + 5 <= 32 && code[i] != 0xe9; i++)
		;
	if (i + 5 > 32)
		return table_in(code, sizeof(code), f->id2str, last_id);
	at = f->id2str + i + 5 + s32_at(code + i + 1);
	if (runtime_elf_read(&f->segs, fd, at, look, sizeof(look)) != 1)
		return false;
	return table_in(look, sizeof(look), at, last_id);
}

/*
 * Where the GC's flag is, from rb_during_gc's code: the VM from
 * ruby_current_vm_ptr (through the GOT), its objspace, a flags byte, a
 * shift and a mask of 1. false if the code is not of that shape.
 */
static bool gc_flag(const struct rb_elf *f, int fd, struct ruby_gc *gc, uint64_t *vm_ptr)
{
	static const uint8_t load_vm[] = { 0x48, 0x8b, 0x00 }, and1[] = { 0x83, 0xe0, 0x01 };
	static const uint8_t test_vm[] = { 0x48, 0x85, 0xc0, 0x74 };
	static const uint8_t endbr64[] = { 0xf3, 0x0f, 0x1e, 0xfa };
	uint8_t buf[37], *c = buf, *p;
	uint64_t at = f->during_gc;

	if (!f->during_gc || runtime_elf_read(&f->segs, fd, f->during_gc, buf, sizeof(buf)) != 1)
		return false;
	if (!memcmp(c, endbr64, sizeof(endbr64)))
		c += 4, at += 4;
	/*
	 * mov GOT(%rip),%rax (or lea VAR(%rip),%rax where the variable is
	 * hidden); mov (%rax),%rax; or, in a program, mov VAR(%rip),%rax;
	 * then [test %rax,%rax; je]; mov off32(%rax),%rax; movzbl
	 * off8(%rax),%eax; shr $b,%al; and $1,%eax
	 */
	if (c[0] != 0x48 || (c[1] != 0x8b && c[1] != 0x8d) || c[2] != 0x05)
		return false;
	if (!memcmp(c + 7, load_vm, 3)) {
		/* Not exported: the variable the lea names (a GOT slot's would need its relocation). */
		*vm_ptr = f->vm_ptr ? f->vm_ptr : c[1] == 0x8d ? at + 7 + s32_at(c + 3) : 0;
		p = c + 10;
	} else if (c[1] == 0x8b && f->executable) {
		/* The program's own variable, loaded directly. */
		*vm_ptr = at + 7 + s32_at(c + 3);
		p = c + 7;
	} else {
		return false;
	}
	if (!*vm_ptr)
		return false;
	if (!memcmp(p, test_vm, sizeof(test_vm)))
		p += 5;
	if (p[0] != 0x48 || p[1] != 0x8b || p[2] != 0x80 || p[7] != 0x0f || p[8] != 0xb6 ||
	    p[9] != 0x40 || p[11] != 0xc0 || p[12] != 0xe8 || memcmp(p + 14, and1, 3) || p[13] > 7)
		return false;
	gc->objspace_off = (uint16_t)s32_at(p + 3);
	gc->flags_off = p[10];
	gc->bit = p[13];
	return s32_at(p + 3) > 0 && s32_at(p + 3) < 0x10000;
}

int ruby_file_identify(int fd, const char *path, struct ruby_file *out)
{
	struct rb_elf f = { .path = path };
	const struct ruby_layout *l;
	const struct runtime_segment *code;
	uint64_t tls = 0, first, lo, hi, syms, vm_ptr;
	int64_t tp_off = 0;
	int32_t version[3];
	int ret;

	memset(out, 0, sizeof(*out));
	if (elf_version(EV_CURRENT) == EV_NONE || !(f.elf = elf_open_fd(fd)))
		return 0;
	ret = read_elf(&f);
	if (ret <= 0 || !f.api_version) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	/* A Ruby VM from here: whatever is not found leaves it one not read (known 0). */
	ret = 1;
	if (runtime_elf_read(&f.segs, fd, f.api_version, version, sizeof(version)) != 1 ||
	    version[0] < 2 ||
	    version[0] > 9 || version[1] < 0 || version[1] > 99) {
		debug("ruby: '%s': ruby_api_version not readable", path);
		goto out;
	}
	out->version = version[0] << 8 | version[1];
	l = ruby_layout_of(version[0], version[1]);
	code = runtime_code_segment(&f.segs);
	/* A program's own TLS variable is at a fixed place from the thread pointer. */
	if (f.executable)
		tp_off = ec_tp_offset(&f, fd);
	else
		tls = f.has_ec ? ec_tls_pair(&f, fd) : ec_tls_pair_from_code(&f, fd);
	if (!f.vm_exec && vm_exec_from_code(&f, fd))
		debug("ruby: '%s': rb_vm_exec (hidden) at 0x%llx, rb_iseq_eval_main's tail call", path,
		      (unsigned long long)f.vm_exec);
	/* vm_exec_core by its symbol where .symtab has it, else by its table. */
	first = f.exec_core ? f.exec_core : lowest_instruction(&f, false);
	if (!first)
		first = lowest_instruction(&f, true);
	if (!l || !code || (!tls && !tp_off) || !first ||
	    !function_bounds(&f, fd, first, &lo, &hi)) {
		debug("ruby: '%s' (Ruby %d.%d): %s", path, version[0], version[1],
		      !l ? "a version not in the table" : !code ? "no code segment"
		      : f.executable && !tp_off ? "ruby_current_ec's TLS offset not found (symbol and "
						  "PT_TLS, or rb_errinfo's code)"
		      : !tls && !tp_off ? "ruby_current_ec's GOT pair not found (symbol or rb_errinfo's code)"
		      : !f.vm_exec ? "rb_vm_exec not found (symbol or rb_iseq_eval_main's code)"
		      : !first ? "no table of the VM's instructions" : "vm_exec_core's bounds not found");
		goto out;
	}
	out->l = *l;
	out->ec_tls_rel = tls ? tls - (code->vaddr - code->offset) : 0;
	out->ec_tp_off = tp_off;
	out->vm_exec_lo_rel = lo - (code->vaddr - code->offset);
	out->vm_exec_hi_rel = hi - (code->vaddr - code->offset);
	out->vm_entry_lo_rel = f.vm_exec - (code->vaddr - code->offset);
	out->vm_entry_hi_rel = out->vm_entry_lo_rel + f.vm_exec_size;
	if (!symbol_table(&f, fd, &syms, &out->last_op_id)) {
		debug("ruby: '%s' (Ruby %d.%d): the symbol table not found from rb_id2str", path,
		      version[0], version[1]);
		memset(&out->l, 0, sizeof(out->l));
		goto out;
	}
	out->symbols_rel = syms - (code->vaddr - code->offset);
	if (gc_flag(&f, fd, &out->gc, &vm_ptr))
		out->gc.vm_ptr = vm_ptr - (code->vaddr - code->offset);
	else
		debug("ruby: '%s': rb_during_gc of another shape: GC not told apart", path);
	out->known = 1;
	debug("ruby: '%s' (Ruby %d.%d): vm_exec_core 0x%llx..0x%llx, ruby_current_ec's %s 0x%llx",
	      path, version[0], version[1], (unsigned long long)lo, (unsigned long long)hi,
	      tls ? "GOT pair" : "offset from the thread pointer -",
	      (unsigned long long)(tls ? tls : (uint64_t)-tp_off));
out:
	elf_end(f.elf);
	return ret;
}
