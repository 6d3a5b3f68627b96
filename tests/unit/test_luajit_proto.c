// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * LuaJIT prototypes named from memory (luajit_proto.c), against a real
 * LuaJIT: the library is dlopen()ed (libluajit-5.1.so.2, or the one
 * BPFPROF_LUAJIT_LIB names, so another build can be tried; skipped when
 * absent), a chunk with globals, a module's fields and methods, locals,
 * upvalues, a metamethod and anonymous functions is loaded and run, and
 * its prototypes are read back from this process's own memory. Files and
 * lines are checked against lua_getinfo; call names against the lines of
 * the source and against the names LuaJIT's own debug.getinfo gave each
 * callee as it ran. Opcode numbers are read off small functions' bytecode,
 * not taken from the table under test. Then what must fail: unreadable and
 * wrong addresses, a copy of a prototype scribbled on.
 */
#include <dlfcn.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/uio.h>
#include <unistd.h>

#include "bpfprof/luajit_proto.h"
#include "bpfprof/util.h"
#include "unit.h"

#define LUA_GLOBALSINDEX (-10002)

typedef struct lua_State lua_State;

/* Lua 5.1's lua_Debug (LuaJIT's lua.h), with room to spare. */
struct lua_debug {
	int event;
	const char *name, *namewhat, *what, *source;
	int currentline, nups, linedefined, lastlinedefined;
	char short_src[60];
	int i_ci;
	char spare[64];
};

static struct {
	lua_State *(*newstate)(void);
	void (*openlibs)(lua_State *L);
	int (*loadbuffer)(lua_State *L, const char *buf, size_t len, const char *name);
	int (*pcall)(lua_State *L, int nargs, int nresults, int errfunc);
	void (*getfield)(lua_State *L, int idx, const char *k);
	const void *(*topointer)(lua_State *L, int idx);
	int (*getinfo)(lua_State *L, const char *what, struct lua_debug *ar);
	const char *(*tolstring)(lua_State *L, int idx, size_t *len);
	void (*settop)(lua_State *L, int idx);
	void (*pushvalue)(lua_State *L, int idx);
	void (*pushinteger)(lua_State *L, long n);
	void (*close)(lua_State *L);
} lua;

static bool load_lua(void **lib)
{
	const char *path = getenv("BPFPROF_LUAJIT_LIB");
	void *h = dlopen(path ? path : "libluajit-5.1.so.2", RTLD_NOW | RTLD_LOCAL);

	if (!h)
		return false;
#define SYM(field, name) (*(void **)&lua.field = dlsym(h, name))
	if (!SYM(newstate, "luaL_newstate") || !SYM(openlibs, "luaL_openlibs") ||
	    !SYM(loadbuffer, "luaL_loadbuffer") || !SYM(pcall, "lua_pcall") ||
	    !SYM(getfield, "lua_getfield") || !SYM(topointer, "lua_topointer") ||
	    !SYM(getinfo, "lua_getinfo") || !SYM(tolstring, "lua_tolstring") ||
	    !SYM(settop, "lua_settop") || !SYM(pushvalue, "lua_pushvalue") ||
	    !SYM(pushinteger, "lua_pushinteger") || !SYM(close, "lua_close")) {
		dlclose(h);
		return false;
	}
#undef SYM
	*lib = h;
	return true;
}

static int read_self(void *ctx, uint64_t addr, void *buf, size_t len)
{
	struct iovec local = { buf, len }, remote = { (void *)(uintptr_t)addr, len };
	ssize_t n = process_vm_readv(getpid(), &local, 1, &remote, 1, 0);

	(void)ctx;
	return n == (ssize_t)len ? 0 : n < 0 ? -errno : -EFAULT;
}

