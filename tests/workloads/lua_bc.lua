-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- A real program: LuaJIT's own bytecode lister, jit.bc, dumping every Lua
-- file the machine has (LuaJIT's jit/*.lua and /usr/share/lua's) to
-- /dev/null, round after round. Its hot code is string formatting
-- (string.format, string.gsub: fast functions), table lookups and calls
-- through pcall, and bc.dump is reached under several names
-- (bc.dump, a local bcdump, a call with no name).
--
-- With LUA_BC_JITP="MODE FILE" in its environment, LuaJIT's own profiler
-- jit.p runs in MODE (e.g. "Gfi1") over the window, into FILE, to compare with.
--
-- usage: [LUA_BC_JITP="MODE FILE"] luajit [-joff] lua_bc.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local bc = require("jit.bc")

-- The Lua files to list, compiled once: the rounds list their functions.
local function lua_functions()
	local functions = {}
	local find = io.popen("find /usr/share/luajit-2.1* /usr/share/lua* -name '*.lua' 2>/dev/null | sort")
	for path in find:lines() do
		functions[#functions + 1] = loadfile(path)
	end
	find:close()
	return functions
end

local bcdump = bc.dump
local lists = {
	function(fn, out) bc.dump(fn, out, true) end,
	function(fn, out) bcdump(fn, out, true) end,
	function(fn, out) assert(pcall(bc.dump, fn, out, true)) end,
}

local function main()
	local functions = lua_functions()
	local seconds = window.open("luajit lua_bc.lua", #functions > 0)
	local out = assert(io.open("/dev/null", "w"))
	local jp_mode, jp_file = (os.getenv("LUA_BC_JITP") or ""):match("^(%S+) (.+)$")
	local jp = jp_mode and require("jit.p")
	if jp then
		jp.start(jp_mode, jp_file)
	end
	local clock, rounds, deadline = os.clock, 0, os.clock() + seconds
	while clock() < deadline do
		for i, fn in ipairs(functions) do
			lists[(i + rounds) % #lists + 1](fn, out)
		end
		rounds = rounds + 1
	end
	if jp then
		jp.stop()
	end
	io.stderr:write(string.format("lua_bc: %d files, %d rounds\n", #functions, rounds))
end

main()
