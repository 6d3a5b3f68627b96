// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The CPython layouts bpfprof reads (python_offsets.c), member by member,
 * and str's state bits, against the DWARF of a build of each version: the
 * /root/.pyenv builds (built with -g) where the machine has them, Debian's
 * python3.11 where python3.11-dbg is installed, bullseye's python3.9 (with
 * python3.9-dbg) in the root e2e/python builds, where it was built. Then python_file_identify
 * on those files (3.13's published offsets must be its table's), on copies
 * of 3.13 whose published offsets are altered, on files only a .symtab
 * and a name make interpreters, a version it does not read and files that
 * are no interpreter.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwelf.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/sendfile.h>
#include <sys/stat.h>
#include <unistd.h>

#include "bpfprof/python_offsets.h"
#include "unit.h"

#define PYENV "/root/.pyenv/versions/"

/* The types the table's members are in, by name (a struct's tag or a typedef's). */
enum { T_RUNTIME, T_INTERP, T_TSTATE, T_CFRAME, T_FRAME, T_IFRAME, T_CODE, T_ASCII, T_COMPACT,
       T_BYTES, T_VAR, T_OBJECT, T_MAX };
static const char *const type_names[T_MAX] = {
	"_PyRuntimeState", "_is", "_ts", "_PyCFrame", "_frame", "_PyInterpreterFrame",
	"PyCodeObject", "PyASCIIObject", "PyCompactUnicodeObject", "PyBytesObject", "PyVarObject",
	"_object",
};

struct types {
	Dwarf_Die die[T_MAX];
	bool found[T_MAX];
};

/* Through typedefs and qualifiers to the struct itself. */
static bool resolve(Dwarf_Die *die)
{
	Dwarf_Attribute a;

	while (dwarf_tag(die) == DW_TAG_typedef || dwarf_tag(die) == DW_TAG_const_type ||
	       dwarf_tag(die) == DW_TAG_volatile_type) {
		if (!dwarf_attr(die, DW_AT_type, &a) || !dwarf_formref_die(&a, die))
			return false;
	}
	return dwarf_tag(die) == DW_TAG_structure_type && dwarf_haschildren(die);
}

/* Every type of type_names defined at a compilation unit's top level. */
static void find_types(Dwarf *dw, struct types *t)
{
	Dwarf_Off off = 0, next;
	size_t hsize;
	int left = T_MAX;

	memset(t, 0, sizeof(*t));
	while (left && dwarf_nextcu(dw, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Die cu, die;

		if (dwarf_offdie(dw, off + hsize, &cu) && dwarf_child(&cu, &die) == 0) {
			do {
				const char *name = dwarf_diename(&die);
				Dwarf_Die d = die;
				int i;

				for (i = 0; name && i < T_MAX; i++) {
					if (t->found[i] || strcmp(name, type_names[i]) || !resolve(&d))
						continue;
					t->die[i] = d;
					t->found[i] = true;
					left--;
				}
			} while (dwarf_siblingof(&die, &die) == 0);
		}
		off = next;
	}
}

/* The byte offset of a member, by a path through nested members ("interpreters.head"); -1: none. */
static long member(const struct types *t, int type, const char *path)
{
	char part[64];
	Dwarf_Die s, m;
	Dwarf_Attribute a;
	Dwarf_Word at;
	long total = 0;
	const char *dot;

	if (!t->found[type])
		return -1;
	s = t->die[type];
	for (;;) {
		bool found = false;

		dot = strchr(path, '.');
		snprintf(part, sizeof(part), "%.*s", dot ? (int)(dot - path) : (int)strlen(path), path);
		if (dwarf_child(&s, &m) != 0)
			return -1;
		do {
			const char *name = dwarf_diename(&m);

			if (dwarf_tag(&m) == DW_TAG_member && name && !strcmp(name, part)) {
				found = true;
				break;
			}
		} while (dwarf_siblingof(&m, &m) == 0);
		if (!found || !dwarf_attr(&m, DW_AT_data_member_location, &a) ||
		    dwarf_formudata(&a, &at))
			return -1;
		total += at;
		if (!dot)
			return total;
		path = dot + 1;
		if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &s) || !resolve(&s))
			return -1;
	}
}

static long size_of(const struct types *t, int type)
{
	Dwarf_Die d = t->die[type];

	return t->found[type] ? dwarf_bytesize(&d) : -1;
}

/* Where a bit field of PyASCIIObject.state starts and how wide it is; false: none. */
static bool state_field(const struct types *t, const char *field, long *bit, long *width)
{
	Dwarf_Die s, m;
	Dwarf_Attribute a;
	Dwarf_Word v;

	if (!t->found[T_ASCII] || dwarf_child((Dwarf_Die *)&t->die[T_ASCII], &m) != 0)
		return false;
	do {
		const char *name = dwarf_diename(&m);

		if (name && !strcmp(name, "state"))
			break;
	} while (dwarf_siblingof(&m, &m) == 0);
	if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &s) || !resolve(&s) ||
	    dwarf_child(&s, &m) != 0)
		return false;
	do {
		const char *name = dwarf_diename(&m);

		if (!name || strcmp(name, field))
			continue;
		*width = dwarf_bitsize(&m);
		if (dwarf_attr(&m, DW_AT_data_bit_offset, &a) && !dwarf_formudata(&a, &v)) {
			*bit = v;
			return true;
		}
		/*
		 * DWARF 2 and 3's form (GCC 10's, bullseye's): the bits counted
		 * from the storage unit's most significant end, little-endian here.
		 */
		if (dwarf_attr(&m, DW_AT_bit_offset, &a) && !dwarf_formudata(&a, &v) &&
		    dwarf_bytesize(&m) > 0 && *width > 0) {
			*bit = 8 * dwarf_bytesize(&m) - (long)v - *width;
			return true;
		}
	} while (dwarf_siblingof(&m, &m) == 0);
	return false;
}

