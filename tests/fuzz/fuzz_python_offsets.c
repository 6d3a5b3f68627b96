// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * The CPython detector (python_file_identify) on any bytes as an ELF file,
 * from a memfd as the runtime hands it one, named as libpython is (which
 * also reads .symtab) and as a file no name says is Python. A file that is
 * not Python says nothing at all; one that is a layout
 * bpfprof reads (the table's row, or from 3.13 on the file's own offsets in
 * reach of the walk's and the naming's reads) or none but its version.
 * The name only adds: what the plain name finds, the Python name finds too.
 */
#include <string.h>
#include <unistd.h>

#include "bpfprof/python_offsets.h"
#include "fuzz.h"

static bool in_reach(uint16_t off, unsigned size, unsigned reach)
{
	return off + size <= reach;
}

static void check(int rc, const struct python_file *f)
{
	const struct py_offsets *o = &f->off, *known;
	struct py_offsets rest;

	FUZZ_CHECK(rc <= 1);
	/* Not Python: nothing said (an error may leave a layout half read: callers want 1). */
	if (!rc)
		FUZZ_CHECK(fuzz_all_zero(f, sizeof(*f)));
	if (rc != 1)
		return;
	if (o->frames == PY_FRAMES_NONE) {
		rest = *o;
		rest.version = 0;
		FUZZ_CHECK(fuzz_all_zero(&rest, sizeof(rest)));
		return;
	}
	FUZZ_CHECK(!f->unread);
	known = python_offsets_known(o->version);
	if (!python_offsets_published(o->version)) {
		FUZZ_CHECK(known && o->frames == known->frames);
		if (known)
			FUZZ_CHECK(!memcmp(o, known, sizeof(*o)));
		return;
	}
	/* 3.13 on: the file's own, of its version's frame layout. */
	FUZZ_CHECK(o->frames == (o->version >= 0x030e ? PY_FRAMES_314 : PY_FRAMES_312));
	/* The walk reads a frame in one read of 128 bytes, the naming a code object's in 512. */
	FUZZ_CHECK(o->frame_code == PY_NO_MEMBER || in_reach(o->frame_code, 8, 128));
	FUZZ_CHECK(o->frame_previous == PY_NO_MEMBER || in_reach(o->frame_previous, 8, 128));
	FUZZ_CHECK(o->frame_instr == PY_NO_MEMBER || in_reach(o->frame_instr, 8, 128));
	FUZZ_CHECK(o->frame_entry == PY_NO_MEMBER || in_reach(o->frame_entry, 8, 128));
	FUZZ_CHECK(in_reach(o->code_linetable, 8, 512) && in_reach(o->code_filename, 8, 512) &&
		   in_reach(o->code_name, 8, 512) && in_reach(o->code_firstlineno, 4, 512));
	FUZZ_CHECK(o->code_qualname == PY_NO_MEMBER || in_reach(o->code_qualname, 8, 512));
}

int fuzz_python_offsets(const uint8_t *data, size_t size)
{
	struct python_file named, plain;
	int fd = fuzz_input_file(data, size), rc_named, rc_plain;

	if (fd < 0)
		return 0;
	memset(&named, 0xa5, sizeof(named));
	rc_named = python_file_identify(fd, "/usr/lib/libpython3.11.so.1.0", &named);
	check(rc_named, &named);
	memset(&plain, 0x5a, sizeof(plain));
	rc_plain = python_file_identify(fd, "/fuzz/libplain.so", &plain);
	check(rc_plain, &plain);
	if (rc_plain == 1) {
		FUZZ_CHECK(rc_named == 1 && named.runtime_rel == plain.runtime_rel &&
			   named.code_type_rel == plain.code_type_rel);
		/* The name is read for the version only when the file does not say it. */
		if (plain.off.version)
			FUZZ_CHECK(!memcmp(&named, &plain, sizeof(named)));
	}
	close(fd);
	return 0;
}
