// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The CPython layouts bpfprof reads (python_offsets.c), member by member,
 * against the DWARF of a build of each version: the /root/.pyenv builds
 * (built with -g) where the machine has them. Then python_file_identify on
 * those builds, Debian's python3.11, a version it does not read and a file
 * that is no interpreter; and 3.13's published offsets against its table.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
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

/* The bit a bit field of PyASCIIObject.state starts at; -1: none. */
static long state_bit(const struct types *t, const char *field)
{
	Dwarf_Die s, m;
	Dwarf_Attribute a;
	Dwarf_Word bit;

	if (!t->found[T_ASCII] || dwarf_child((Dwarf_Die *)&t->die[T_ASCII], &m) != 0)
		return -1;
	do {
		const char *name = dwarf_diename(&m);

		if (name && !strcmp(name, "state"))
			break;
	} while (dwarf_siblingof(&m, &m) == 0);
	if (!dwarf_attr(&m, DW_AT_type, &a) || !dwarf_formref_die(&a, &s) || !resolve(&s) ||
	    dwarf_child(&s, &m) != 0)
		return -1;
	do {
		const char *name = dwarf_diename(&m);

		if (name && !strcmp(name, field) && dwarf_attr(&m, DW_AT_data_bit_offset, &a) &&
		    !dwarf_formudata(&a, &bit))
			return bit;
	} while (dwarf_siblingof(&m, &m) == 0);
	return -1;
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
	bool v310 = o->version == 0x030a, v313 = o->version >= 0x030d;
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
	expect_member(build, "co_linetable", o->code_linetable, member(t, T_CODE, "co_linetable"));
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
	CHECK(state_bit(t, "kind") == PY_UNICODE_KIND_SHIFT &&
		      state_bit(t, "compact") == __builtin_ctz(PY_UNICODE_COMPACT) &&
		      state_bit(t, "ascii") == __builtin_ctz(PY_UNICODE_ASCII),
	      "%s: str state's kind, compact and ascii bits at %ld, %ld, %ld", build,
	      state_bit(t, "kind"), state_bit(t, "compact"), state_bit(t, "ascii"));
}

/* _PyRuntime's address less the executable segment's (vaddr - offset), as readelf says. */
static long long runtime_rel_by_readelf(const char *path)
{
	char cmd[512], *out;
	unsigned long long sym = 0, off = 0, vaddr = 0;
	const char *line;

	snprintf(cmd, sizeof(cmd),
		 "readelf -W --dyn-syms '%s' | awk '$8 == \"_PyRuntime\" { print $2; exit }';"
		 "readelf -W -l '%s' | awk '$1 == \"LOAD\" && / R E / { print $2, $3; exit }'",
		 path, path);
	out = unit_pipe(cmd, "", 0);
	if (!out)
		return -1;
	line = strchr(out, '\n');
	if (sscanf(out, "%llx", &sym) != 1 || !line || sscanf(line + 1, "%llx %llx", &off, &vaddr) != 2)
		sym = 0;
	free(out);
	return sym ? (long long)(sym - (vaddr - off)) : -1;
}

static int identify(const char *path, struct python_file *f)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC), rc;

	if (fd < 0)
		return -errno;
	rc = python_file_identify(fd, path, f);
	close(fd);
	return rc;
}

static const struct {
	const char *version, *lib;
	unsigned hex;
} builds[] = {
	{ "3.10.13", "libpython3.10.so.1.0", 0x030a },
	{ "3.11.7", "libpython3.11.so.1.0", 0x030b },
	{ "3.12.1", "libpython3.12.so.1.0", 0x030c },
	{ "3.13.0", "libpython3.13.so.1.0", 0x030d },
};

void test_python_offsets(void)
{
	struct python_file f;
	char path[256];
	long long rel;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(builds) / sizeof(builds[0]); i++) {
		const struct py_offsets *o = python_offsets_known(builds[i].hex);
		struct types t;
		Dwarf *dw;
		int fd;

		snprintf(path, sizeof(path), PYENV "%s/lib/%s", builds[i].version, builds[i].lib);
		if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
			printf("# %s: not on this machine, not checked\n", path);
			continue;
		}
		CHECK(o != NULL, "%s: the table has %u.%u", builds[i].version, builds[i].hex >> 8,
		      builds[i].hex & 0xff);
		if (!(dw = dwarf_begin(fd, DWARF_C_READ))) {
			CHECK(false, "%s: has DWARF (built with -g)", path);
			close(fd);
			continue;
		}
		find_types(dw, &t);
		if (o)
			check_layout(builds[i].version, o, &t);
		dwarf_end(dw);
		close(fd);

		rc = identify(path, &f);
		rel = runtime_rel_by_readelf(path);
		CHECK(rc == 1 && f.off.version == builds[i].hex && f.runtime_rel == (uint64_t)rel &&
			      f.code_type_rel,
		      "%s: an interpreter, %x, _PyRuntime at %#llx from the code (readelf: %#llx)",
		      builds[i].lib, f.off.version, (unsigned long long)f.runtime_rel, rel);
		/* 3.13's offsets come from the file: they must say what the table says. */
		CHECK(o && !memcmp(&f.off, o, sizeof(*o)),
		      "%s: the layout read from the file is the table's", builds[i].lib);
	}

	rc = identify("/usr/bin/python3.11", &f);
	rel = runtime_rel_by_readelf("/usr/bin/python3.11");
	CHECK(rc == 1 && f.off.version == 0x030b && f.off.frames == PY_FRAMES_311 &&
		      f.runtime_rel == (uint64_t)rel,
	      "Debian's /usr/bin/python3.11: 3.11 by its Py_Version, _PyRuntime at %#llx (readelf: %#llx)",
	      (unsigned long long)f.runtime_rel, rel);
	if (!access(PYENV "3.9.18/lib/libpython3.9.so.1.0", R_OK))
		CHECK(identify(PYENV "3.9.18/lib/libpython3.9.so.1.0", &f) == 1 &&
			      f.off.version == 0x0309 && f.off.frames == PY_FRAMES_NONE,
		      "3.9 (by its name): an interpreter, of a version not read");
	CHECK(identify("/bin/ls", &f) == 0, "/bin/ls: no interpreter");
	CHECK(python_offsets_known(0x0309) == NULL && python_offsets_known(0x030e) == NULL,
	      "no layout for 3.9 or 3.14");
}