/* A bit field of str's state where python_offsets.h says, shift and mask. */
static void expect_state_bits(const char *build, const struct types *t, const char *field,
			      long shift, long mask)
{
	long bit = -1, width = -1;

	state_field(t, field, &bit, &width);
	CHECK(bit == shift && width >= 0 && (1l << width) - 1 == mask,
	      "%s: str state's %s at bit %ld, %ld wide (python_offsets.h: %ld, mask %#lx)", build,
	      field, bit, width, shift, mask);
}

/* Member want of the table against the DWARF's (PY_NO_MEMBER: the version has none). */
static void expect_member(const char *build, const char *what, unsigned want, long got)
{
	if (want == PY_NO_MEMBER)
		CHECK(got < 0, "%s: %s: none, as the table says", build, what);
	else
		CHECK(got == (long)want, "%s: %s at %ld, the table says %u", build, what, got, want);
}

static void check_layout(const char *build, const struct py_offsets *o, const struct types *t)
{
	/* 3.8 to 3.10: PyFrameObjects; 3.8, 3.9: line numbers from co_lnotab. */
	bool v310 = o->version <= 0x030a, v39 = o->version <= 0x0309, v313 = o->version >= 0x030d;
	int frame = v310 ? T_FRAME : T_IFRAME;

	expect_member(build, "_PyRuntimeState.interpreters.head", o->runtime_interpreters_head,
		      member(t, T_RUNTIME, "interpreters.head"));
	expect_member(build, "PyInterpreterState's threads", o->interp_threads_head,
		      member(t, T_INTERP, v310 ? "tstate_head" : "threads.head"));
	expect_member(build, "PyThreadState.next", o->tstate_next, member(t, T_TSTATE, "next"));
	expect_member(build, "PyThreadState.thread_id", o->tstate_thread_id,
		      member(t, T_TSTATE, "thread_id"));
	expect_member(build, "PyThreadState's frame", o->tstate_frame,
		      member(t, T_TSTATE, v310 ? "frame" : v313 ? "current_frame" : "cframe"));
	expect_member(build, "_PyCFrame.current_frame", o->cframe_current_frame,
		      member(t, T_CFRAME, "current_frame"));
	expect_member(build, "the frame's code", o->frame_code,
		      member(t, frame, v310 ? "f_code" : v313 ? "f_executable" : "f_code"));
	expect_member(build, "the frame's caller", o->frame_previous,
		      member(t, frame, v310 ? "f_back" : "previous"));
	expect_member(build, "the frame's instruction", o->frame_instr,
		      member(t, frame, v310 ? "f_lasti" : v313 ? "instr_ptr" : "prev_instr"));
	expect_member(build, "the frame's entry mark", o->frame_entry,
		      member(t, frame, o->frames == PY_FRAMES_311 ? "is_entry" : "owner"));
	expect_member(build, "co_filename", o->code_filename, member(t, T_CODE, "co_filename"));
	expect_member(build, "co_name", o->code_name, member(t, T_CODE, "co_name"));
	expect_member(build, "co_qualname", o->code_qualname, member(t, T_CODE, "co_qualname"));
	expect_member(build, "co_firstlineno", o->code_firstlineno,
		      member(t, T_CODE, "co_firstlineno"));
	expect_member(build, v39 ? "co_lnotab" : "co_linetable", o->code_linetable,
		      member(t, T_CODE, v39 ? "co_lnotab" : "co_linetable"));
	expect_member(build, "co_code_adaptive", o->code_code_adaptive,
		      member(t, T_CODE, "co_code_adaptive"));
	expect_member(build, "PyASCIIObject.state", o->unicode_state, member(t, T_ASCII, "state"));
	expect_member(build, "PyASCIIObject.length", o->unicode_length, member(t, T_ASCII, "length"));
	expect_member(build, "sizeof(PyASCIIObject)", o->unicode_ascii_data, size_of(t, T_ASCII));
	expect_member(build, "sizeof(PyCompactUnicodeObject)", o->unicode_compact_data,
		      size_of(t, T_COMPACT));
	expect_member(build, "PyVarObject.ob_size", o->bytes_size, member(t, T_VAR, "ob_size"));
	expect_member(build, "PyBytesObject.ob_sval", o->bytes_data, member(t, T_BYTES, "ob_sval"));
	expect_member(build, "PyObject.ob_type", o->object_type, member(t, T_OBJECT, "ob_type"));
	expect_state_bits(build, t, "kind", PY_UNICODE_KIND_SHIFT, PY_UNICODE_KIND_MASK);
	expect_state_bits(build, t, "compact", __builtin_ctz(PY_UNICODE_COMPACT), 1);
	expect_state_bits(build, t, "ascii", __builtin_ctz(PY_UNICODE_ASCII), 1);
}

/* The layout o against the DWARF of the file at path (a library, or a separate debug file). */
static void check_dwarf(const char *build, const char *path, const struct py_offsets *o)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	Dwarf *dw = fd >= 0 ? dwarf_begin(fd, DWARF_C_READ) : NULL;
	struct types t;

	if (CHECK(dw != NULL, "%s: DWARF in %s", build, path)) {
		find_types(dw, &t);
		check_layout(build, o, &t);
		dwarf_end(dw);
	}
	if (fd >= 0)
		close(fd);
}

