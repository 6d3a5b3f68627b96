// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/python_code.h"
#include "bpfprof/python_offsets.h"
#include "bpfprof/util.h"

/* A code object's members are read in one go: its first bytes, up to the last member wanted. */
#define CODE_HEAD 512

static uint64_t word(const uint8_t *buf, unsigned off)
{
	uint64_t v;

	memcpy(&v, buf + off, sizeof(v));
	return v;
}

/* Appends code point cp as UTF-8 (an invalid one as U+FFFD). */
static size_t put_utf8(char *out, uint32_t cp)
{
	if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
		cp = 0xfffd;
	if (cp < 0x80) {
		out[0] = cp;
		return 1;
	}
	if (cp < 0x800) {
		out[0] = 0xc0 | cp >> 6;
		out[1] = 0x80 | (cp & 0x3f);
		return 2;
	}
	if (cp < 0x10000) {
		out[0] = 0xe0 | cp >> 12;
		out[1] = 0x80 | (cp >> 6 & 0x3f);
		out[2] = 0x80 | (cp & 0x3f);
		return 3;
	}
	out[0] = 0xf0 | cp >> 18;
	out[1] = 0x80 | (cp >> 12 & 0x3f);
	out[2] = 0x80 | (cp >> 6 & 0x3f);
	out[3] = 0x80 | (cp & 0x3f);
	return 4;
}

/* A compact str object (every str a code object names is one) as UTF-8, cut at PY_NAME_MAX. */
static int read_str(const struct py_offsets *o, interp_read_fn *read, void *ctx, uint64_t addr,
		    char **out)
{
	uint8_t head[128], *data;
	uint32_t state, kind, i;
	uint64_t len;
	char *s, *p;
	int err;

	if (o->unicode_compact_data > sizeof(head) || o->unicode_state + 4u > sizeof(head) ||
	    o->unicode_length + 8u > sizeof(head))
		return -EINVAL;
	if ((err = read(ctx, addr, head, o->unicode_compact_data)))
		return err;
	memcpy(&state, head + o->unicode_state, sizeof(state));
	memcpy(&len, head + o->unicode_length, sizeof(len));
	kind = state >> PY_UNICODE_KIND_SHIFT & PY_UNICODE_KIND_MASK;
	if (!(state & PY_UNICODE_COMPACT) || (kind != 1 && kind != 2 && kind != 4) ||
	    ((state & PY_UNICODE_ASCII) && kind != 1) || len > (uint64_t)1 << 40)
		return -EINVAL;
	if (len > PY_NAME_MAX)
		len = PY_NAME_MAX;
	data = xmalloc(len * kind + 1);
	err = len ? read(ctx, addr + (state & PY_UNICODE_ASCII ? o->unicode_ascii_data
							     : o->unicode_compact_data),
			 data, len * kind)
		  : 0;
	if (err) {
		free(data);
		return err;
	}
	s = p = xmalloc(len * 4 + 1);
	for (i = 0; i < len; i++) {
		uint32_t cp = kind == 1 ? data[i]
			    : kind == 2 ? (uint32_t)data[2 * i] | (uint32_t)data[2 * i + 1] << 8
			    : (uint32_t)data[4 * i] | (uint32_t)data[4 * i + 1] << 8 |
			      (uint32_t)data[4 * i + 2] << 16 | (uint32_t)data[4 * i + 3] << 24;

		/* A control character would break the outputs' formats: a name never has one. */
		p += put_utf8(p, cp < 0x20 || cp == 0x7f ? 0xfffd : cp);
	}
	*p = '\0';
	free(data);
	*out = s;
	return 0;
}

/* A bytes object's contents, at most PY_LINETABLE_MAX of them. */
static int read_bytes(const struct py_offsets *o, interp_read_fn *read, void *ctx, uint64_t addr,
		      uint8_t **out, uint32_t *len)
{
	uint8_t head[64];
	uint64_t size;
	int err;

	if (o->bytes_size + 8u > sizeof(head) || o->bytes_data > sizeof(head))
		return -EINVAL;
	if ((err = read(ctx, addr, head, o->bytes_data)))
		return err;
	memcpy(&size, head + o->bytes_size, sizeof(size));
	if (size > PY_LINETABLE_MAX)
		return -EINVAL;
	*out = xmalloc(size ? size : 1);
	*len = size;
	if (size && (err = read(ctx, addr + o->bytes_data, *out, size))) {
		free(*out);
		*out = NULL;
		return err;
	}
	return 0;
}

int python_code_read(const struct py_offsets *o, uint64_t code_type, interp_read_fn *read,
		     void *ctx, uint64_t code, struct py_code_info *out)
{
	uint16_t name = o->code_qualname != PY_NO_MEMBER ? o->code_qualname : o->code_name;
	uint8_t head[CODE_HEAD];
	unsigned size = o->code_linetable;
	int32_t first;
	int err;

	memset(out, 0, sizeof(*out));
	if (name > size)
		size = name;
	if (o->code_filename > size)
		size = o->code_filename;
	size += 8;
	if (size > CODE_HEAD || o->code_firstlineno + 4u > size || o->object_type + 8u > size)
		return -EINVAL;
	if ((err = read(ctx, code, head, size)))
		return err;
	if (word(head, o->object_type) != code_type)
		return -EINVAL;
	memcpy(&first, head + o->code_firstlineno, sizeof(first));
	out->firstlineno = first > 0 ? first : 0;
	if ((err = read_str(o, read, ctx, word(head, name), &out->qualname)) ||
	    (err = read_str(o, read, ctx, word(head, o->code_filename), &out->filename)) ||
	    (err = read_bytes(o, read, ctx, word(head, o->code_linetable), &out->linetable,
			      &out->linetable_len))) {
		python_code_release(out);
		return err;
	}
	return 0;
}

