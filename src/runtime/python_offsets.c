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
 * 3.10 trades a frame's f_stacktop pointer for an int (f_lasti, now in
 * code units, 8 bytes nearer) and co_lnotab for co_linetable, 3.11 walks _PyInterpreterFrames through tstate->cframe, 3.12 moves the
 * code pointer to a frame's start and drops a str's wstr (smaller str
 * headers), 3.13 drops cframe and grows the runtime and interpreter states.
 * From 3.13 on the file's own _Py_DebugOffsets give the layout (below);
 * 3.13's line stays as a cross-check of them (python.c says at -v when a
 * file's differ, and takes the file's). 3.14 has no line: it is read only
 * from its _Py_DebugOffsets.
 */
static const struct py_offsets known[] = {
	/* 3.9 moves much of the interpreter and runtime states, nothing read here. */
	{
		.version = 0x0308, .frames = PY_FRAMES_38,
		.runtime_interpreters_head = 0x20, .interp_threads_head = 0x08,
		.tstate_next = 0x08, .tstate_thread_id = 0xb0, .tstate_frame = 0x18,
		.cframe_current_frame = NONE,
		.frame_code = 0x20, .frame_previous = 0x18, .frame_instr = 0x68, .frame_entry = NONE,
		.code_filename = 0x68, .code_name = 0x70, .code_qualname = NONE,
		.code_firstlineno = 0x28, .code_linetable = 0x78, .code_code_adaptive = NONE,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 48, .unicode_compact_data = 72,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
	{
		.version = 0x0309, .frames = PY_FRAMES_38,
		.runtime_interpreters_head = 0x20, .interp_threads_head = 0x08,
		.tstate_next = 0x08, .tstate_thread_id = 0xb0, .tstate_frame = 0x18,
		.cframe_current_frame = NONE,
		.frame_code = 0x20, .frame_previous = 0x18, .frame_instr = 0x68, .frame_entry = NONE,
		.code_filename = 0x68, .code_name = 0x70, .code_qualname = NONE,
		.code_firstlineno = 0x28, .code_linetable = 0x78, .code_code_adaptive = NONE,
		.unicode_state = 0x20, .unicode_length = 0x10,
		.unicode_ascii_data = 48, .unicode_compact_data = 72,
		.bytes_size = 0x10, .bytes_data = 0x20, .object_type = 0x08,
	},
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
	bool frame_get_code;		/* exports PyFrame_GetCode: 3.9 or later */
	bool posonly;			/* exports PyCode_NewWithPosOnlyArgs: 3.8 or later */
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
	else if (type == STT_FUNC && !strcmp(name, "PyFrame_GetCode"))
		f->frame_get_code = true;
	else if (type == STT_FUNC && !strcmp(name, "PyCode_NewWithPosOnlyArgs"))
		f->posonly = true;
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
 * else by the newest function it exports of Py_NewRef (new in 3.10),
 * PyFrame_GetCode (3.9) and PyCode_NewWithPosOnlyArgs (3.8), else the
 * name's; 0 if nothing says.
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
	} else if (f->frame_get_code) {
		*version = 0x0309;
	} else if (f->posonly) {
		*version = 0x0308;
	}
	if (!*version)
		*version = version_in_name(f->soname);
	if (!*version)
		*version = version_in_name(base_name(path));
	return 0;
}

/*
 * _Py_DebugOffsets (3.13 on): a cookie, the version, whether free-threaded,
 * then one group of u64 words per struct, each group starting with the
 * struct's size and going on with its members' offsets. Each version adds
 * words, so where a group starts is the version's (as u64 indexes):
 * 3.13's Include/internal/pycore_runtime.h; 3.14's pycore_debug_offsets.h
 * grows the interpreter state's group by 3 (threads_main,
 * code_object_generation, tlbc_generation), the frame's by 2
 * (stackpointer, tlbc_index), the code object's by 1 (co_tlbc) and adds
 * set_object's 4 before dict_object. Within a group, the members bpfprof
 * reads stay where they were (the DO_* indexes below).
 */
struct debug_layout {
	unsigned version;
	uint8_t runtime, interp, tstate, frame, code, object, bytes, unicode, words;
};