/* readelf's answer, a line of hex numbers, into v[0..n); false if it has not n. */
static bool readelf_numbers(const char *cmd, unsigned long long *v, int n)
{
	char *out = unit_pipe(cmd, "", 0);
	bool ok = out && (n == 1 ? sscanf(out, "%llx", v) == 1 :
				   sscanf(out, "%llx %llx", v, v + 1) == 2);

	free(out);
	return ok;
}

/* A symbol's address as readelf says (table: --dyn-syms or --syms); 0 if none. */
static unsigned long long readelf_symbol(const char *path, const char *table, const char *sym)
{
	unsigned long long addr = 0;
	char cmd[512];

	snprintf(cmd, sizeof(cmd), "readelf -W %s '%s' | awk '$8 == \"%s\" { print $2; exit }'",
		 table, path, sym);
	return readelf_numbers(cmd, &addr, 1) ? addr : 0;
}

/* A symbol's address less the executable segment's (vaddr - offset), as readelf says; -1: none. */
static long long rel_by_readelf(const char *path, const char *table, const char *sym)
{
	unsigned long long addr = readelf_symbol(path, table, sym), seg[2];
	char cmd[512];

	snprintf(cmd, sizeof(cmd),
		 "readelf -W -l '%s' | awk '$1 == \"LOAD\" && / R E / { print $2, $3; exit }'", path);
	if (!addr || !readelf_numbers(cmd, seg, 2))
		return -1;
	return addr - (seg[1] - seg[0]);
}

/* python_file_identify on the file at path, told its name is name. */
static int identify_as(const char *path, const char *name, struct python_file *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	memset(f, 0xa5, sizeof(*f));
	if (fd < 0)
		return -errno;
	rc = python_file_identify(fd, name, f);
	close(fd);
	return rc;
}

static int identify(const char *path, struct python_file *f)
{
	return identify_as(path, path, f);
}

static const struct {
	const char *version, *lib;
	unsigned hex;
} builds[] = {
	{ "3.8.18", "libpython3.8.so.1.0", 0x0308 },
	{ "3.9.18", "libpython3.9.so.1.0", 0x0309 },
	{ "3.10.13", "libpython3.10.so.1.0", 0x030a },
	{ "3.11.7", "libpython3.11.so.1.0", 0x030b },
	{ "3.12.1", "libpython3.12.so.1.0", 0x030c },
	{ "3.13.0", "libpython3.13.so.1.0", 0x030d },
};

/* A pyenv build: its layout, and what python_file_identify makes of its files. */
static void check_build(unsigned i)
{
	const struct py_offsets *o = python_offsets_known(builds[i].hex);
	struct python_file f;
	char path[256];
	long long rel;
	int rc;

	snprintf(path, sizeof(path), PYENV "%s/lib/%s", builds[i].version, builds[i].lib);
	if (access(path, R_OK)) {
		printf("# %s: not on this machine, not checked\n", path);
		return;
	}
	if (!CHECK(o != NULL, "%s: the table has %u.%u", builds[i].version, builds[i].hex >> 8,
		   builds[i].hex & 0xff))
		return;
	check_dwarf(builds[i].version, path, o);

	rel = rel_by_readelf(path, "--dyn-syms", "_PyRuntime");
	rc = identify(path, &f);
	CHECK(rc == 1 && f.off.version == builds[i].hex &&
		      f.runtime_rel == (uint64_t)rel &&
		      f.code_type_rel == (uint64_t)rel_by_readelf(path, "--dyn-syms", "PyCode_Type"),
	      "%s: an interpreter, %x, _PyRuntime at %#llx from the code (readelf: %#llx)",
	      builds[i].lib, f.off.version, (unsigned long long)f.runtime_rel, rel);
	/* 3.13's offsets come from the file: they must say what the table says. */
	CHECK(!memcmp(&f.off, o, sizeof(*o)), "%s: the layout %s is the table's", builds[i].lib,
	      builds[i].hex >= 0x030d ? "the file publishes" : "identified");

	/* The binary links the library: it holds no interpreter itself. */
	snprintf(path, sizeof(path), PYENV "%s/bin/python%u.%u", builds[i].version,
		 builds[i].hex >> 8, builds[i].hex & 0xff);
	if (!access(path, R_OK))
		CHECK(identify(path, &f) == 0, "%s: no interpreter (it links %s)", path,
		      builds[i].lib);
}

/* Debian's python3.11: static, stripped; its DWARF, if python3.11-dbg is installed. */
/* A symbol's value and size in table (--dyn-syms or --syms) of path, as readelf says; false: none. */
static bool readelf_sized(const char *path, const char *table, const char *sym,
			  unsigned long long v[2])
{
	char cmd[512], *out;
	bool ok;

	/* The value in hex; the size in decimal (in hex, as 0x..., from 100000 on). */
	snprintf(cmd, sizeof(cmd),
		 "readelf -W %s '%s' 2> /dev/null | awk '$8 == \"%s\" { print $2, $3; exit }'",
		 table, path, sym);
	out = unit_pipe(cmd, "", 0);
	ok = out && sscanf(out, "%llx %lli", v, v + 1) == 2;
	free(out);
	return ok;
}

/*
 * The eval loop's code python_file_identify finds in the file at path: its
 * first range _PyEval_EvalFrameDefault's own bytes (readelf); its second
 * the ".cold" part where debug (a file with the build's .symtab; NULL:
 * none) names one, else cold_lo..cold_hi (vaddrs; 0: not known).
 */
