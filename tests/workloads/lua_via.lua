-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- Run by lua_host (lua_host.c): alpha is called back from the host's C
-- function c_via_a, beta from c_via_b, in turn, from the same call site:
-- the two stacks are alike below the VM but for the C function there
-- (the VM's C frame at the same address), and each function runs in a
-- compiled trace for a few milliseconds a turn. A profile must show alpha
-- on c_via_a and beta on c_via_b, every sample. (Called from C, they are
-- named by their first lines: "function (lua_via.lua:LINE)".)
--
-- With GO_FILE it writes READY_FILE and waits for GO_FILE before its
-- measured SECONDS, as lua_split.lua.
--
-- usage: lua_host lua_via.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local clock = os.clock

local function spin(n)
	local s = 1
	for _ = 1, n do
		s = s * 0.9999999 + 1e-7
	end
	return s
end

local function alpha(n)
	local s = spin(n)
	return s
end

local function beta(n)
	local s = spin(n)
	return s
end

local seconds = window.open("lua_host lua_via.lua", c_via_a ~= nil)
local stop, sink = clock() + seconds, 0
-- One call site, so that both C functions run at the same depth.
local via = { c_via_a, c_via_b }
local fns = { alpha, beta }
while clock() < stop do
	for i = 1, 2 do
		sink = sink + via[i](fns[i], 3000000)
	end
end
print(sink > 0 and "done" or "?")