/* The chunk, a line an entry; the far functions' blank lines are added after. */
static const char *const chunk_lines[] = {
	"local record = {}",
	"local function mark()",
	"  local me, at = debug.getinfo(2, 'n'), debug.getinfo(3, 'l')",
	"  local how = me.namewhat ~= '' and me.namewhat or '-'",
	"  record[#record + 1] = at.currentline .. ' ' .. how .. ' ' .. tostring(me.name)",
	"end",
	"function alpha() mark() end",
	"M = {}",
	"function M.serve() mark() end",
	"function M:method() mark() end",
	"local function up() mark() end",
	"mt = setmetatable({}, { __index = function(t, k) mark() return k end })",
	"function driver(n)",
	"  local helper = function() mark() end",
	"  alpha()",
	"  M.serve()",
	"  M:method()",
	"  helper()",
	"  up()",
	"  local obj = M",
	"  obj:method()",
	"  obj.serve()",
	"  local x = mt.missing",
	"  ;(function() mark() end)()",
	"  for i = 1, n do",
	"    alpha(i)",
	"  end",
	"  local f = M.serve; f()",
	"  for v in iter, 2 do end",
	"  RECORD = table.concat(record, '\\n')",
	"end",
	/* Bytecode whose opcodes are known: the numbers are read off these. */
	"function op_call() x() end",
	"function op_method(o) o:m() end",
	"function op_uget() return up end",
	"function op_knil() local a, b, c end",
	"function op_iter() for _ in x do end end",
	"function iter(s, c) mark() if not c then return 1 end end",
	"BCNAMES = select(2, pcall(function() return require('jit.vmdef').bcnames end))",
	"function far()",
	"FAR",
	"  alpha()",
	"end",
	"function very_far()",
	"VERY_FAR",
	"  alpha()",
	"end",
};

/* The chunk's text, and the line of each of its lines in it (the far ones are many lines). */
struct chunk {
	char *text;
	unsigned line[ARRAY_SIZE(chunk_lines)];
};

static void build_chunk(struct chunk *c)
{
	struct strbuf sb;
	unsigned line = 1, i, blank;

	strbuf_init(&sb);
	for (i = 0; i < ARRAY_SIZE(chunk_lines); i++) {
		blank = !strcmp(chunk_lines[i], "FAR")	    ? 300
			: !strcmp(chunk_lines[i], "VERY_FAR") ? 70000
							      : 0;
		c->line[i] = line;
		if (blank) {
			for (; blank; blank--, line++)
				strbuf_addch(&sb, '\n');
			continue;
		}
		strbuf_addstr(&sb, chunk_lines[i]);
		strbuf_addch(&sb, '\n');
		line++;
	}
	c->text = strbuf_detach(&sb);
}

/* The line of the chunk's first line holding text (0: none). */
static unsigned line_of(const struct chunk *c, const char *text)
{
	size_t i;

	for (i = 0; i < ARRAY_SIZE(chunk_lines); i++)
		if (strstr(chunk_lines[i], text))
			return c->line[i];
	return 0;
}

/* The prototype of the Lua function on top of the stack (popped), or 0. */
static uint64_t top_proto(lua_State *L)
{
	const uint8_t *fn = lua.topointer(L, -1);
	uint64_t pc;

	lua.settop(L, -2);
	if (!fn || fn[LJ_FN_FFID] != 0)
		return 0;
	memcpy(&pc, fn + LJ_FN_PC, 8);
	return pc - LJ_PROTO_SIZE;
}

static uint64_t global_proto(lua_State *L, const char *name)
{
	lua.getfield(L, LUA_GLOBALSINDEX, name);
	return top_proto(L);
}

static uint32_t ins_at(uint64_t proto, uint32_t pos)
{
	uint32_t ins;

	memcpy(&ins, (const void *)(uintptr_t)(proto + LJ_PROTO_SIZE + 4ull * pos), 4);
	return ins;
}

static uint32_t sizebc_of(uint64_t proto)
{
	uint32_t n;

	memcpy(&n, (const void *)(uintptr_t)(proto + LJ_PROTO_SIZEBC), 4);
	return n;
}

