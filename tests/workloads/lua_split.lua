-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- A LuaJIT workload with a known split: alpha and beta call the same
-- work(n) (a chain of dependent multiply-adds, whose time is its steps on
-- any x86-64 CPU, interpreted or compiled) twice and once a round, n random
-- in 1..8 units so no period aliases with sampling. It measures the CPU
-- time it spends inside each with os.clock and at its end prints
-- "ALPHA_NS BETA_NS" on stdout and its figures on stderr: the split a
-- profiler should find, whatever the CPU, the JIT's mode and the machine's load.
--
-- With GO_FILE it writes READY_FILE, waits until GO_FILE exists, and only
-- then runs and measures for SECONDS: a profiler started before GO_FILE is
-- made sees the very window measured.
--
-- usage: luajit [-joff] lua_split.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local UNIT = 50000 -- chain steps: some 0.2 ms compiled, 1 ms interpreted

local function work(n)
	local s = 1
	for _ = 1, n * UNIT do
		s = s * 0.9999999 + 1e-7
	end
	return s
end

local function alpha(n)
	local s = work(n)
	s = s + work(n)
	return s
end

local function beta(n)
	local s = work(n)
	return s
end

local function main()
	local seconds = window.open("luajit lua_split.lua")
	local clock = os.clock
	local spent_a, spent_b, rounds, sink = 0, 0, 0, 0
	local start = clock()
	local stop = start + seconds
	while clock() < stop do
		local n = math.random(1, 8)
		local t0 = clock()
		sink = sink + alpha(n)
		local t1 = clock()
		sink = sink + beta(n)
		local t2 = clock()
		spent_a = spent_a + (t1 - t0)
		spent_b = spent_b + (t2 - t1)
		rounds = rounds + 1
	end
	local total = clock() - start
	print(string.format("%.0f %.0f", spent_a * 1e9, spent_b * 1e9))
	io.stderr:write(string.format("lua_split: %d rounds in %.3f s of CPU: alpha %.3f s, beta %.3f s, " ..
		"alpha/beta %.4f, in them %.1f %% (sink %g)\n", rounds, total, spent_a, spent_b,
		spent_a / spent_b, 100 * (spent_a + spent_b) / total, sink))
end

main()