static void check_eval(const char *path, const char *debug, uint64_t cold_lo, uint64_t cold_hi)
{
	unsigned long long sym[2], cold[2];
	long long rel = rel_by_readelf(path, "--dyn-syms", "_PyEval_EvalFrameDefault");
	uint64_t bias = readelf_symbol(path, "--dyn-syms", "_PyEval_EvalFrameDefault") - rel;
	struct python_file f;
	unsigned i;

	if (!CHECK(identify(path, &f) == 1 && rel > 0 &&
		   readelf_sized(path, "--dyn-syms", "_PyEval_EvalFrameDefault", sym),
		   "%s: an interpreter exporting _PyEval_EvalFrameDefault", path))
		return;
	CHECK(f.eval_rel.lo[0] == (uint64_t)rel && f.eval_rel.hi[0] == rel + sym[1],
	      "%s: eval's first range its symbol, %#llx..%#llx (readelf: %#llx, %llu bytes)", path,
	      (unsigned long long)f.eval_rel.lo[0], (unsigned long long)f.eval_rel.hi[0], rel, sym[1]);
	for (i = 0; i < PY_EVAL_RANGES; i++)
		printf("# %s: eval range %u: %#llx..%#llx (vaddr)\n", path, i,
		       (unsigned long long)(f.eval_rel.lo[i] ? f.eval_rel.lo[i] + bias : 0),
		       (unsigned long long)(f.eval_rel.hi[i] ? f.eval_rel.hi[i] + bias : 0));
	if (debug && readelf_sized(debug, "--syms", "_PyEval_EvalFrameDefault.cold", cold))
		cold_lo = cold[0], cold_hi = cold[0] + cold[1];
	if (cold_lo)
		CHECK(f.eval_rel.lo[1] + bias == cold_lo && f.eval_rel.hi[1] + bias == cold_hi,
		      "%s: eval's second range its cold part %#llx..%#llx (%s)", path,
		      (unsigned long long)cold_lo, (unsigned long long)cold_hi,
		      debug ? "the debug file's .symtab" : "known");
	CHECK(!f.eval_rel.lo[PY_EVAL_RANGES - 1] || f.eval_rel.lo[1],
	      "%s: eval's ranges in order, none after an empty one", path);
}

/*
 * Where the separate debug file of the file at path is (under root's
 * /usr/lib/debug/.build-id, by its build ID) into debug; false if it has
 * no build ID.
 */
static bool debug_file(const char *path, const char *root, char *debug, size_t size)
{
	const unsigned char *id = NULL;
	ssize_t i, n = 0;
	char *p;
	Elf *elf;
	int fd = open(path, O_RDONLY | O_CLOEXEC);

	elf_version(EV_CURRENT);
	if ((elf = fd >= 0 ? elf_begin(fd, ELF_C_READ, NULL) : NULL))
		n = dwelf_elf_gnu_build_id(elf, (const void **)&id);
	p = debug + snprintf(debug, size, "%s/usr/lib/debug/.build-id/", root);
	for (i = 0; i < n && p < debug + size - 16; i++)
		p += sprintf(p, i == 0 ? "%02x/" : "%02x", id[i]);
	strcpy(p, ".debug");
	if (elf)
		elf_end(elf);
	if (fd >= 0)
		close(fd);
	return n > 0;
}

static void check_debian(void)
{
	const char *path = "/usr/bin/python3.11";
	const struct py_offsets *o = python_offsets_known(0x030b);
	char debug[256];
	struct python_file f;
	long long rel = rel_by_readelf(path, "--dyn-syms", "_PyRuntime");
	bool id;
	int rc;

	rc = identify(path, &f);
	CHECK(rc == 1 && f.off.version == 0x030b && f.runtime_rel == (uint64_t)rel &&
		      !memcmp(&f.off, o, sizeof(*o)),
	      "Debian's %s: 3.11 by its Py_Version, _PyRuntime at %#llx (readelf: %#llx)", path,
	      (unsigned long long)f.runtime_rel, rel);

	id = debug_file(path, "", debug, sizeof(debug));
	check_eval(path, id && !access(debug, R_OK) ? debug : NULL, 0, 0);
	if (id && !access(debug, R_OK))
		check_dwarf("Debian's python3.11", debug, o);
	else
		printf("# %s: no DWARF (%s; apt-get install python3.11-dbg), not checked\n", path,
		       id ? debug : "no build ID");
}

/*
 * Bullseye's python3.9 (3.9.2, linked in, stripped), in e2e/python's root
 * where it was built, with python3.9-dbg's DWARF of it.
 */
static void check_bullseye(void)
{
	const char *cache = getenv("BPFPROF_TEST_CACHE");
	const struct py_offsets *o = python_offsets_known(0x0309);
	struct python_file f;
	char root[256], path[320], debug[512];

	snprintf(root, sizeof(root), "%s/bullseye-root",
		 cache && *cache ? cache : "/var/cache/bpfprof-test");
	snprintf(path, sizeof(path), "%s/usr/bin/python3.9", root);
	if (access(path, R_OK)) {
		printf("# %s: not built (e2e/python builds it), not checked\n", path);
		return;
	}
	CHECK(identify(path, &f) == 1 && f.off.version == 0x0309 && !memcmp(&f.off, o, sizeof(*o)) &&
		      f.runtime_rel == (uint64_t)rel_by_readelf(path, "--dyn-syms", "_PyRuntime"),
	      "bullseye's %s: 3.9 by PyFrame_GetCode, the table's layout", path);
	if (debug_file(path, root, debug, sizeof(debug)) && !access(debug, R_OK)) {
		check_eval(path, debug, 0, 0);
		check_dwarf("bullseye's python3.9", debug, o);
	} else {
		check_eval(path, NULL, 0, 0);
		printf("# %s: no DWARF (%s, from python3.9-dbg), not checked\n", path, debug);
	}
}

