// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/elf.h"
#include "bpfprof/python_offsets.h"
#include "bpfprof/runtime_elf.h"

#define NONE PY_NO_MEMBER

/*
 * x86-64 (LP64), from each version's headers; tests/unit/test_python_offsets.c
 * checks every member against the DWARF of a build of each. What moves:
 * 3.11 walks _PyInterpreterFrames through tstate->cframe, 3.12 moves the
 * code pointer to a frame's start and drops a str's wstr (smaller str
 * headers), 3.13 drops cframe and grows the runtime and interpreter states.
 */
static const struct py_offsets known[] = {
	{
		.version = 0x030a, .frames = PY_FRAMES_310,
		.runtime_interpreters_head = 0x20, .interp_threads_head = 0x08,
		.tstate_next = 0x08, .tstate_thread_id = 0xb0, .tstate_frame = 0x18,
		.cframe_current_frame = NONE,
		.frame_code = 0x20, .frame_previous = 0x18, .frame_instr = 0x60, .frame_entry = NONE,
		.code_filename = 0x68, .code_name = 0x70, .code_qualname = NONE,
		.code_firstlineno = 0x28, .code_linetable = 0x78, .code_code_adaptive = NONE,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 48, .unicode_compact_data = 72,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
	{
		.version = 0x030b, .frames = PY_FRAMES_311,
		.runtime_interpreters_head = 0x28, .interp_threads_head = 0x10,
		.tstate_next = 0x08, .tstate_thread_id = 0x98, .tstate_frame = 0x38,
		.cframe_current_frame = 0x08,
		.frame_code = 0x20, .frame_previous = 0x30, .frame_instr = 0x38, .frame_entry = 0x44,
		.code_filename = 0x70, .code_name = 0x78, .code_qualname = 0x80,
		.code_firstlineno = 0x48, .code_linetable = 0x88, .code_code_adaptive = 0xb8,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 48, .unicode_compact_data = 72,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
	{
		.version = 0x030c, .frames = PY_FRAMES_312,
		.runtime_interpreters_head = 0x28, .interp_threads_head = 0x48,
		.tstate_next = 0x08, .tstate_thread_id = 0x88, .tstate_frame = 0x38,
		.cframe_current_frame = 0x00,
		.frame_code = 0x00, .frame_previous = 0x08, .frame_instr = 0x38, .frame_entry = 0x46,
		.code_filename = 0x70, .code_name = 0x78, .code_qualname = 0x80,
		.code_firstlineno = 0x44, .code_linetable = 0x88, .code_code_adaptive = 0xc0,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 40, .unicode_compact_data = 56,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
	{
		.version = 0x030d, .frames = PY_FRAMES_312,
		.runtime_interpreters_head = 0x278, .interp_threads_head = 0x1cb0,
		.tstate_next = 0x08, .tstate_thread_id = 0x98, .tstate_frame = 0x48,
		.cframe_current_frame = NONE,
		.frame_code = 0x00, .frame_previous = 0x08, .frame_instr = 0x38, .frame_entry = 0x46,
		.code_filename = 0x70, .code_name = 0x78, .code_qualname = 0x80,
		.code_firstlineno = 0x44, .code_linetable = 0x88, .code_code_adaptive = 0xc8,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 40, .unicode_compact_data = 56,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
};

const struct py_offsets *python_offsets_known(unsigned version)
{
	size_t i;

	for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
		if (known[i].version == version)
			return &known[i];
	return NULL;
}

/* What the file says of itself. */
struct interp_file {
	uint64_t runtime, code_type, py_version;	/* symbols' vaddrs; 0: none */
	uint64_t text_bias;		/* the executable segment's vaddr - offset */
	uint64_t eval, eval_size;	/* _PyEval_EvalFrameDefault's vaddr and size; 0: none */
	bool symtab;			/* its .symtab read too */
	bool new_ref;			/* exports Py_NewRef: 3.10 or later */
	bool trace_refs;		/* exports _Py_ForgetReference: objects grow a list head */
	bool native;			/* 64-bit little-endian, as the table's numbers */
	bool msb;			/* big-endian: how Py_Version reads */
	char soname[64];
};

static void note_symbol(void *file, const char *name, const GElf_Sym *s, size_t index)
{
	struct interp_file *f = file;
	int type = GELF_ST_TYPE(s->st_info);

	(void)index;
	if (!s->st_value)
		return;
	if (type == STT_OBJECT && !strcmp(name, "_PyRuntime"))
		f->runtime = s->st_value;
	else if (type == STT_OBJECT && !strcmp(name, "PyCode_Type"))
		f->code_type = s->st_value;
	else if (type == STT_OBJECT && !strcmp(name, "Py_Version"))
		f->py_version = s->st_value;
	else if (type == STT_FUNC && !strcmp(name, "_PyEval_EvalFrameDefault") && s->st_size)
		f->eval = s->st_value, f->eval_size = s->st_size;
	else if (type == STT_FUNC && !strcmp(name, "Py_NewRef"))
		f->new_ref = true;
	else if (type == STT_FUNC && !strcmp(name, "_Py_ForgetReference"))
		f->trace_refs = true;
}

static void read_soname(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct interp_file *f)
{
	size_t i, n, entsize = gelf_fsize(elf, ELF_T_DYN, 1, EV_CURRENT);
	Elf_Data *d = runtime_elf_section_data(scn, 1 << 20);
	Elf_Data *names = runtime_elf_section_data(elf_getscn(elf, sh->sh_link),
						   ELF_MAX_STRTAB_BYTES);
	GElf_Dyn dyn;
	const char *s;

	if (!d || !names || !entsize)
		return;
	n = d->d_size / entsize;
	for (i = 0; i < n; i++)
		if (gelf_getdyn(d, i, &dyn) && dyn.d_tag == DT_SONAME &&
		    (s = runtime_elf_string(names, dyn.d_un.d_val)))
			snprintf(f->soname, sizeof(f->soname), "%s", s);
}

/* The symbol tables of type (SHT_DYNSYM or SHT_SYMTAB), and the soname: 0 or -EINVAL. */
static int read_sections(Elf *elf, Elf64_Word type, struct interp_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		if (sh.sh_type == type)
			runtime_elf_symbols(elf, scn, &sh, note_symbol, f);
		else if (sh.sh_type == SHT_DYNAMIC && type == SHT_DYNSYM)
			read_soname(elf, scn, &sh, f);
	}
	return 0;
}

/* "python3.11" in a name (a binary's or a library's), as 0x030b; 0 if none. */
static unsigned version_in_name(const char *name)
{
	const char *p = name;
	unsigned long major, minor;
	char *end;

	while ((p = strstr(p, "python"))) {
		p += 6;
		if (*p < '0' || *p > '9')
			continue;
		major = strtoul(p, &end, 10);
		if (*end != '.' || end[1] < '0' || end[1] > '9' || major > 9)
			continue;
		/* What follows the minor ("d", "-config", ".so") says nothing of the layout. */
		minor = strtoul(end + 1, &end, 10);
		if (minor < 256)
			return major << 8 | minor;
	}
	return 0;
}

static const char *base_name(const char *path)
{
	const char *slash = strrchr(path, '/');

	return slash ? slash + 1 : path;
}

/*
 * major << 8 | minor: the file's Py_Version (PY_VERSION_HEX, 3.11 on),
 * else 3.10 if it exports Py_NewRef (new in 3.10), else the name's; 0 if
 * nothing says.
 */
static int file_version(const struct runtime_segments *segs, int fd, const char *path,
			const struct interp_file *f, unsigned *version)
{
	uint8_t v[4];
	int rc;

	*version = 0;
	if (f->py_version) {
		if ((rc = runtime_elf_read(segs, fd, f->py_version, v, sizeof(v))) < 0)
			return rc;
		if (rc)
			*version = f->msb ? v[0] << 8 | v[1] : v[3] << 8 | v[2];
	} else if (f->new_ref) {
		*version = 0x030a;
	}
	if (!*version)
		*version = version_in_name(f->soname);
	if (!*version)
		*version = version_in_name(base_name(path));
	return 0;
}

/* 3.13's _Py_DebugOffsets, as far as bpfprof reads them (Include/internal/pycore_runtime.h). */
struct debug_offsets_313 {
	char cookie[8];
	uint64_t version, free_threaded;
	struct { uint64_t size, finalizing, interpreters_head; } runtime_state;
	struct { uint64_t size, id, next, threads_head, rest[9]; } interpreter_state;
	struct { uint64_t size, prev, next, interp, current_frame, thread_id, native_thread_id,
		 datastack_chunk, status; } thread_state;
	struct { uint64_t size, previous, executable, instr_ptr, localsplus, owner; } interpreter_frame;
	struct { uint64_t size, filename, name, qualname, linetable, firstlineno, argcount,
		 localsplusnames, localspluskinds, co_code_adaptive; } code_object;
	struct { uint64_t size, ob_type; } pyobject;
	struct { uint64_t size, tp_name, tp_repr, tp_flags; } type_object;
	struct { uint64_t size, ob_item, ob_size; } tuple_object, list_object;
	struct { uint64_t size, ma_keys, ma_values; } dict_object;
	struct { uint64_t size, ob_fval; } float_object;
	struct { uint64_t size, lv_tag, ob_digit; } long_object;
	struct { uint64_t size, ob_size, ob_sval; } bytes_object;
	struct { uint64_t size, state, length, asciiobject_size; } unicode_object;
};

/*
 * An offset the interpreter publishes, as a u16 member: false unless a
 * field of width bytes there lies inside the struct of size bytes it
 * also publishes (a hostile or garbled file says anything).
 */
static bool take(__u16 *member, uint64_t off, unsigned width, uint64_t size)
{
	if (off >= PY_NO_MEMBER || off + width > size)
		return false;
	*member = off;
	return true;
}

static bool take_walk(struct py_offsets *o, const struct debug_offsets_313 *d)
{
	return take(&o->runtime_interpreters_head, d->runtime_state.interpreters_head, 8,
		    d->runtime_state.size) &&
	       take(&o->interp_threads_head, d->interpreter_state.threads_head, 8,
		    d->interpreter_state.size) &&
	       take(&o->tstate_next, d->thread_state.next, 8, d->thread_state.size) &&
	       take(&o->tstate_thread_id, d->thread_state.thread_id, 8, d->thread_state.size) &&
	       take(&o->tstate_frame, d->thread_state.current_frame, 8, d->thread_state.size) &&
	       take(&o->frame_code, d->interpreter_frame.executable, 8, d->interpreter_frame.size) &&
	       take(&o->frame_previous, d->interpreter_frame.previous, 8, d->interpreter_frame.size) &&
	       take(&o->frame_instr, d->interpreter_frame.instr_ptr, 8, d->interpreter_frame.size) &&
	       take(&o->frame_entry, d->interpreter_frame.owner, 1, d->interpreter_frame.size);
}

static bool take_naming(struct py_offsets *o, const struct debug_offsets_313 *d)
{
	uint64_t code = d->code_object.size, ascii = d->unicode_object.asciiobject_size;

	return take(&o->code_filename, d->code_object.filename, 8, code) &&
	       take(&o->code_name, d->code_object.name, 8, code) &&
	       take(&o->code_qualname, d->code_object.qualname, 8, code) &&
	       take(&o->code_firstlineno, d->code_object.firstlineno, 4, code) &&
	       take(&o->code_linetable, d->code_object.linetable, 8, code) &&
	       take(&o->code_code_adaptive, d->code_object.co_code_adaptive, 1, code) &&
	       take(&o->object_type, d->pyobject.ob_type, 8, d->pyobject.size) &&
	       take(&o->bytes_size, d->bytes_object.ob_size, 8, d->bytes_object.size) &&
	       take(&o->bytes_data, d->bytes_object.ob_sval, 1, d->bytes_object.size) &&
	       take(&o->unicode_state, d->unicode_object.state, 4, ascii) &&
	       take(&o->unicode_length, d->unicode_object.length, 8, ascii) &&
	       take(&o->unicode_ascii_data, ascii, 0, d->unicode_object.size);
}

/*
 * 3.13: the offsets the interpreter publishes, over the table's. They do
 * not say where a compact non-ASCII str's characters start: where this
 * build's ASCII header ends, plus what the table's compact header adds
 * to it (utf8_length, utf8). 1; 0 if the file's are not 3.13's of a
 * build with the GIL, or not sane (o then partly written); or -errno.
 */
static int published_offsets(const struct runtime_segments *segs, int fd, uint64_t runtime,
			     struct py_offsets *o)
{
	unsigned compact = o->unicode_compact_data - o->unicode_ascii_data;
	struct debug_offsets_313 d;
	int rc = runtime_elf_read(segs, fd, runtime, &d, sizeof(d));

	if (rc <= 0)
		return rc;
	if (memcmp(d.cookie, "xdebugpy", 8) || (d.version >> 16) != 0x030d || d.free_threaded ||
	    !take_walk(o, &d) || !take_naming(o, &d))
		return 0;
	return take(&o->unicode_compact_data, o->unicode_ascii_data + compact, 0,
		    d.unicode_object.size);
}

/*
 * The walk reads a frame's members in one read of at most 128 bytes, and
 * the naming a code object's header in one of at most 512: a layout
 * outside is not one bpfprof can read.
 */
static bool readable(const struct py_offsets *o)
{
	const __u16 frame[] = { o->frame_code, o->frame_previous, o->frame_instr, o->frame_entry };
	size_t i;

	for (i = 0; i < sizeof(frame) / sizeof(frame[0]); i++)
		if (frame[i] != PY_NO_MEMBER && frame[i] + 8 > 128)
			return false;
	return o->code_linetable + 8 <= 512 && o->code_filename + 8 <= 512 &&
	       o->code_name + 8 <= 512 && o->code_firstlineno + 4 <= 512 &&
	       (o->code_qualname == PY_NO_MEMBER || o->code_qualname + 8 <= 512);
}

/*
 * The layout of the file's version into *o: the table's (3.13's as the
 * file publishes it), or none (frames PY_FRAMES_NONE) for a version or a
 * build bpfprof cannot read. 0 or -errno.
 */
static int file_offsets(const struct runtime_segments *segs, int fd, const struct interp_file *f,
			unsigned version, struct py_offsets *o)
{
	const struct py_offsets *known = python_offsets_known(version);
	int rc = 1;

	/* A Py_TRACE_REFS build's objects start with two more pointers (3.13 says so itself). */
	if (!known || !f->code_type || !f->native || (f->trace_refs && version < 0x030d))
		goto none;
	*o = *known;
	if (version == 0x030d)
		rc = published_offsets(segs, fd, f->runtime, o);
	if (rc < 0)
		return rc;
	if (rc && readable(o))
		return 0;
none:
	*o = (struct py_offsets){ .version = version, .frames = PY_FRAMES_NONE };
	return 0;
}

/* The symbols and names of the file: 0, or -EINVAL (headers libelf cannot read). */
static int read_file(Elf *elf, const char *path, struct interp_file *f)
{
	GElf_Ehdr eh;
	int err;

	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	if (!gelf_getehdr(elf, &eh))
		return -EINVAL;
	f->native = eh.e_ident[EI_CLASS] == ELFCLASS64 && eh.e_ident[EI_DATA] == ELFDATA2LSB;
	f->msb = eh.e_ident[EI_DATA] == ELFDATA2MSB;
	/* The interpreter exports what bpfprof looks for: the small table is enough. */
	if ((err = read_sections(elf, SHT_DYNSYM, f)))
		return err;
	/*
	 * But for one that does not (a static build linked without
	 * --export-dynamic), named so: only a file a name says is Python
	 * costs a read of its full table.
	 */
	if (!f->runtime &&
	    (version_in_name(f->soname) || version_in_name(base_name(path)))) {
		f->symtab = true;
		return read_sections(elf, SHT_SYMTAB, f);
	}
	return 0;
}

/* Eval's code: blocks its jumps lead to, with how many jumps and whether a symbol starts in one. */
#define EVAL_CANDIDATES 64
#define EVAL_MAX_BYTES (1u << 20)

struct eval_block {
	uint64_t lo, hi;
	unsigned jumps;
	bool named;
};

struct eval_blocks {
	struct eval_block b[EVAL_CANDIDATES];
	unsigned n;
};

/* A function symbol starting in a block names it, unless it is eval's own part (".cold"). */
static void note_named(void *ctx, const char *name, const GElf_Sym *s, size_t index)
{
	struct eval_blocks *bl = ctx;
	unsigned i;

	(void)index;
	if (GELF_ST_TYPE(s->st_info) != STT_FUNC || !strncmp(name, "_PyEval_EvalFrameDefault.", 25))
		return;
	for (i = 0; i < bl->n; i++)
		if (s->st_value >= bl->b[i].lo && s->st_value < bl->b[i].hi)
			bl->b[i].named = true;
}

static Elf_Scn *section_named(Elf *elf, const char *want)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;
	GElf_Shdr sh;
	const char *name;

	if (elf_getshdrstrndx(elf, &shstrndx))
		return NULL;
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) && (name = elf_strptr(elf, shstrndx, sh.sh_name)) &&
		    !strcmp(name, want))
			return scn;
	return NULL;
}