/* Checks the prototype of the function on top of the stack (kept) against lua_getinfo's ">S". */
static void check_info(lua_State *L, const char *what, int width)
{
	struct lua_debug ar = { 0 };
	struct lua_proto_info p;
	uint64_t proto;
	int err;

	lua.pushvalue(L, -1);
	proto = top_proto(L);
	lua.pushvalue(L, -1);
	if (!CHECK(proto && lua.getinfo(L, ">S", &ar),
		   "luajit: %s is a Lua function lua_getinfo knows", what))
		return;
	err = luajit_proto_read(read_self, NULL, proto, &p);
	if (!CHECK(err == 0, "luajit: %s's prototype read (%d)", what, err))
		return;
	CHECK(!strcmp(p.file, ar.short_src) && (int)p.firstline == ar.linedefined &&
	      (int)(p.firstline + p.numline) == ar.lastlinedefined &&
	      !strcmp(p.chunkname, ar.source),
	      "luajit: %s: %s lines %u-%u (lua_getinfo: %s %d-%d)", what, p.file, p.firstline,
	      p.firstline + p.numline, ar.short_src, ar.linedefined, ar.lastlinedefined);
	if (width)
		CHECK(p.line_width == width && p.lineinfo,
		      "luajit: %s has %d lines: line table of %d-byte entries (%u)", what,
		      p.numline, width, p.line_width);
	CHECK(luajit_proto_line(&p, 0) == p.firstline &&
	      luajit_proto_line(&p, p.sizebc) == p.firstline &&
	      luajit_proto_line(&p, LUA_NO_PC) == p.firstline,
	      "luajit: %s: header, past the end and no position: the first line", what);
	luajit_proto_release(&p);
}

/* The opcode of the instruction at pos in global function name. */
static int op_of(lua_State *L, const char *name, uint32_t pos)
{
	uint64_t proto = global_proto(L, name);

	return proto && pos < sizebc_of(proto) ? (int)(ins_at(proto, pos) & 0xff) : -1;
}

/* The opcode numbers the test uses, read off the library's own bytecode. */
struct ops {
	int call, tgets, iterc;
};

static bool check_opcodes(lua_State *L, struct ops *o)
{
	static const struct {
		const char *fn, *op;
		uint32_t pos;
	} known[] = {
		{ "op_call", "FUNCF", 0 },  { "op_call", "GGET", 1 },   { "op_call", "CALL", 2 },
		{ "op_call", "RET0", 3 },   { "op_method", "MOV", 1 }, { "op_method", "TGETS", 2 },
		{ "op_uget", "UGET", 1 },   { "op_uget", "RET1", 2 },  { "op_knil", "KNIL", 1 },
		{ "op_iter", "ITERC", 4 },
	};
	const char *names;
	size_t i, len;
	bool ok = true;
	int got;

	for (i = 0; i < ARRAY_SIZE(known); i++) {
		got = op_of(L, known[i].fn, known[i].pos);
		if (!CHECK(got >= 0 && got == luajit_bc_op(known[i].op),
			   "luajit: %s is opcode %d in this build, as luajit_proto.c has it (%d)",
			   known[i].op, got, luajit_bc_op(known[i].op)))
			ok = false;
		if (!strcmp(known[i].op, "CALL"))
			o->call = got;
		if (!strcmp(known[i].op, "TGETS"))
			o->tgets = got;
		if (!strcmp(known[i].op, "ITERC"))
			o->iterc = got;
	}
	/* jit.vmdef, where installed, names every opcode in order: six characters each. */
	lua.getfield(L, LUA_GLOBALSINDEX, "BCNAMES");
	names = lua.tolstring(L, -1, &len);
	if (names && len > 6 * 90 && len % 6 == 0) {
		bool all = true;

		for (i = 0; i < len / 6; i++) {
			char name[7];
			size_t n = 6;

			memcpy(name, names + 6 * i, 6);
			while (n && name[n - 1] == ' ')
				n--;
			name[n] = '\0';
			if (luajit_bc_op(name) != (int)i) {
				printf("#   jit.vmdef: %s is %zu, luajit_proto.c: %d\n", name, i,
				       luajit_bc_op(name));
				all = false;
			}
		}
		CHECK(all && luajit_bc_op("FUNCCW") == (int)(len / 6 - 1),
		      "luajit: jit.vmdef's %zu opcodes have luajit_proto.c's numbers", len / 6);
	} else {
		unit_skip("jit.vmdef not found",
			  "luajit: jit.vmdef's opcodes have luajit_proto.c's numbers");
	}
	lua.settop(L, -2);
	return ok;
}

/* One callee LuaJIT named as it ran: the line of the call, how ("-"), the name ("nil": none). */
struct seen_call {
	unsigned line;
	char namewhat[32], name[128];
};