/*
 * python_file_identify on a copy of /bin/ls in dir with symbols added
 * (objcopy --add-symbol's NAME=VALUE,FLAGS each) to its .symtab, told its
 * name is name; -ENOENT if objcopy made none.
 */
static int identify_with(const char *dir, const char *const *syms, const char *name,
			 struct python_file *f)
{
	char cmd[1024], path[64], *out;
	int n = snprintf(cmd, sizeof(cmd), "objcopy"), rc;

	snprintf(path, sizeof(path), "%s/ls", dir);
	for (; *syms; syms++)
		n += snprintf(cmd + n, sizeof(cmd) - n, " --add-symbol '%s'", *syms);
	snprintf(cmd + n, sizeof(cmd) - n, " /bin/ls '%s'", path);
	if (!(out = unit_pipe(cmd, "", 0)))
		return -ENOENT;
	free(out);
	rc = identify_as(path, name, f);
	unlink(path);
	return rc;
}

#define RUNTIME "_PyRuntime=.data:0x10,global,object", "PyCode_Type=.data:0x20,global,object"

/*
 * An interpreter only its .symtab names (as a static build linked without
 * --export-dynamic): /bin/ls with _PyRuntime and PyCode_Type added there.
 * Found only where the file's name says Python; the version from Py_Version,
 * Py_NewRef or the name.
 */
static void check_names(void)
{
	static const char *const interp[] = { RUNTIME, NULL };
	static const char *const wrapped[] = { RUNTIME, "Py_Version=-2,global,object", NULL };
	static const char *const trace_refs[] = { RUNTIME,
						  "_Py_ForgetReference=.text:0,global,function",
						  NULL };
	static const char *const new_ref[] = { RUNTIME, "Py_NewRef=.text:0,global,function",
					       "PyFrame_GetCode=.text:0,global,function", NULL };
	static const char *const frame_get_code[] = {
		RUNTIME, "PyFrame_GetCode=.text:0,global,function",
		"PyCode_NewWithPosOnlyArgs=.text:0,global,function", NULL
	};
	static const char *const posonly[] = {
		RUNTIME, "PyCode_NewWithPosOnlyArgs=.text:0,global,function", NULL
	};
	const struct py_offsets *v312 = python_offsets_known(0x030c);
	char dir[] = "/tmp/bpfprof-pyoff.XXXXXX";
	unsigned long long sym, seg[2];
	struct python_file f;
	int rc;

	if (access("/usr/bin/objcopy", X_OK) || !mkdtemp(dir)) {
		printf("# no objcopy or no /tmp: interpreters named by .symtab not checked\n");
		return;
	}
	/* Where _PyRuntime lands (.data + 0x10), less /bin/ls's code's vaddr - offset. */
	if (!readelf_numbers("readelf -W -l /bin/ls | "
			     "awk '$1 == \"LOAD\" && / R E / { print $2, $3; exit }'", seg, 2) ||
	    !readelf_numbers("readelf -W -S /bin/ls | awk '$2 == \".data\" { print $4 }'", &sym, 1))
		seg[0] = seg[1] = sym = 0;
	sym += 0x10;
	rc = identify_with(dir, interp, "/usr/lib/libpython3.12.so.1.0", &f);
	CHECK(rc == 1 && f.off.version == 0x030c && f.runtime_rel == sym - (seg[1] - seg[0]) &&
		      !memcmp(&f.off, v312, sizeof(f.off)),
	      "_PyRuntime in .symtab only, named libpython3.12: 3.12, at %#llx (readelf: %#llx)",
	      (unsigned long long)f.runtime_rel, sym - (seg[1] - seg[0]));
	CHECK(identify_with(dir, interp, "/bin/ls", &f) == 0 &&
		      identify_with(dir, interp, "/usr/bin/python3", &f) == 0,
	      "_PyRuntime in .symtab only, named ls or python3: not looked for");
	CHECK(identify_with(dir, interp, "/opt/bin/python3.10d", &f) == 1 && f.off.version == 0x030a,
	      "named python3.10d: 3.10");
	CHECK(identify_with(dir, interp, "python3.7", &f) == 1 && f.off.version == 0x0307 &&
		      f.off.frames == PY_FRAMES_NONE,
	      "named python3.7: 3.7, not read");
	CHECK(identify_with(dir, interp, "python3.9", &f) == 1 && f.off.version == 0x0309 &&
		      f.off.frames == PY_FRAMES_38,
	      "named python3.9: 3.9, read");
	CHECK(identify_with(dir, frame_get_code, "python3.8", &f) == 1 && f.off.version == 0x0309,
	      "PyFrame_GetCode without Py_NewRef: 3.9, whatever the name says");
	CHECK(identify_with(dir, posonly, "libpython3.7m.so.1.0", &f) == 1 && f.off.version == 0x0308 &&
		      f.off.frames == PY_FRAMES_38,
	      "PyCode_NewWithPosOnlyArgs alone, named 3.7: 3.8");
	CHECK(identify_with(dir, wrapped, "libpython3.12.so", &f) == 1 && f.off.version == 0x030c &&
		      f.off.frames == PY_FRAMES_312,
	      "Py_Version at 2^64 - 2 (no read wraps round to the file): the name's 3.12");
	CHECK(identify_with(dir, trace_refs, "libpython3.12.so", &f) == 1 &&
		      f.off.version == 0x030c && f.off.frames == PY_FRAMES_NONE,
	      "a Py_TRACE_REFS build (_Py_ForgetReference): 3.12, not read");
	CHECK(identify_with(dir, new_ref, "python3.9", &f) == 1 && f.off.version == 0x030a &&
		      f.off.frames == PY_FRAMES_310,
	      "Py_NewRef without Py_Version: 3.10, whatever the name says");
	rmdir(dir);
}

