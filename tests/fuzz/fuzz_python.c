// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A CPython process's memory, as hostile as can be: the first byte picks a
 * version's layout (3.8 to 3.13); the rest is both a line table (read as
 * each layout's) and the memory a code object is read from (at FUZZ_MEMORY_BASE,
 * the object at its start, whatever its pointers point at). Names must
 * come out as text with no control character; lines as a line, or -1 from
 * the table alone.
 */
#include <string.h>

#include "bpfprof/python_code.h"
#include "bpfprof/python_offsets.h"
#include "fuzz.h"

/*
 * The bytes as a line table of each layout (3.8 and 3.9 share one, 3.11 to
 * 3.13 another), from a first line of 1 and of the largest a hostile
 * process can give; an address past every entry decodes them all (and
 * has no line but in 3.8's and 3.9's, where the last change holds on).
 */
static void check_tables(const uint8_t *data, size_t size)
{
	static const int firsts[] = { 1, INT32_MAX };
	static const int layouts[] = { PY_FRAMES_38, PY_FRAMES_310, PY_FRAMES_311 };
	unsigned i, l;
	uint64_t addr;

	for (l = 0; l < sizeof(layouts) / sizeof(layouts[0]); l++)
		for (i = 0; i < sizeof(firsts) / sizeof(firsts[0]); i++) {
			int layout = layouts[l], past;

			for (addr = 0; addr < 64; addr += 6)
				FUZZ_CHECK(python_linetable_line(layout, data, size, firsts[i],
								 addr) >= -1);
			past = python_linetable_line(layout, data, size, firsts[i], UINT64_MAX);
			FUZZ_CHECK(layout == PY_FRAMES_38 ? past >= -1 : past == -1);
		}
}

int fuzz_python(const uint8_t *data, size_t size)
{
	const struct py_offsets *o;
	struct fuzz_memory m;
	struct py_code_info c;
	uint64_t type = 0;
	unsigned addr;

	if (size < 1)
		return 0;
	o = python_offsets_known(0x0308 + data[0] % 6);
	FUZZ_CHECK(o != NULL);
	m.data = data + 1;
	m.size = size - 1;
	check_tables(m.data, m.size);
	/* The object's type is what the caller says PyCode_Type is: let the reader go on. */
	if (m.size >= o->object_type + 8u)
		memcpy(&type, m.data + o->object_type, sizeof(type));
	if (python_code_read(o, type, fuzz_memory_read, &m, FUZZ_MEMORY_BASE, &c))
		return 0;
	FUZZ_CHECK(!fuzz_has_control(c.qualname, strlen(c.qualname)));
	FUZZ_CHECK(!fuzz_has_control(c.filename, strlen(c.filename)));
	for (addr = 0; addr < 4096; addr += 97)
		FUZZ_CHECK(python_code_line(o, &c, addr) > 0 || python_code_line(o, &c, addr) == c.firstlineno);
	python_code_release(&c);
	return 0;
}
