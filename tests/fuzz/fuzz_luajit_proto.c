// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A LuaJIT process's memory, as hostile as can be: the input is the memory
 * at FUZZ_MEMORY_BASE, a GCproto at its start (its pointers point anywhere), read
 * as a frame's prototype (luajit_proto_read) and as the caller of every
 * call site in it (luajit_call_name); the input as a C string is also a
 * chunk name (luajit_chunk_file). Names and files must come out as valid
 * UTF-8 with no control character and within their bounds; lines within
 * the function's; an error must leave nothing behind.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bpfprof/luajit_proto.h"
#include "fuzz.h"

/* Call sites named per input, at most: each reads the bytecode up to it again. */
#define MAX_SITES 256

static void check_chunk_file(const char *chunkname)
{
	int builtin;

	for (builtin = 0; builtin < 2; builtin++) {
		char *file = luajit_chunk_file(chunkname, builtin);
		size_t len = strlen(file);

		FUZZ_CHECK(fuzz_clean_text(file));
		/* "=name" and source text are cut (a byte: 3 of U+FFFD at most); "@path" not. */
		if (chunkname[0] == '=')
			FUZZ_CHECK(len <= 3 * 59);
		else if (chunkname[0] != '@')
			FUZZ_CHECK(len <= 3 * 48 + strlen("[string \"...\"]") &&
				   !strncmp(file, builtin ? "[builtin:" : "[string \"", 9));
		free(file);
	}
}

static void check_proto(struct fuzz_memory *m)
{
	struct lua_proto_info p;
	uint32_t pos, line, sites;
	int err = luajit_proto_read(fuzz_memory_read, m, FUZZ_MEMORY_BASE, &p);

	if (err) {
		FUZZ_CHECK(err < 0);
		FUZZ_CHECK(fuzz_all_zero(&p, sizeof(p)));
		return;
	}
	FUZZ_CHECK(p.chunkname && strlen(p.chunkname) <= LJ_CHUNKNAME_MAX);
	FUZZ_CHECK(p.file && fuzz_clean_text(p.file));
	FUZZ_CHECK(p.sizebc >= 2 && p.sizebc <= LUA_FRAME_POS_MASK);
	FUZZ_CHECK(p.line_width == 1 || p.line_width == 2 || p.line_width == 4);
	FUZZ_CHECK(!p.builtin || (!p.firstline && !p.lineinfo));
	FUZZ_CHECK(p.firstline <= INT32_MAX && p.numline <= INT32_MAX);
	FUZZ_CHECK(luajit_proto_line(&p, 0) == p.firstline);
	FUZZ_CHECK(luajit_proto_line(&p, LUA_NO_PC) == p.firstline);
	FUZZ_CHECK(luajit_proto_line(&p, p.sizebc) == p.firstline);
	/* Every position's line: in the function's span (the last one reads the table's end). */
	for (pos = 1; pos < p.sizebc; pos += pos < 4096 ? 1 : p.sizebc / 64) {
		line = luajit_proto_line(&p, pos);
		FUZZ_CHECK(line >= p.firstline && line - p.firstline <= p.numline);
	}
	line = luajit_proto_line(&p, p.sizebc - 1);
	FUZZ_CHECK(line >= p.firstline && line - p.firstline <= p.numline);
	/* The call sites: a name is clean text, at most every part's bytes, else an error. */
	sites = p.sizebc < MAX_SITES ? p.sizebc : MAX_SITES;
	for (pos = 0; pos <= sites; pos++) {
		char *name = (char *)1;

		err = luajit_call_name(fuzz_memory_read, m, FUZZ_MEMORY_BASE, pos, &name);
		if (err) {
			FUZZ_CHECK(err < 0 && !name);
			FUZZ_CHECK(err != -ENOENT || (pos && pos < p.sizebc));
			continue;
		}
		FUZZ_CHECK(pos && pos < p.sizebc);
		FUZZ_CHECK(name && *name && fuzz_clean_text(name));
		/* Table names 4 deep, then the field: each part one U+FFFD (3 bytes) a byte. */
		FUZZ_CHECK(name && strlen(name) <= 5 * (3 * LJ_NAME_MAX + 1));
		free(name);
	}
	FUZZ_CHECK(luajit_call_name(fuzz_memory_read, m, FUZZ_MEMORY_BASE, LUA_NO_PC,
				    &(char *){ NULL }) == -ENOENT);
	luajit_proto_release(&p);
	FUZZ_CHECK(fuzz_all_zero(&p, sizeof(p)));
}

int fuzz_luajit_proto(const uint8_t *data, size_t size)
{
	struct fuzz_memory m = { data, size };
	char *s = fuzz_cstring(data, size);

	check_chunk_file(s);
	free(s);
	check_proto(&m);
	return 0;
}
