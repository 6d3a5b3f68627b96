-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- A LuaJIT program that scribbles on its own Lua stack while it runs:
-- victim() finds the link of its frame (the slot above its function's on
-- the lua_State's stack, which LuaJIT reads only when victim returns; a
-- coroutine's, as the main thread's lua_State is not to be had from Lua),
-- points it at MODE's garbage, spins for 50 ms, and puts it back before it
-- returns. A profiler walking the frames meanwhile meets an unreadable
-- address (fault: a non-canonical one) or memory that is no frame (junk: a
-- buffer of 0x5a bytes). LuaJIT 2.1, GC64, x86-64 only.
--
-- usage: luajit lua_scribble.lua SECONDS fault|junk
local ffi = require("ffi")
local clock = os.clock
local mode = arg[2] or "fault"

local function address(object)
	return tonumber(tostring(object):match("0x(%x+)"), 16)
end

local JUNK = ffi.new("uint8_t[4096]", 0x5a)
local GARBAGE = mode == "junk"
	and ffi.cast("uint64_t", ffi.cast("uintptr_t", JUNK) + 2048)
	or 0x5a5a5a5a5a5a5a58ULL
-- A function's slot under GC64: its address tagged LJ_TFUNC (~8) in the top 17 bits.
local FUNC_TAG = 0xfffb800000000000ULL

local victim

-- The slot of victim's frame link: above the slot holding victim itself.
local function link_slot()
	local L = ffi.cast("uint8_t *", address(coroutine.running()))
	local stack = ffi.cast("uint64_t *", ffi.cast("uint64_t *", L + 0x38)[0])
	local size = ffi.cast("uint32_t *", L + 0x58)[0]
	local want = FUNC_TAG + address(victim)
	for i = size - 2, 0, -1 do
		if stack[i] == want then
			return stack + i + 1
		end
	end
end

victim = function(seconds)
	local link = link_slot()
	local saved = link[0]
	link[0] = GARBAGE
	local t0, s = clock(), 1
	while clock() - t0 < seconds do
		for _ = 1, 10000 do
			s = s * 0.9999999 + 1e-7
		end
	end
	link[0] = saved
	return s
end

local seconds = tonumber(arg[1]) or 3
local t0, rounds = clock(), 0
coroutine.wrap(function()
	while clock() - t0 < seconds do
		victim(0.05)
		rounds = rounds + 1
	end
end)()
io.stderr:write(string.format("rounds: %d\n", rounds))
