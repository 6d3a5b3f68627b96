-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- A LuaJIT program whose VM is busy with more than Lua code: churn()
-- allocates tables and strings (the garbage collector runs often), and
-- flush() throws every compiled trace away now and then (traces are
-- recorded, optimised and assembled again), so a profiler meets every VM
-- state, and traces gone under its walk.
--
-- usage: luajit lua_churn.lua SECONDS
local clock = os.clock

local function churn()
	local t = {}
	for i = 1, 2000 do
		t[i] = { i, tostring(i) }
	end
	return #t
end

local function flush(round)
	if round % 50 == 0 then
		jit.flush()
	end
end

local seconds = tonumber(arg[1]) or 3
local t0, round = clock(), 0
while clock() - t0 < seconds do
	churn()
	round = round + 1
	flush(round)
end
io.stderr:write(string.format("rounds: %d\n", round))