/* Where jump target t lies: a block already met, or the function .eh_frame_hdr says holds it. */
static void note_target(struct eval_blocks *bl, Elf_Scn *hdr, const struct runtime_segments *segs,
			int fd, uint64_t t)
{
	uint64_t lo, hi;
	unsigned i;

	for (i = 0; i < bl->n; i++)
		if (t >= bl->b[i].lo && t < bl->b[i].hi) {
			bl->b[i].jumps++;
			return;
		}
	if (bl->n < EVAL_CANDIDATES && runtime_elf_function_bounds(hdr, segs, fd, t, &lo, &hi))
		bl->b[bl->n++] = (struct eval_block){ .lo = lo, .hi = hi, .jumps = 1 };
}

/*
 * The eval loop's code (struct py_eval_code, as vaddrs): the symbol's
 * bytes, then the blocks of no symbol of their own that two or more of its
 * direct jumps (jmp rel32, jcc rel32; x86-64) lead to, the most jumped to
 * first. The bytes are not decoded, only scanned: an opcode byte met inside
 * another instruction gives a target at random, which seldom lands twice
 * in one block without a symbol. Nothing if the file has no such symbol.
 */
static void eval_code(Elf *elf, const struct runtime_segments *segs, int fd,
		      const struct interp_file *f, struct py_eval_code *out)
{
	const struct runtime_segment *code = runtime_segment_of(segs, f->eval);
	struct eval_blocks bl = { .n = 0 };
	Elf_Scn *hdr, *scn = NULL;
	uint64_t size = f->eval_size, i, t, end = f->eval + f->eval_size;
	unsigned k, r = 1;
	uint8_t *b;
	GElf_Shdr sh;

	memset(out, 0, sizeof(*out));
	if (!f->eval || !code || !code->exec)
		return;
	out->lo[0] = f->eval;
	out->hi[0] = end;
	if (!f->native || size > EVAL_MAX_BYTES || size < 6 || !(hdr = section_named(elf, ".eh_frame_hdr")))
		return;
	b = malloc(size);
	if (!b)
		return;
	if (runtime_elf_read(segs, fd, f->eval, b, size) != 1) {
		free(b);
		return;
	}
	for (i = 0; i + 5 <= size; i++) {
		if (b[i] == 0xe9)
			t = f->eval + i + 5 + (int64_t)(int32_t)(b[i + 1] | b[i + 2] << 8 | b[i + 3] << 16 |
								  (uint32_t)b[i + 4] << 24);
		else if (b[i] == 0x0f && i + 6 <= size && (b[i + 1] & 0xf0) == 0x80)
			t = f->eval + i + 6 + (int64_t)(int32_t)(b[i + 2] | b[i + 3] << 8 | b[i + 4] << 16 |
								  (uint32_t)b[i + 5] << 24);
		else
			continue;
		if ((t < f->eval || t >= end) && t >= code->vaddr && t < code->vaddr + code->filesz)
			note_target(&bl, hdr, segs, fd, t);
	}
	free(b);
	while ((scn = elf_nextscn(elf, scn)))
		if (gelf_getshdr(scn, &sh) &&
		    (sh.sh_type == SHT_DYNSYM || (sh.sh_type == SHT_SYMTAB && f->symtab)))
			runtime_elf_symbols(elf, scn, &sh, note_named, &bl);
	/* The most jumped to first. */
	while (r < PY_EVAL_RANGES) {
		struct eval_block *best = NULL;

		for (k = 0; k < bl.n; k++)
			if (!bl.b[k].named && bl.b[k].jumps >= 2 && (!best || bl.b[k].jumps > best->jumps))
				best = &bl.b[k];
		if (!best)
			break;
		out->lo[r] = best->lo;
		out->hi[r++] = best->hi;
		best->named = true;	/* taken */
	}
}

int python_file_identify(int fd, const char *path, struct python_file *out)
{
	struct interp_file f = { 0 };
	struct runtime_segments segs;
	const struct runtime_segment *code;
	struct py_eval_code eval;
	unsigned version, i;
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(elf = elf_open_fd(fd)))
		return 0;
	err = read_file(elf, path, &f);
	if (err || !f.runtime)
		goto out;
	runtime_elf_segments(elf, false, &segs);
	if (!(code = runtime_code_segment(&segs)))
		goto out;
	f.text_bias = code->vaddr - code->offset;
	if ((err = file_version(&segs, fd, path, &f, &version)) ||
	    (err = file_offsets(&segs, fd, &f, version, &out->off)))
		goto out;
	out->off.version = version;
	out->runtime_rel = f.runtime - f.text_bias;
	out->code_type_rel = f.code_type ? f.code_type - f.text_bias : 0;
	eval_code(elf, &segs, fd, &f, &eval);
	for (i = 0; i < PY_EVAL_RANGES && eval.lo[i]; i++) {
		out->eval_rel.lo[i] = eval.lo[i] - f.text_bias;
		out->eval_rel.hi[i] = eval.hi[i] - f.text_bias;
	}
	err = 1;
out:
	elf_end(elf);
	return err;
}