void python_code_release(struct py_code_info *c)
{
	free(c->qualname);
	free(c->filename);
	free(c->linetable);
	memset(c, 0, sizeof(*c));
}

/*
 * 3.10 (PEP 626): (bytes, line delta) pairs; a delta of -128 is "no line".
 * The line is 64 bits: a hostile first line near INT_MAX cannot overflow it.
 */
static int line_310(const uint8_t *t, size_t len, int64_t line, uint64_t addr)
{
	uint64_t start, end = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		int8_t ldelta = (int8_t)t[i + 1];

		start = end;
		end += t[i];
		if (ldelta != -128)
			line += ldelta;
		if (addr >= start && addr < end)
			return ldelta == -128 || line < 0 || line > INT32_MAX ? -1 : (int)line;
	}
	return -1;
}

/*
 * 3.8, 3.9 (Objects/lnotab_notes.txt): (bytes, line delta) pairs, the
 * delta signed; an instruction's line is the sum of the deltas of the pairs
 * whose bytes end at or before it (as PyCode_Addr2Line).
 */
static int line_38(const uint8_t *t, size_t len, int64_t line, uint64_t addr)
{
	uint64_t start = 0;
	size_t i;

	for (i = 0; i + 1 < len; i += 2) {
		start += t[i];
		if (start > addr)
			break;
		line += (int8_t)t[i + 1];
	}
	return line < 0 || line > INT32_MAX ? -1 : (int)line;
}

/* 3.11's varints: 6 bits a byte, low first, 0x40 says more follow. */
static uint64_t varint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = 0;
	unsigned shift = 0;
	uint8_t b;

	do {
		if (*i >= len)
			return v;
		b = t[(*i)++];
		if (shift < 64)
			v |= (uint64_t)(b & 0x3f) << shift;
		shift += 6;
	} while (b & 0x40);
	return v;
}

/* A signed varint, its size held to a line number's: a table's sum of them cannot overflow. */
static int64_t svarint(const uint8_t *t, size_t len, size_t *i)
{
	uint64_t v = varint(t, len, i), m = v >> 1;

	if (m > INT32_MAX)
		m = INT32_MAX;
	return v & 1 ? -(int64_t)m : (int64_t)m;
}

/*
 * 3.11 on (Objects/locations.md): entries, each a byte with the top bit
 * set, its code in bits 3-6 and (code units - 1) in bits 0-2, then the
 * code's bytes: 0-9 the same line, 10-12 one to two lines on, 13 and 14 a
 * signed varint of lines, 15 no line.
 */
static int line_311(const uint8_t *t, size_t len, int64_t line, uint64_t addr)
{
	uint64_t start, end = 0;
	size_t i = 0;

	while (i < len) {
		uint8_t first = t[i++];
		unsigned code = first >> 3 & 15;
		int64_t delta = 0;

		if (!(first & 0x80))
			continue;	/* not an entry's start: a hostile table */
		start = end;
		end += ((first & 7) + 1) * 2;
		if (code == 13 || code == 14)
			delta = svarint(t, len, &i);
		else if (code >= 10 && code <= 12)
			delta = code - 10;
		line += delta;
		/* Past the entry's other bytes, to the next entry's start. */
		while (i < len && !(t[i] & 0x80))
			i++;
		if (addr >= start && addr < end)
			return code == 15 || line < 0 || line > INT32_MAX ? -1 : (int)line;
	}
	return -1;
}

int python_linetable_line(int frames, const uint8_t *table, size_t len, int firstlineno,
			  uint64_t addr)
{
	if (frames == PY_FRAMES_38)
		return line_38(table, len, firstlineno, addr);
	if (frames == PY_FRAMES_310)
		return line_310(table, len, firstlineno, addr);
	return line_311(table, len, firstlineno, addr);
}

uint32_t python_code_line(const struct py_offsets *o, const struct py_code_info *c, uint32_t instr)
{
	uint64_t addr;
	int line;

	if (o->frames == PY_FRAMES_310 || o->frames == PY_FRAMES_38) {
		/* f_lasti counts code units (3.8, 3.9: bytes); -1 (masked: 0x7fffffff): not started. */
		if (instr >= 0x7fffffff)
			return c->firstlineno;
		addr = o->frames == PY_FRAMES_38 ? instr : (uint64_t)instr * 2;
	} else {
		/* The instruction pointer less the code object: less the bytecode's start. */
		if (instr < o->code_code_adaptive)
			return c->firstlineno;
		addr = instr - o->code_code_adaptive;
	}
	line = python_linetable_line(o->frames, c->linetable, c->linetable_len, c->firstlineno, addr);
	return line > 0 ? (uint32_t)line : c->firstlineno;
}

