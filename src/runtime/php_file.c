// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/* Which files hold a PHP engine, and what the PHP walk needs of each (php_file.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/cfi_rows.h"
#include "bpfprof/elf.h"
#include "bpfprof/php_file.h"
#include "bpfprof/runtime_elf.h"
#include "bpfprof/util.h"

/*
 * The layouts read, by version: offsetof() of each field in the headers
 * of Debian's php8.2-dev and trixie's php8.4-dev (tests/tools/php_layout/
 * prints them; docs/research/php.md).
 */
static const struct php_version_row {
	unsigned major, minor;
	struct php_layout l;
} layouts[] = {
	{ 8, 2, { .eg_current_execute_data = 488, .fn_filename = 152,
		  .op_lineno = 24 } },
	{ 8, 4, { .eg_current_execute_data = 488, .fn_filename = 168,
		  .op_lineno = 24 } },
};

static const struct php_version_row *row_of(unsigned major, unsigned minor)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(layouts); i++)
		if (layouts[i].major == major && layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

const struct php_layout *php_layout_of(unsigned major, unsigned minor)
{
	const struct php_version_row *r = row_of(major, minor);

	return r ? &r->l : NULL;
}

/*
 * A pc of execute_ex's body, lo..hi (file offsets): the row its CFI gives
 * the most code (its frame whole: 8.2's rsp-based, 8.4's on rbp), which
 * the native walk is put at when it leaves JIT code; 0 if none. Its
 * return address's offset from the stack pointer there into *ra_off (0:
 * the row is rbp's).
 */
static uint64_t body_pc(Elf *elf, uint64_t lo, uint64_t hi, uint32_t *ra_off)
{
	struct cfi_rows rows;
	uint64_t pc = 0, best = 0, end;
	size_t i;

	*ra_off = 0;
	if (cfi_rows_build(elf, NULL, &rows))
		return 0;
	for (i = 0; i < rows.nr; i++) {
		const struct unwind_row *r = &rows.rows[i];
		uint8_t rule = r->rules & ROW_CFA_MASK;

		if (r->addr < lo || r->addr >= hi || (rule != ROW_CFA_RSP && rule != ROW_CFA_RBP))
			continue;
		end = i + 1 < rows.nr && rows.rows[i + 1].addr < hi ? rows.rows[i + 1].addr : hi;
		if (end - r->addr > best) {
			best = end - r->addr, pc = r->addr;
			*ra_off = rule == ROW_CFA_RSP && r->cfa_off > 0 ? r->cfa_off * 8 - 8 : 0;
		}
	}
	cfi_rows_free(&rows);
	return pc;
}

/* Whether addr..addr+size lies in the code segment: its bounds less the code's bias do not wrap. */
static bool in_code(const struct runtime_segment *code, uint64_t addr, uint64_t size)
{
	return size && addr >= code->vaddr && size <= code->filesz &&
	       addr - code->vaddr <= code->filesz - size;
}

struct php_elf {
	Elf *elf;
	const char *path;
	struct runtime_segments segs;
	Elf_Scn *rodata;
	uint64_t eg, execute_ex, execute_ex_size, call, call_size;
	bool zend_execute;
};

static void note_symbol(void *ctx, const char *name, const GElf_Sym *sym, size_t index)
{
	struct php_elf *f = ctx;
	int type = GELF_ST_TYPE(sym->st_info);

	(void)index;
	if (type == STT_OBJECT && !strcmp(name, "executor_globals"))
		f->eg = sym->st_value;
	else if (type == STT_FUNC && !strcmp(name, "execute_ex"))
		f->execute_ex = sym->st_value, f->execute_ex_size = sym->st_size;
	else if (type == STT_FUNC && !strcmp(name, "zend_call_function"))
		f->call = sym->st_value, f->call_size = sym->st_size;
	else if (type == STT_FUNC && !strcmp(name, "zend_execute"))
		f->zend_execute = true;
}

static int read_elf(struct php_elf *f)
{
	Elf_Scn *scn = NULL;
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
			runtime_elf_symbols(f->elf, scn, &sh, note_symbol, f);
		else if (sh.sh_type == SHT_PROGBITS && name && !strcmp(name, ".rodata"))
			f->rodata = scn;
	}
	runtime_elf_segments(f->elf, false, &f->segs);
	return 1;
}