/* A copy of the file at path in a memfd; -1 if none. */
static int memfd_copy(const char *path)
{
	int in = open(path, O_RDONLY | O_CLOEXEC), fd = memfd_create("python", MFD_CLOEXEC);
	struct stat st = { 0 };
	off_t done = 0;
	bool ok = in >= 0 && fd >= 0 && !fstat(in, &st);

	while (ok && done < st.st_size)
		ok = sendfile(fd, in, &done, st.st_size - done) > 0;
	if (in >= 0)
		close(in);
	if (!ok && fd >= 0) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/* The file offset of vaddr in the ELF file on fd; 0 if none. */
static uint64_t file_offset(int fd, uint64_t vaddr)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	uint64_t off = 0;
	GElf_Phdr ph;
	size_t i, n;

	if (elf && !elf_getphdrnum(elf, &n))
		for (i = 0; i < n && !off; i++)
			if (gelf_getphdr(elf, i, &ph) && ph.p_type == PT_LOAD &&
			    vaddr >= ph.p_vaddr && vaddr - ph.p_vaddr < ph.p_filesz)
				off = ph.p_offset + vaddr - ph.p_vaddr;
	if (elf)
		elf_end(elf);
	return off;
}

/* Byte offsets in 3.13's _Py_DebugOffsets (Include/internal/pycore_runtime.h). */
enum {
	DO_FREE_THREADED = 16,
	DO_TSTATE_SIZE = 152, DO_TSTATE_CURRENT_FRAME = 184,
	DO_FRAME_SIZE = 224, DO_FRAME_EXECUTABLE = 240, DO_FRAME_OWNER = 264,
	DO_UNICODE_SIZE = 536, DO_UNICODE_ASCII_SIZE = 560,
};

struct patch {
	uint64_t off, v;	/* the u64 at off becomes v */
};
#define MAX_PATCHES 4

/* What python_file_identify makes of the file on fd with patches p[0..n) made, then undone. */
static int identify_patched(int fd, const struct patch *p, size_t n, struct python_file *f)
{
	uint64_t old[MAX_PATCHES];
	size_t i, done = 0;
	int rc = -EIO;

	while (done < n && done < MAX_PATCHES && pread(fd, &old[done], 8, p[done].off) == 8 &&
	       pwrite(fd, &p[done].v, 8, p[done].off) == 8)
		done++;
	if (done == n) {
		memset(f, 0xa5, sizeof(*f));
		rc = python_file_identify(fd, "libpython3.13.so.1.0", f);
	}
	for (i = done; i-- > 0;)
		if (pwrite(fd, &old[i], 8, p[i].off) != 8)
			rc = -EIO;
	return rc;
}
#define PATCHED(fd, f, ...)                                                                     \
	identify_patched(fd, (const struct patch[]){ __VA_ARGS__ },                                 \
			 sizeof((const struct patch[]){ __VA_ARGS__ }) / sizeof(struct patch), f)

static uint64_t u64_at(int fd, uint64_t off)
{
	uint64_t v = 0;

	return pread(fd, &v, 8, off) == 8 ? v : 0;
}

/*
 * 3.13's offsets as the file publishes them, altered in a copy: each
 * change python_file_identify must refuse (frames PY_FRAMES_NONE, the
 * version still said) or follow.
 */
