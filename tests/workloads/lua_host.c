// SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
/*
 * A C program embedding LuaJIT through its C API (libluajit-5.1.so.2, as
 * nginx and other hosts link it), for stacks that cross the VM both ways:
 * main -> lua_pcall -> the script's Lua functions -> c_spin (C, registered
 * with lua_register) -> lua_call -> Lua again. Each crossing is a VM entry
 * of its own on the C stack, and a profiler must put each one's Lua frames
 * in place of that entry's native frames, in order.
 *
 * c_spin(n, fn) runs a chain (work.h) of n units in C, measuring its own
 * thread CPU time, then calls fn(n) back; the script measures the Lua side.
 * c_via_a(fn, n) and c_via_b(fn, n) only call fn(n) back.
 * The script is run with the global arg as luajit sets it (arg[0] the
 * script, arg[1..] what follows), and can read c_spin_ns() at its end.
 *
 * usage: lua_host SCRIPT [ARGS...]
 */
#include <lauxlib.h>
#include <lua.h>
#include <lualib.h>

#include "work.h"

#define UNIT 50000	/* chain steps */

static uint64_t spin_ns;
volatile uint64_t sink;

/* c_spin(n, fn): n units of C work, then fn(n) called back from C; returns what fn returned. */
__attribute__((noinline)) static int c_spin(lua_State *L)
{
	lua_Integer n = luaL_checkinteger(L, 1);
	uint64_t x = sink, t0;

	luaL_checktype(L, 2, LUA_TFUNCTION);
	t0 = thread_cpu_ns();
	CHAIN(x, (uint64_t)n * UNIT);
	spin_ns += thread_cpu_ns() - t0;
	sink = x;
	lua_pushvalue(L, 2);
	lua_pushinteger(L, n);
	lua_call(L, 1, 1);
	return 1;
}

/*
 * c_via_a(fn, n) and c_via_b(fn, n): fn(n) called back from C, from two C
 * functions alike but for their names. Called from the same Lua call site,
 * each runs at the same depth with the same frame, so the VM each enters
 * has its C frame at the same address: the stacks below differ only in
 * the return address into c_via_a or c_via_b.
 */
static volatile int via;

static int call_back(lua_State *L)
{
	luaL_checktype(L, 1, LUA_TFUNCTION);
	lua_pushvalue(L, 1);
	lua_pushvalue(L, 2);
	lua_call(L, 1, 1);
	return 1;
}

__attribute__((noinline)) static int c_via_a(lua_State *L)
{
	via = 1;
	return call_back(L);
}

__attribute__((noinline)) static int c_via_b(lua_State *L)
{
	via = 2;
	return call_back(L);
}

/* c_spin_ns(): the thread CPU time c_spin spent in its own work so far. */
static int c_spin_ns(lua_State *L)
{
	lua_pushnumber(L, (lua_Number)spin_ns);
	return 1;
}

int main(int argc, char **argv)
{
	lua_State *L;
	int rc = 0;

	if (argc < 2) {
		fprintf(stderr, "usage: lua_host SCRIPT [ARGS...]\n");
		return 2;
	}
	L = luaL_newstate();
	if (!L) {
		fprintf(stderr, "lua_host: cannot create a Lua state\n");
		return 1;
	}
	luaL_openlibs(L);
	lua_register(L, "c_spin", c_spin);
	lua_register(L, "c_spin_ns", c_spin_ns);
	lua_register(L, "c_via_a", c_via_a);
	lua_register(L, "c_via_b", c_via_b);
	lua_createtable(L, argc - 2, 1);
	for (int i = 1; i < argc; i++) {
		lua_pushstring(L, argv[i]);
		lua_rawseti(L, -2, i - 1);
	}
	lua_setglobal(L, "arg");
	if (luaL_loadfile(L, argv[1]) || lua_pcall(L, 0, 0, 0)) {
		fprintf(stderr, "lua_host: %s\n", lua_tostring(L, -1));
		rc = 1;
	}
	lua_close(L);
	return rc;
}
