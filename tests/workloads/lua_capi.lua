-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- Run by lua_host (lua_host.c): C -> Lua -> C -> Lua. outer calls the
-- host's C function c_spin, which runs n units of C work and calls back
-- into Lua (lua_call) the function given it, which calls inner, n units of
-- a Lua chain of dependent multiply-adds (n random in 1..8). The stack in
-- inner: main -> lua_pcall -> main chunk -> main -> outer -> c_spin ->
-- the callback -> inner (lua_call jumps into the VM: no frame of its own).
-- It measures inner's CPU time with os.clock, the host c_spin's own; at
-- its end it prints "C_SPIN_NS INNER_NS" on stdout and its figures on stderr.
--
-- With GO_FILE it writes READY_FILE and waits for GO_FILE before its
-- measured SECONDS, as lua_split.lua.
--
-- usage: lua_host lua_capi.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local UNIT = 50000 -- chain steps
local clock = os.clock
local spent_inner = 0

local function inner(n)
	local t0 = clock()
	local s = 1
	for _ = 1, n * UNIT do
		s = s * 0.9999999 + 1e-7
	end
	spent_inner = spent_inner + (clock() - t0)
	return s
end

-- Called from C, so unnamed; it calls inner by name.
local function callback(n)
	local s = inner(n)
	return s
end

local function outer(stop)
	local sink, calls = 0, 0
	while clock() < stop do
		sink = sink + c_spin(math.random(1, 8), callback)
		calls = calls + 1
	end
	return sink, calls
end

local function main()
	local seconds = window.open("lua_host lua_capi.lua", c_spin ~= nil)
	local start, spin0 = clock(), c_spin_ns()
	local sink, calls = outer(start + seconds)
	local total = clock() - start
	local spin = (c_spin_ns() - spin0) / 1e9
	print(string.format("%.0f %.0f", spin * 1e9, spent_inner * 1e9))
	io.stderr:write(string.format("lua_capi: %d calls of c_spin in %.3f s of CPU: c_spin's own %.3f s, " ..
		"inner %.3f s, c_spin/inner %.4f, in them %.1f %% (sink %g)\n", calls, total, spin,
		spent_inner, spin / spent_inner, 100 * (spin + spent_inner) / total, sink))
end

main()