static const struct debug_layout debug_layouts[] = {
	{ 0x030d, 3, 6, 19, 28, 34, 44, 64, 67, 71 },
	{ 0x030e, 3, 6, 22, 31, 39, 50, 74, 77, 81 },
};
#define DEBUG_WORDS_MAX 81

/* Members' indexes within their group (0 is every group's size). */
enum {
	DO_SIZE = 0,
	DO_RUNTIME_INTERPRETERS_HEAD = 2,
	DO_INTERP_THREADS_HEAD = 3,
	DO_TSTATE_NEXT = 2, DO_TSTATE_CURRENT_FRAME = 4, DO_TSTATE_THREAD_ID = 5,
	DO_FRAME_PREVIOUS = 1, DO_FRAME_EXECUTABLE = 2, DO_FRAME_INSTR_PTR = 3, DO_FRAME_OWNER = 5,
	DO_CODE_FILENAME = 1, DO_CODE_NAME = 2, DO_CODE_QUALNAME = 3, DO_CODE_LINETABLE = 4,
	DO_CODE_FIRSTLINENO = 5, DO_CODE_ADAPTIVE = 9,
	DO_OBJECT_TYPE = 1,
	DO_BYTES_OB_SIZE = 1, DO_BYTES_SVAL = 2,
	DO_UNICODE_STATE = 1, DO_UNICODE_LENGTH = 2, DO_UNICODE_ASCII_SIZE = 3,
};

static const struct debug_layout *debug_layout_of(unsigned version)
{
	size_t i;

	for (i = 0; i < sizeof(debug_layouts) / sizeof(debug_layouts[0]); i++)
		if (debug_layouts[i].version == version)
			return &debug_layouts[i];
	return NULL;
}

bool python_offsets_published(unsigned version)
{
	return debug_layout_of(version) != NULL;
}

/*
 * What _Py_DebugOffsets does not say, from each version's headers: how its
 * frames chain (3.13 as 3.12; 3.14 tags f_executable), no _PyCFrame since
 * 3.13, and that a compact non-ASCII str's characters start 16 bytes past
 * the ASCII header's end (utf8_length and utf8, PyCompactUnicodeObject,
 * 3.12 on). The rest is the file's.
 */
static void debug_facts(unsigned version, struct py_offsets *o)
{
	*o = (struct py_offsets){ .version = version,
				  .frames = version >= 0x030e ? PY_FRAMES_314 : PY_FRAMES_312,
				  .cframe_current_frame = PY_NO_MEMBER };
}
#define PY_COMPACT_EXTRA 16

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

/* Word m of the group starting at word g. */
#define W(g, m) d[(g) + (m)]

static bool take_walk(struct py_offsets *o, const struct debug_layout *l, const uint64_t *d)
{
	uint64_t rt = W(l->runtime, DO_SIZE), in = W(l->interp, DO_SIZE),
		 ts = W(l->tstate, DO_SIZE), fr = W(l->frame, DO_SIZE);

	return take(&o->runtime_interpreters_head, W(l->runtime, DO_RUNTIME_INTERPRETERS_HEAD), 8, rt) &&
	       take(&o->interp_threads_head, W(l->interp, DO_INTERP_THREADS_HEAD), 8, in) &&
	       take(&o->tstate_next, W(l->tstate, DO_TSTATE_NEXT), 8, ts) &&
	       take(&o->tstate_thread_id, W(l->tstate, DO_TSTATE_THREAD_ID), 8, ts) &&
	       take(&o->tstate_frame, W(l->tstate, DO_TSTATE_CURRENT_FRAME), 8, ts) &&
	       take(&o->frame_code, W(l->frame, DO_FRAME_EXECUTABLE), 8, fr) &&
	       take(&o->frame_previous, W(l->frame, DO_FRAME_PREVIOUS), 8, fr) &&
	       take(&o->frame_instr, W(l->frame, DO_FRAME_INSTR_PTR), 8, fr) &&
	       take(&o->frame_entry, W(l->frame, DO_FRAME_OWNER), 1, fr);
}

