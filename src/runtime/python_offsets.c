// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdio.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "bpfprof/elf.h"
#include "bpfprof/python_offsets.h"

#define NONE PY_NO_MEMBER

/*
 * x86-64, from each version's headers; tests/unit/test_python_offsets.c
 * checks every member against the DWARF of a build of each.
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
	char soname[64];
};

static void read_symbols(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct interp_file *f)
{
	Elf_Data *d = elf_section_data(scn, ELF_MAX_SYMTAB_BYTES);
	size_t i, n;

	if (!d || !sh->sh_entsize)
		return;
	n = d->d_size / sh->sh_entsize;
	for (i = 0; i < n; i++) {
		GElf_Sym s;
		const char *name;

		if (!gelf_getsym(d, i, &s) || !s.st_value || s.st_shndx == SHN_UNDEF ||
		    !(name = elf_strptr(elf, sh->sh_link, s.st_name)))
			continue;
		if (!strcmp(name, "_PyRuntime"))
			f->runtime = s.st_value;
		else if (!strcmp(name, "PyCode_Type"))
			f->code_type = s.st_value;
		else if (!strcmp(name, "Py_Version"))
			f->py_version = s.st_value;
	}
}

static void read_soname(Elf *elf, Elf_Scn *scn, const GElf_Shdr *sh, struct interp_file *f)
{
	Elf_Data *d = elf_section_data(scn, 1 << 20);
	size_t i;
	GElf_Dyn dyn;
	const char *s;

	for (i = 0; d && sh->sh_entsize && i < d->d_size / sh->sh_entsize; i++)
		if (gelf_getdyn(d, i, &dyn) && dyn.d_tag == DT_SONAME &&
		    (s = elf_strptr(elf, sh->sh_link, dyn.d_un.d_val)))
			snprintf(f->soname, sizeof(f->soname), "%s", s);
}

/* Bytes at vaddr from the file's loaded contents; false if not all there. */
static bool read_vaddr(Elf *elf, int fd, uint64_t vaddr, void *buf, size_t len)
{
	size_t i, n;
	GElf_Phdr ph;

	if (elf_getphdrnum(elf, &n))
		return false;
	for (i = 0; i < n && i < ELF_MAX_SEGMENTS; i++) {
		if (!gelf_getphdr(elf, i, &ph) || ph.p_type != PT_LOAD || vaddr < ph.p_vaddr ||
		    vaddr - ph.p_vaddr + len > ph.p_filesz)
			continue;
		return pread(fd, buf, len, ph.p_offset + (vaddr - ph.p_vaddr)) == (ssize_t)len;
	}
	return false;
}

static int read_file(Elf *elf, struct interp_file *f)
{
	Elf_Scn *scn = NULL;
	GElf_Shdr sh;
	GElf_Phdr ph;
	size_t i, n;
	bool text = false;

	while ((scn = elf_nextscn(elf, scn))) {
		if (!gelf_getshdr(scn, &sh))
			return -EINVAL;
		/* The interpreter exports what bpfprof looks for: the small table is enough. */
		if (sh.sh_type == SHT_DYNSYM)
			read_symbols(elf, scn, &sh, f);
		else if (sh.sh_type == SHT_DYNAMIC)
			read_soname(elf, scn, &sh, f);
	}
	if (elf_getphdrnum(elf, &n))
		return -EINVAL;
	for (i = 0; i < n && i < ELF_MAX_SEGMENTS && !text; i++) {
		if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD && (ph.p_flags & PF_X)) {
			f->text_bias = ph.p_vaddr - ph.p_offset;
			text = true;
		}
	}
	return text ? 0 : -ENOEXEC;
}

