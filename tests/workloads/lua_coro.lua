-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- Lua frames across a coroutine: resumer resumes, again and again, a
-- coroutine whose function calls inside_coro (a chain of dependent
-- multiply-adds, n random in 1..8 units a resume) and yields. The
-- coroutine runs on a lua_State of its own, entered through a VM entry of
-- its own on the C stack: a profiler that follows only the running
-- lua_State loses resumer and what is below it. inside_coro measures its
-- own CPU time with os.clock; at its end it prints "INSIDE_CORO_NS
-- RUN_NS" on stdout (the second the whole measured run) and its figures on stderr.
--
-- With GO_FILE it writes READY_FILE and waits for GO_FILE before its
-- measured SECONDS, as lua_split.lua.
--
-- usage: luajit [-joff] lua_coro.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local UNIT = 50000 -- chain steps
local clock = os.clock
local spent_inside = 0

local function inside_coro(n)
	local t0 = clock()
	local s = 1
	for _ = 1, n * UNIT do
		s = s * 0.9999999 + 1e-7
	end
	spent_inside = spent_inside + (clock() - t0)
	return s
end

-- Unnamed where it starts (resume calls it), so inside_coro is called by name from it.
local co = coroutine.create(function(n)
	while true do
		n = coroutine.yield(inside_coro(n))
	end
end)

local function resumer(stop)
	local sink, resumes = 0, 0
	while clock() < stop do
		local ok, s = coroutine.resume(co, math.random(1, 8))
		assert(ok, s)
		sink = sink + s
		resumes = resumes + 1
	end
	return sink, resumes
end

local function main()
	local seconds = window.open("luajit lua_coro.lua")
	local start = clock()
	local sink, resumes = resumer(start + seconds)
	local total = clock() - start
	print(string.format("%.0f %.0f", spent_inside * 1e9, total * 1e9))
	io.stderr:write(string.format("lua_coro: %d resumes in %.3f s of CPU, inside_coro %.3f s (%.1f %%) (sink %g)\n",
		resumes, total, spent_inside, 100 * spent_inside / total, sink))
end

main()