static bool take_naming(struct py_offsets *o, const struct debug_layout *l, const uint64_t *d)
{
	uint64_t code = W(l->code, DO_SIZE), ascii = W(l->unicode, DO_UNICODE_ASCII_SIZE),
		 obj = W(l->object, DO_SIZE), bytes = W(l->bytes, DO_SIZE);

	return take(&o->code_filename, W(l->code, DO_CODE_FILENAME), 8, code) &&
	       take(&o->code_name, W(l->code, DO_CODE_NAME), 8, code) &&
	       take(&o->code_qualname, W(l->code, DO_CODE_QUALNAME), 8, code) &&
	       take(&o->code_firstlineno, W(l->code, DO_CODE_FIRSTLINENO), 4, code) &&
	       take(&o->code_linetable, W(l->code, DO_CODE_LINETABLE), 8, code) &&
	       take(&o->code_code_adaptive, W(l->code, DO_CODE_ADAPTIVE), 1, code) &&
	       take(&o->object_type, W(l->object, DO_OBJECT_TYPE), 8, obj) &&
	       take(&o->bytes_size, W(l->bytes, DO_BYTES_OB_SIZE), 8, bytes) &&
	       take(&o->bytes_data, W(l->bytes, DO_BYTES_SVAL), 1, bytes) &&
	       take(&o->unicode_state, W(l->unicode, DO_UNICODE_STATE), 4, ascii) &&
	       take(&o->unicode_length, W(l->unicode, DO_UNICODE_LENGTH), 8, ascii) &&
	       take(&o->unicode_ascii_data, ascii, 0, W(l->unicode, DO_SIZE)) &&
	       take(&o->unicode_compact_data, ascii + PY_COMPACT_EXTRA, 0, W(l->unicode, DO_SIZE));
}
#undef W

/*
 * 3.13 on: the offsets the interpreter publishes at the start of
 * _PyRuntime, over the version's facts (debug_facts). 1; 0 with *why
 * said if the file's are not those of this version's build with the GIL,
 * or not sane; or -errno.
 */
static int published_offsets(const struct runtime_segments *segs, int fd, uint64_t runtime,
			     unsigned version, struct py_offsets *o, uint32_t *why)
{
	const struct debug_layout *l = debug_layout_of(version);
	uint64_t d[DEBUG_WORDS_MAX];
	int rc;

	if (!l)
		return -EINVAL;
	if ((rc = runtime_elf_read(segs, fd, runtime, d, l->words * 8)) <= 0)
		return rc;
	debug_facts(version, o);
	*why = PY_UNREAD_DEBUG_OFFSETS;
	/* The version there is PY_VERSION_HEX: 0x030e00f0 for 3.14.0 final. */
	if (memcmp(d, "xdebugpy", 8) || (d[1] >> 16) != version)
		return 0;
	if (d[2]) {
		*why = PY_UNREAD_FREE_THREADED;
		return 0;
	}
	return take_walk(o, l, d) && take_naming(o, l, d);
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
 * The layout of the file's version into *o: the table's (3.10-3.12), or
 * the one the file publishes (3.13 on; 3.13's table is compared with it
 * by the caller), or none (frames PY_FRAMES_NONE, *why said) for a
 * version or a build bpfprof cannot read. 0 or -errno.
 */
static int file_offsets(const struct runtime_segments *segs, int fd, const struct interp_file *f,
			unsigned version, struct py_offsets *o, uint32_t *why)
{
	const struct py_offsets *known = python_offsets_known(version);
	bool published = python_offsets_published(version);
	int rc = 1;

	*why = PY_UNREAD_VERSION;
	if (!known && !published)
		goto none;
	*why = PY_UNREAD_BUILD;
	/* A Py_TRACE_REFS build's objects start with two more pointers (3.13 says so itself). */
	if (!f->code_type || !f->native || (f->trace_refs && !published))
		goto none;
	if (published)
		rc = published_offsets(segs, fd, f->runtime, version, o, why);
	else
		*o = *known;
	if (rc < 0)
		return rc;
	if (!rc)
		goto none;
	*why = PY_UNREAD_REACH;
	if (readable(o))
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
	    (err = file_offsets(&segs, fd, &f, version, &out->off, &out->unread)))
		goto out;
	if (out->off.frames != PY_FRAMES_NONE)
		out->unread = 0;
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