/* "python3.11" in a name (a binary's or a library's), as 0x030b; 0 if none. */
static unsigned version_in_name(const char *name)
{
	const char *p = name;
	unsigned major, minor;
	char *end;

	while ((p = strstr(p, "python"))) {
		p += 6;
		major = strtoul(p, &end, 10);
		if (end == p || *end != '.' || major > 9)
			continue;
		minor = strtoul(end + 1, &end, 10);
		if (minor < 256)
			return major << 8 | minor;
	}
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

/* An offset as a u16 member, or false if it does not fit (a hostile file). */
static bool set(__u16 *member, uint64_t v)
{
	if (v >= PY_NO_MEMBER)
		return false;
	*member = v;
	return true;
}

/*
 * The offsets 3.13 publishes, over the table's (which has what they do
 * not say: the size of a compact non-ASCII string's header). False if the
 * file's are not 3.13's.
 */
static bool published_offsets(Elf *elf, int fd, uint64_t runtime, struct py_offsets *o)
{
	struct debug_offsets_313 d;

	if (!read_vaddr(elf, fd, runtime, &d, sizeof(d)) || memcmp(d.cookie, "xdebugpy", 8) ||
	    (d.version >> 16) != 0x030d || d.free_threaded)
		return false;
	return set(&o->runtime_interpreters_head, d.runtime_state.interpreters_head) &&
	       set(&o->interp_threads_head, d.interpreter_state.threads_head) &&
	       set(&o->tstate_next, d.thread_state.next) &&
	       set(&o->tstate_thread_id, d.thread_state.thread_id) &&
	       set(&o->tstate_frame, d.thread_state.current_frame) &&
	       set(&o->frame_code, d.interpreter_frame.executable) &&
	       set(&o->frame_previous, d.interpreter_frame.previous) &&
	       set(&o->frame_instr, d.interpreter_frame.instr_ptr) &&
	       set(&o->frame_entry, d.interpreter_frame.owner) &&
	       set(&o->code_filename, d.code_object.filename) &&
	       set(&o->code_name, d.code_object.name) &&
	       set(&o->code_qualname, d.code_object.qualname) &&
	       set(&o->code_firstlineno, d.code_object.firstlineno) &&
	       set(&o->code_linetable, d.code_object.linetable) &&
	       set(&o->code_code_adaptive, d.code_object.co_code_adaptive) &&
	       set(&o->object_type, d.pyobject.ob_type) &&
	       set(&o->bytes_size, d.bytes_object.ob_size) &&
	       set(&o->bytes_data, d.bytes_object.ob_sval) &&
	       set(&o->unicode_state, d.unicode_object.state) &&
	       set(&o->unicode_length, d.unicode_object.length) &&
	       set(&o->unicode_ascii_data, d.unicode_object.asciiobject_size);
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

int python_file_identify(int fd, const char *path, struct python_file *out)
{
	struct interp_file f = { 0 };
	const struct py_offsets *o;
	unsigned version = 0;
	uint8_t v[4];
	Elf *elf;
	int err;

	memset(out, 0, sizeof(*out));
	if (!(elf = elf_open_fd(fd)))
		return 0;
	err = read_file(elf, &f);
	if (err || !f.runtime) {
		elf_end(elf);
		return err == -EINVAL ? err : 0;
	}
	/* PY_VERSION_HEX: major in the top byte, minor the next (little-endian here). */
	if (f.py_version && read_vaddr(elf, fd, f.py_version, v, sizeof(v)))
		version = v[3] << 8 | v[2];
	if (!version)
		version = version_in_name(f.soname);
	if (!version) {
		const char *base = strrchr(path, '/');

		version = version_in_name(base ? base + 1 : path);
	}
	out->runtime_rel = f.runtime - f.text_bias;
	out->code_type_rel = f.code_type ? f.code_type - f.text_bias : 0;
	o = python_offsets_known(version);
	if (o && f.code_type) {
		out->off = *o;
		if (version >= 0x030d && !published_offsets(elf, fd, f.runtime, &out->off))
			out->off = (struct py_offsets){ 0 };
	}
	if (out->off.frames && !readable(&out->off))
		out->off = (struct py_offsets){ 0 };
	out->off.version = version;
	elf_end(elf);
	return 1;
}