static size_t parse_record(const char *text, struct seen_call *seen, size_t max)
{
	size_t n = 0;

	while (text && *text && n < max) {
		struct seen_call *s = &seen[n];

		if (sscanf(text, "%u %31s %127[^\n]", &s->line, s->namewhat, s->name) == 3)
			n++;
		text = strchr(text, '\n');
		if (text)
			text++;
	}
	return n;
}

/* name is LuaJIT's, qualified: "M.serve" for "serve", ':' for a method call. */
static bool same_name(const char *ours, const struct seen_call *s)
{
	size_t lo = strlen(ours), ls = strlen(s->name);
	char sep;

	if (lo < ls || strcmp(ours + lo - ls, s->name))
		return false;
	sep = lo > ls ? ours[lo - ls - 1] : 0;
	if (!strcmp(s->namewhat, "method"))
		return sep == ':';
	if (!strcmp(s->namewhat, "field"))
		return sep == '.' || sep == 0;
	return lo == ls;
}

/* Every call in driver() named, and its line, against the source and against LuaJIT. */
static void check_calls(lua_State *L, const struct chunk *c, const struct ops *o)
{
	static const struct {
		const char *text, *name;	/* NULL: none */
		int op;			/* 1: the TGETS there (metamethod), 2: ITERC */
	} want[] = {
		{ "  alpha()", "alpha" },	  { "  M.serve()", "M.serve" },
		{ "  M:method()", "M:method" },	  { "  helper()", "helper" },
		{ "  up()", "up" },		  { "  obj:method()", "obj:method" },
		{ "  obj.serve()", "obj.serve" }, { "(function() mark() end)()", NULL },
		{ "    alpha(i)", "alpha" },	  { "f()", "f" },
		{ "table.concat", "table.concat" }, { "mt.missing", "__index", 1 },
		/* LuaJIT names a for loop's generator by its hidden local. */
		{ "iter, 2", "(for generator)", 2 },
	};
	struct seen_call seen[64];
	unsigned found[ARRAY_SIZE(want)] = { 0 };
	struct lua_proto_info p;
	uint64_t proto = global_proto(L, "driver");
	size_t nr_seen, i, j;
	uint32_t pos;
	unsigned bad = 0, lj_checked = 0;

	lua.getfield(L, LUA_GLOBALSINDEX, "driver");
	lua.pushinteger(L, 3);
	if (!CHECK(proto && lua.pcall(L, 1, 0, 0) == 0, "luajit: driver() ran"))
		return;
	lua.getfield(L, LUA_GLOBALSINDEX, "RECORD");
	nr_seen = parse_record(lua.tolstring(L, -1, NULL), seen, ARRAY_SIZE(seen));
	lua.settop(L, -2);
	CHECK(nr_seen == 15, "luajit: LuaJIT named %zu callees as they ran", nr_seen);
	if (!CHECK(luajit_proto_read(read_self, NULL, proto, &p) == 0,
		   "luajit: driver's prototype"))
		return;
	for (pos = 1; pos < p.sizebc; pos++) {
		uint32_t op = ins_at(proto, pos) & 0xff, line = luajit_proto_line(&p, pos);
		char *name = NULL;
		int err;

		if (line < p.firstline || line > p.firstline + p.numline)
			bad++;
		int kinds[] = { o->call, o->tgets, o->iterc };

		if ((int)op != o->call && (int)op != o->tgets && (int)op != o->iterc)
			continue;
		for (i = 0; i < ARRAY_SIZE(want); i++)
			if (line_of(c, want[i].text) == line && (int)op == kinds[want[i].op])
				break;
		if (i == ARRAY_SIZE(want)) {
			/* A TGETS that is no metamethod's call site reads a field to call. */
			if ((int)op != o->tgets)
				CHECK(false, "luajit: a call at %u, line %u, is one of driver's",
				      pos, line);
			continue;
		}
		found[i]++;
		err = luajit_call_name(read_self, NULL, proto, pos, &name);
		if (want[i].name)
			CHECK(err == 0 && !strcmp(name, want[i].name),
			      "luajit: the call at %u (line %u) names %s (%s, %d)", pos, line,
			      want[i].name, name ? name : "none", err);
		else
			CHECK(err == -ENOENT && !name,
			      "luajit: the call at %u (line %u) names nothing: anonymous (%d)", pos,
			      line, err);
		/* LuaJIT's own name for what was called from this line. */
		for (j = 0; j < nr_seen; j++) {
			if (seen[j].line != line)
				continue;
			lj_checked++;
			if (!strcmp(seen[j].name, "nil"))
				CHECK(err == -ENOENT,
				      "luajit: line %u: LuaJIT names nothing, nor do we", line);
			else
				CHECK(err == 0 && same_name(name, &seen[j]),
				      "luajit: line %u: LuaJIT's %s %s is our %s", line,
				      seen[j].namewhat, seen[j].name, name ? name : "none");
		}
		free(name);
	}
	CHECK(!bad, "luajit: every position of driver in its lines (%u not)", bad);
	for (i = 0; i < ARRAY_SIZE(want); i++)
		CHECK(found[i] == 1, "luajit: the call at line %u (%s) found in the bytecode (%u)",
		      line_of(c, want[i].text), want[i].text, found[i]);
	CHECK(lj_checked == nr_seen, "luajit: each of LuaJIT's %zu names compared (%u)", nr_seen,
	      lj_checked);
	luajit_proto_release(&p);
}