static void check_published(void)
{
	const char *path = PYENV "3.13.0/lib/libpython3.13.so.1.0";
	const struct py_offsets *o = python_offsets_known(0x030d);
	struct python_file f;
	uint64_t at, tsize;
	int fd, rc;

	if (access(path, R_OK)) {
		printf("# %s: not on this machine, 3.13's published offsets not altered\n", path);
		return;
	}
	fd = memfd_copy(path);
	at = fd >= 0 ? file_offset(fd, readelf_symbol(path, "--dyn-syms", "_PyRuntime")) : 0;
	tsize = u64_at(fd, at + DO_TSTATE_SIZE);
	/* Where the table's members are: this test alters the right words. */
	if (!CHECK(at && u64_at(fd, at + DO_TSTATE_CURRENT_FRAME) == o->tstate_frame &&
			   u64_at(fd, at + DO_FRAME_OWNER) == o->frame_entry &&
			   u64_at(fd, at + DO_UNICODE_ASCII_SIZE) == o->unicode_ascii_data,
		   "a copy of %s: _Py_DebugOffsets at file offset %#llx", path,
		   (unsigned long long)at))
		goto out;
	CHECK(PATCHED(fd, &f, { at, 0x7970626567756278ull /* "xbugdepy" */ }) == 1 &&
		      f.off.version == 0x030d && f.off.frames == PY_FRAMES_NONE,
	      "3.13 without the cookie: 3.13, not read");
	CHECK(PATCHED(fd, &f, { at + DO_FREE_THREADED, 1 }) == 1 && f.off.frames == PY_FRAMES_NONE,
	      "a free-threaded 3.13: not read");
	CHECK(PATCHED(fd, &f, { at + DO_TSTATE_CURRENT_FRAME, tsize }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE,
	      "a thread's frame past its published size (%llu): not read", (unsigned long long)tsize);
	CHECK(PATCHED(fd, &f, { at + DO_FRAME_OWNER, PY_NO_MEMBER }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE,
	      "a frame's owner at 0xffff: not read");
	CHECK(PATCHED(fd, &f, { at + DO_FRAME_EXECUTABLE, 200 }, { at + DO_FRAME_SIZE, 256 }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE,
	      "a frame's code past the walk's 128-byte read: not read");
	rc = PATCHED(fd, &f, { at + DO_TSTATE_CURRENT_FRAME, 0x50 });
	CHECK(rc == 1 &&
		      f.off.frames == PY_FRAMES_312 && f.off.tstate_frame == 0x50,
	      "a thread's frame moved: followed (%#x)", f.off.tstate_frame);
	/* A bigger str header: compact strings' characters move with ASCII ones'. */
	rc = PATCHED(fd, &f, { at + DO_UNICODE_SIZE, 96 }, { at + DO_UNICODE_ASCII_SIZE, 56 });
	CHECK(rc == 1 &&
		      f.off.unicode_ascii_data == 56 && f.off.unicode_compact_data == 72,
	      "an ASCII str header of 56 bytes: compact ones' of %u", f.off.unicode_compact_data);
	CHECK(python_file_identify(fd, path, &f) == 1 && !memcmp(&f.off, o, sizeof(*o)),
	      "the copy restored: the table's layout again");
out:
	if (fd >= 0)
		close(fd);
}

/* Where the roots tests/tools/newer_root.sh builds keep their files. */
static void in_cache(char *buf, size_t len, const char *rel)
{
	const char *cache = getenv("BPFPROF_TEST_CACHE");

	snprintf(buf, len, "%s/%s", cache && *cache ? cache : "/var/cache/bpfprof-test", rel);
}

/* Byte offsets in 3.14's _Py_DebugOffsets (Include/internal/pycore_debug_offsets.h). */
enum {
	DO14_VERSION = 8, DO14_FREE_THREADED = 16,
	DO14_TSTATE_SIZE = 22 * 8, DO14_TSTATE_CURRENT_FRAME = 26 * 8,
	DO14_FRAME_SIZE = 31 * 8, DO14_FRAME_PREVIOUS = 32 * 8, DO14_FRAME_EXECUTABLE = 33 * 8,
	DO14_FRAME_INSTR_PTR = 34 * 8, DO14_FRAME_OWNER = 36 * 8,
	DO14_UNICODE_ASCII_SIZE = 80 * 8,
};

/*
 * Debian's 3.13 and 3.14 (sid's and trixie's roots, when built): the
 * layout each publishes. 3.13's must be the table's line (the cross-check
 * the table is kept for); 3.14's frame and object members the ones its
 * headers give every x86-64 build with the GIL: _PyInterpreterFrame's
 * f_executable, previous, five pointers, instr_ptr, stackpointer,
 * return_offset (2 bytes), then owner at 0x4a; str and bytes headers as
 * 3.13's. Then a copy of 3.14 whose _Py_DebugOffsets are spoilt word by
 * word: each spoiling refused with its cause, a moved member followed.
 */
static void check_debug_offsets(void)
{
	static const char *const files[] = { "sid-root/usr/bin/python3.14", "sid-root/usr/bin/python3.13",
					     "newer-root/usr/bin/python3.13" };
	const struct py_offsets *t13 = python_offsets_known(0x030d);
	struct python_file f;
	char path[512], p314[512] = "";
	uint64_t at;
	unsigned i;
	int fd, rc;

	for (i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		bool is314 = strstr(files[i], "3.14") != NULL;

		in_cache(path, sizeof(path), files[i]);
		if (access(path, R_OK)) {
			printf("# %s: not on this machine (tests/tools/newer_root.sh %s builds it), "
			       "not checked\n", path, strncmp(files[i], "sid", 3) ? "" : "sid");
			continue;
		}
		if (is314)
			snprintf(p314, sizeof(p314), "%s", path);
		rc = identify(path, &f);
		if (!CHECK(rc == 1 && f.off.version == (is314 ? 0x030e : 0x030d) && !f.unread &&
				   f.off.frames == (is314 ? PY_FRAMES_314 : PY_FRAMES_312),
			   "%s: %u.%u, its frames read from its _Py_DebugOffsets (rc %d, unread %u)",
			   path, f.off.version >> 8, f.off.version & 0xff, rc, f.unread))
			continue;
		check_eval(path, NULL, 0, 0);
		if (!is314) {
			CHECK(!memcmp(&f.off, t13, sizeof(*t13)),
			      "%s: the offsets it publishes are the table's 3.13 line", path);
			continue;
		}
		CHECK(f.off.frame_code == 0 && f.off.frame_previous == 8 && f.off.frame_instr == 0x38 &&
			      f.off.frame_entry == 0x4a && f.off.cframe_current_frame == PY_NO_MEMBER,
		      "%s: a frame's f_executable 0, previous 8, instr_ptr 0x38, owner 0x4a "
		      "(%#x %#x %#x %#x)", path, f.off.frame_code, f.off.frame_previous,
		      f.off.frame_instr, f.off.frame_entry);
		CHECK(f.off.object_type == 8 && f.off.bytes_size == 0x10 && f.off.bytes_data == 0x20 &&
			      f.off.unicode_length == 0x10 && f.off.unicode_state == 0x20 &&
			      f.off.unicode_ascii_data == 40 && f.off.unicode_compact_data == 56,
		      "%s: object, bytes and str headers as 3.13's (str data at %u and %u)", path,
		      f.off.unicode_ascii_data, f.off.unicode_compact_data);
		CHECK(f.off.code_firstlineno + 4 <= 512 && f.off.code_linetable < f.off.code_code_adaptive &&
			      f.off.tstate_frame && f.off.interp_threads_head && f.off.runtime_interpreters_head,
		      "%s: code object and states read: co_linetable %#x, bytecode at %#x, "
		      "current_frame %#x", path, f.off.code_linetable, f.off.code_code_adaptive,
		      f.off.tstate_frame);
	}
	if (!*p314)
		return;
	fd = memfd_copy(p314);
	at = fd >= 0 ? file_offset(fd, readelf_symbol(p314, "--dyn-syms", "_PyRuntime")) : 0;
	if (!CHECK(at && u64_at(fd, at + DO14_TSTATE_CURRENT_FRAME) == 0x48 &&
			   u64_at(fd, at + DO14_FRAME_OWNER) == 0x4a &&
			   u64_at(fd, at + DO14_UNICODE_ASCII_SIZE) == 40,
		   "a copy of %s: 3.14's _Py_DebugOffsets at file offset %#llx", p314,
		   (unsigned long long)at))
		goto out;
	CHECK(PATCHED(fd, &f, { at, 0x7970626567756278ull /* "xbugdepy" */ }) == 1 &&
		      f.off.version == 0x030e && f.off.frames == PY_FRAMES_NONE &&
		      f.unread == PY_UNREAD_DEBUG_OFFSETS,
	      "3.14 without the cookie: 3.14, not read, its offsets said not sane");
	CHECK(PATCHED(fd, &f, { at + DO14_VERSION, 0x030f00f0 }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE && f.unread == PY_UNREAD_DEBUG_OFFSETS,
	      "3.14 whose _Py_DebugOffsets say 3.15: not read");
	CHECK(PATCHED(fd, &f, { at + DO14_FREE_THREADED, 1 }) == 1 && f.off.frames == PY_FRAMES_NONE &&
		      f.unread == PY_UNREAD_FREE_THREADED,
	      "a free-threaded 3.14: not read, said so");
	CHECK(PATCHED(fd, &f, { at + DO14_FRAME_PREVIOUS, 0x4141414141414141ull },
		      { at + DO14_FRAME_EXECUTABLE, 0x4141414141414141ull },
		      { at + DO14_FRAME_INSTR_PTR, 0x4141414141414141ull },
		      { at + DO14_FRAME_OWNER, 0x4141414141414141ull }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE && f.unread == PY_UNREAD_DEBUG_OFFSETS,
	      "3.14 with junk for a frame's offsets: not read");
	CHECK(PATCHED(fd, &f, { at + DO14_FRAME_OWNER, u64_at(fd, at + DO14_FRAME_SIZE) }) == 1 &&
		      f.off.frames == PY_FRAMES_NONE,
	      "3.14 with a frame's owner at its size: not read");
	rc = PATCHED(fd, &f, { at + DO14_TSTATE_SIZE, 0x1000 }, { at + DO14_TSTATE_CURRENT_FRAME, 0x800 });
	CHECK(rc == 1 && f.off.frames == PY_FRAMES_314 && f.off.tstate_frame == 0x800,
	      "3.14 with a thread's frame moved: followed (%#x)", f.off.tstate_frame);
	CHECK(python_file_identify(fd, p314, &f) == 1 && f.off.frames == PY_FRAMES_314 && !f.unread,
	      "the copy restored: read again");
out:
	if (fd >= 0)
		close(fd);
}

void test_python_offsets(void)
{
	struct python_file f;
	unsigned i;
	int fd;

	for (i = 0; i < sizeof(builds) / sizeof(builds[0]); i++)
		check_build(i);
	check_debian();
	/* Sid's 3.13.18 (GCC 16), stripped: its loop in a 77 KB unnamed block (issue 35). */
	if (!access("/tmp/r35/python3.13-sid", R_OK))
		check_eval("/tmp/r35/python3.13-sid", NULL, 0x43d73e, 0x450458);
	else
		printf("# /tmp/r35/python3.13-sid: not on this machine, not checked\n");
	check_bullseye();
	check_published();
	check_debug_offsets();
	check_names();

	if (!access(PYENV "3.7.16/lib/libpython3.7m.so.1.0", R_OK))
		CHECK(identify(PYENV "3.7.16/lib/libpython3.7m.so.1.0", &f) == 1 &&
			      f.off.version == 0x0307 && f.off.frames == PY_FRAMES_NONE,
		      "3.7 (by its soname): an interpreter, of a version not read");
	else
		printf("# 3.7.16: not on this machine, not checked\n");
	CHECK(identify("/bin/ls", &f) == 0, "/bin/ls: no interpreter");
	fd = memfd_create("script", MFD_CLOEXEC);
	CHECK(fd >= 0 && write(fd, "#!/bin/sh\n", 10) == 10 &&
		      python_file_identify(fd, "/usr/bin/python3.10-config", &f) == 0,
	      "a script named python3.10-config: no interpreter");
	if (fd >= 0)
		close(fd);
	CHECK(python_offsets_known(0x0307) == NULL && python_offsets_known(0x030e) == NULL &&
		      python_offsets_known(0x040d) == NULL,
	      "no layout for 3.7, 3.14 or 4.13");
}
