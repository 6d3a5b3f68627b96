-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- A short LuaJIT process for a storm of them: short_fn burns MS (default
-- 150) milliseconds of its CPU time in a chain of dependent multiply-adds,
-- then the process exits, most often before a profiler's next drain. It
-- prints "short_fn: NS" on stderr, the CPU time it measured in short_fn.
--
-- usage: luajit lua_short.lua [MS]
local clock = os.clock

local function short_fn(seconds)
	local t0 = clock()
	local s = 1
	while clock() - t0 < seconds do
		for _ = 1, 20000 do
			s = s * 0.9999999 + 1e-7
		end
	end
	return clock() - t0, s
end

local spent = short_fn((tonumber(arg[1]) or 150) / 1000)
io.stderr:write(string.format("short_fn: %.0f\n", spent * 1e9))