/* The one call of far() or very_far(): its line where the source has it, its name. */
static void check_far(lua_State *L, const struct chunk *c, const char *fn, const char *marker,
		      const struct ops *o)
{
	uint64_t proto = global_proto(L, fn);
	struct lua_proto_info p;
	unsigned line = 0;
	char *name = NULL;
	uint32_t pos;
	int err = -1;
	size_t i;

	for (i = 0; i < ARRAY_SIZE(chunk_lines); i++)
		if (!strcmp(chunk_lines[i], marker))
			line = c->line[i + 1];
	if (!CHECK(proto && luajit_proto_read(read_self, NULL, proto, &p) == 0, "luajit: %s read",
		   fn))
		return;
	for (pos = 1; pos < p.sizebc; pos++)
		if ((int)(ins_at(proto, pos) & 0xff) == o->call)
			break;
	if (pos < p.sizebc)
		err = luajit_call_name(read_self, NULL, proto, pos, &name);
	CHECK(pos < p.sizebc && luajit_proto_line(&p, pos) == line && err == 0 &&
	      !strcmp(name, "alpha"),
	      "luajit: %s (%u lines, %u-byte entries) calls alpha at line %u (%u, %s)", fn,
	      p.numline, p.line_width, line, luajit_proto_line(&p, pos), name ? name : "none");
	free(name);
	luajit_proto_release(&p);
}

static void check_chunk_names(lua_State *L)
{
	/* A NULL name: the source is its own name, as luaL_loadstring's. */
	static const struct {
		const char *source, *name, *label;
	} chunks[] = {
		{ "return 1", "=stdin", "=stdin" },
		{ "return 2", NULL, "a source string" },
		{ "return 3 -- a source string long enough for LuaJIT to cut it short", NULL,
		  "a long source string" },
		{ "return 4\n-- two lines", NULL, "a source string of two lines" },
		{ "return 5", "@/srv/app/x.lua", "@/srv/app/x.lua" },
	};
	static const struct {
		const char *chunkname, *file;
	} literal[] = {
		{ "@/srv/app/x.lua", "/srv/app/x.lua" },
		{ "=[C]", "[C]" },
		{ "@/a\x01\xff" "b.lua", "/a\xef\xbf\xbd\xef\xbf\xbd" "b.lua" },
		{ "=\xc3\xa9t\xc3", "\xc3\xa9t\xef\xbf\xbd" },
	};
	size_t i;

	for (i = 0; i < ARRAY_SIZE(chunks); i++) {
		const char *name = chunks[i].name ? chunks[i].name : chunks[i].source;

		if (!CHECK(lua.loadbuffer(L, chunks[i].source, strlen(chunks[i].source), name) == 0,
			   "luajit: chunk %s loads", chunks[i].label))
			continue;
		check_info(L, chunks[i].label, 0);
		lua.settop(L, -2);
	}
	for (i = 0; i < ARRAY_SIZE(literal); i++) {
		char *file = luajit_chunk_file(literal[i].chunkname, false);

		expect_text(file, literal[i].file, "luajit: a chunk name as a frame shows it");
		free(file);
	}
}