/* The bytes after the first occurrence of what in d, up to max of them and a NUL; NULL if none. */
static const char *after(const Elf_Data *d, const char *what, size_t max, char *out)
{
	const char *s = d->d_buf, *at;
	size_t len = strlen(what), i;

	at = memmem(s, d->d_size, what, len);
	if (!at)
		return NULL;
	at += len;
	for (i = 0; i + 1 < max && at + i < s + d->d_size && at[i]; i++)
		out[i] = at[i];
	out[i] = '\0';
	return out;
}

int php_file_identify(int fd, const char *path, struct php_file *out, const char **why)
{
	struct php_elf f = { .path = path };
	const struct runtime_segment *code;
	const struct php_version_row *row;
	char version[32], api[32];
	unsigned major, minor;
	Elf_Data *rodata;
	uint64_t base;
	int ret;

	memset(out, 0, sizeof(*out));
	*why = NULL;
	if (elf_version(EV_CURRENT) == EV_NONE || !(f.elf = elf_open_fd(fd)))
		return 0;
	ret = read_elf(&f);
	if (ret <= 0 || !f.execute_ex || !f.zend_execute) {
		ret = ret < 0 ? ret : 0;
		goto out;
	}
	/* A PHP engine from here: whatever is not found leaves it one not read (known 0). */
	ret = 1;
	rodata = runtime_elf_section_data(f.rodata, 64u << 20);
	code = runtime_code_segment(&f.segs);
	if (!rodata || !after(rodata, "X-Powered-By: PHP/", sizeof(version), version) ||
	    sscanf(version, "%u.%u", &major, &minor) != 2 || major > 99 || minor > 99) {
		*why = "its version not found (the X-Powered-By string)";
		goto out;
	}
	out->version = major << 8 | minor;
	row = row_of(major, minor);
	if (!row) {
		*why = "a version not in the table";
		goto out;
	}
	/* "API20220829,NTS": a thread-safe build ("TS") keeps its globals per thread. */
	if (after(rodata, "API20", sizeof(api), api) && !strstr(api, ",NTS")) {
		*why = "a thread-safe (ZTS) build";
		goto out;
	}
	if (!f.eg || !code || !in_code(code, f.execute_ex, f.execute_ex_size)) {
		*why = !f.eg ? "executor_globals not exported" : "execute_ex's bounds not found";
		goto out;
	}
	base = code->vaddr - code->offset;
	out->l = row->l;
	out->eg_rel = f.eg - base;
	out->execute_ex_lo_rel = f.execute_ex - base;
	out->execute_ex_hi_rel = f.execute_ex + f.execute_ex_size - base;
	out->text_lo_rel = code->vaddr - base;
	out->text_hi_rel = code->vaddr + code->filesz - base;
	if (in_code(code, f.call, f.call_size)) {
		out->call_lo_rel = f.call - base;
		out->call_hi_rel = f.call + f.call_size - base;
	}
	out->jit_vm_pc_rel = body_pc(f.elf, out->execute_ex_lo_rel, out->execute_ex_hi_rel,
				     &out->jit_ra_off);
	if (!out->jit_vm_pc_rel)
		debug("php: '%s': execute_ex's frame not found in its CFI: JIT code not walked through",
		      path);
	out->known = 1;
	debug("php: '%s' (PHP %u.%u): executor_globals 0x%llx, execute_ex 0x%llx..0x%llx", path, major,
	      minor, (unsigned long long)f.eg, (unsigned long long)f.execute_ex,
	      (unsigned long long)(f.execute_ex + f.execute_ex_size));
out:
	elf_end(f.elf);
	return ret;
}