/* A copy of the prototype at proto with its own pointers moved to the copy: a prototype too. */
static uint8_t *copy_proto(uint64_t proto, uint32_t *size)
{
	static const unsigned moved[] = { 0x20, LJ_PROTO_LINEINFO, 0x58, 0x60 };
	uint64_t delta, v;
	uint8_t *c;
	size_t i;

	memcpy(size, (const void *)(uintptr_t)(proto + 0x38), 4);
	c = aligned_alloc(16, (*size + 15) & ~15u);
	memcpy(c, (const void *)(uintptr_t)proto, *size);
	delta = (uint64_t)(uintptr_t)c - proto;
	for (i = 0; i < ARRAY_SIZE(moved); i++) {
		memcpy(&v, c + moved[i], 8);
		if (v)
			v += delta;
		memcpy(c + moved[i], &v, 8);
	}
	return c;
}

static bool any_errno(int err)
{
	return err == 0 || err == -ENOENT || err == -EINVAL || err == -EFAULT;
}

static void check_bad(lua_State *L)
{
	uint64_t proto = global_proto(L, "driver"), fn, copy_addr;
	struct lua_proto_info p;
	uint32_t size, sizebc, pos;
	unsigned i, odd = 0, named = 0;
	uint8_t *copy, *page;
	char *name;
	int err;

	lua.getfield(L, LUA_GLOBALSINDEX, "driver");
	fn = (uint64_t)(uintptr_t)lua.topointer(L, -1);
	lua.settop(L, -2);
	page = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	munmap(page, 4096);
	CHECK(luajit_proto_read(read_self, NULL, 0, &p) == -EINVAL &&
	      luajit_proto_read(read_self, NULL, proto + 4, &p) == -EINVAL &&
	      luajit_proto_read(read_self, NULL, (uint64_t)(uintptr_t)page, &p) == -EFAULT &&
	      luajit_proto_read(read_self, NULL, fn, &p) == -EINVAL && !p.file,
	      "luajit: no prototype at NULL, a misaligned or unmapped address, a function");
	CHECK(luajit_call_name(read_self, NULL, proto, LUA_NO_PC, &name) == -ENOENT &&
	      luajit_call_name(read_self, NULL, proto, sizebc_of(proto), &name) == -EINVAL &&
	      luajit_call_name(read_self, NULL, proto, 0, &name) == -EINVAL &&
	      luajit_call_name(read_self, NULL, (uint64_t)(uintptr_t)page, 1, &name) == -EFAULT &&
	      !name,
	      "luajit: no call name for no position, one past the end, the header, no memory");

	copy = copy_proto(proto, &size);
	copy_addr = (uint64_t)(uintptr_t)copy;
	sizebc = sizebc_of(proto);
	err = luajit_proto_read(read_self, NULL, copy_addr, &p);
	CHECK(err == 0 && p.sizebc == sizebc,
	      "luajit: a moved copy of driver's prototype reads (%d)", err);
	luajit_proto_release(&p);
	/* And names its calls as the original does: what the scribbling below starts from. */
	for (pos = 1; pos < sizebc; pos++) {
		char *orig = NULL;
		int e1 = luajit_call_name(read_self, NULL, proto, pos, &orig);
		int e2 = luajit_call_name(read_self, NULL, copy_addr, pos, &name);

		if (e1 != e2 || (orig && strcmp(orig, name)))
			odd++;
		named += !e1;
		free(orig);
		free(name);
	}
	CHECK(!odd && named >= 11, "luajit: the copy names driver's %u named sites as the original",
	      named);
	named = 0;

	/* One field at a time scribbled on: each is caught. */
	{
		static const struct {
			unsigned off, size;
			uint64_t v;
			const char *what;
		} scribble[] = {
			{ 0x09, 1, 4, "type byte" },
			{ 0x0c, 4, 0x7fffffff, "sizebc" },
			{ 0x38, 4, 0x80, "sizept" },
			{ 0x38, 4, 0x7fffffff, "sizept huge" },
			{ 0x68, 1, 18, "first instruction" },
			{ 0x48, 4, 0xfffffff0, "firstline" },
			{ 0x4c, 4, 0x80000000, "numline" },
			{ 0x30, 4, 0x10000000, "sizekgc" },
			{ 0x50, 8, 8, "lineinfo" },
			{ 0x60, 8, 0x1000, "varinfo" },
		};
		uint8_t save[8];

		for (i = 0; i < ARRAY_SIZE(scribble); i++) {
			memcpy(save, copy + scribble[i].off, scribble[i].size);
			memcpy(copy + scribble[i].off, &scribble[i].v, scribble[i].size);
			err = luajit_proto_read(read_self, NULL, copy_addr, &p);
			CHECK(err == -EINVAL && !p.file,
			      "luajit: a prototype with its %s scribbled on: %d", scribble[i].what,
			      err);
			memcpy(copy + scribble[i].off, save, scribble[i].size);
		}
		/* The chunk name pointing at the prototype itself: not a string. */
		memcpy(save, copy + LJ_PROTO_CHUNKNAME, 8);
		memcpy(copy + LJ_PROTO_CHUNKNAME, &copy_addr, 8);
		CHECK(luajit_proto_read(read_self, NULL, copy_addr, &p) == -EINVAL,
		      "luajit: a chunk name that is no string");
		memcpy(copy + LJ_PROTO_CHUNKNAME, save, 8);
	}

	/* Random bytes over the bytecode and debug info: errors or names, never a crash. */
	srandom(24);
	for (i = 0; i < 300; i++) {
		uint8_t *fresh = copy_proto(proto, &size);
		unsigned k, spots = 1 + random() % 64;

		for (k = 0; k < spots; k++)
			fresh[LJ_PROTO_SIZE + random() % (size - LJ_PROTO_SIZE)] = random();
		err = luajit_proto_read(read_self, NULL, (uint64_t)(uintptr_t)fresh, &p);
		if (!any_errno(err))
			odd++;
		if (!err) {
			for (pos = 0; pos <= p.sizebc; pos++)
				if (luajit_proto_line(&p, pos) > p.firstline + p.numline)
					odd++;
			luajit_proto_release(&p);
		}
		for (pos = 1; pos < sizebc; pos++) {
			err = luajit_call_name(read_self, NULL, (uintptr_t)fresh, pos, &name);
			if (!any_errno(err) || (!err) != !!name ||
			    (name && strlen(name) > 16 * LJ_NAME_MAX))
				odd++;
			named += !err;
			free(name);
		}
		free(fresh);
	}
	CHECK(!odd && named > 0, "luajit: scribbled copies: errors or names (%u names), %u odd",
	      named, odd);
	free(copy);
}

void test_luajit_proto(void)
{
	struct chunk c;
	struct ops o = { -1, -1, -1 };
	void *lib;
	lua_State *L;

	if (!load_lua(&lib)) {
		unit_skip("libluajit-5.1.so.2 not installed",
			  "luajit: prototypes read from memory");
		return;
	}
	build_chunk(&c);
	L = lua.newstate();
	lua.openlibs(L);
	if (!CHECK(lua.loadbuffer(L, c.text, strlen(c.text), "@/tmp/x/test.lua") == 0,
		   "luajit: the test chunk loads"))
		goto out;
	check_info(L, "the main chunk", 4);
	if (!CHECK(lua.pcall(L, 0, 0, 0) == 0, "luajit: the test chunk runs"))
		goto out;
	if (!check_opcodes(L, &o))
		goto out;
	lua.getfield(L, LUA_GLOBALSINDEX, "alpha");
	check_info(L, "alpha", 1);
	lua.settop(L, -2);
	lua.getfield(L, LUA_GLOBALSINDEX, "driver");
	check_info(L, "driver", 1);
	lua.settop(L, -2);
	lua.getfield(L, LUA_GLOBALSINDEX, "far");
	check_info(L, "far", 2);
	lua.settop(L, -2);
	check_calls(L, &c, &o);
	check_far(L, &c, "far", "FAR", &o);
	check_far(L, &c, "very_far", "VERY_FAR", &o);
	check_chunk_names(L);
	check_bad(L);
out:
	lua.close(L);
	free(c.text);
	dlclose(lib);
}
