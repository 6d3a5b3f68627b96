-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- C through LuaJIT's FFI from a compiled loop: hash_it calls zlib's crc32
-- on a 64 KiB buffer in a hot loop (a trace, with JIT on, calls it
-- directly from its machine code, with no VM frame of its own between),
-- and stir runs a Lua chain of dependent multiply-adds. A round runs n
-- units of each, n random in 1..8. It measures the CPU time in each with
-- os.clock and at its end prints "HASH_IT_NS STIR_NS" on stdout and its
-- figures on stderr, so a profile's split between them can be checked.
--
-- With GO_FILE it writes READY_FILE and waits for GO_FILE before its
-- measured SECONDS, as lua_split.lua.
--
-- usage: luajit lua_ffi.lua SECONDS [READY_FILE GO_FILE]
local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local ffi = require("ffi")

-- zlib's crc32 takes and returns an unsigned long; declared with 32 bits (it
-- masks its argument to 32 bits, and its result has no more), a number,
-- not a boxed 64-bit cdata: no allocation, no garbage collection in the loop.
ffi.cdef([[
uint32_t crc32(uint32_t crc, const uint8_t *buf, uint32_t len);
]])
local z = ffi.load("libz.so.1")

local LEN = 65536
local HASH_UNIT = 4 -- crc32 calls
local STIR_UNIT = 50000 -- chain steps
local buf = ffi.new("unsigned char[?]", LEN)
for i = 0, LEN - 1 do
	buf[i] = (i * 131 + 7) % 256
end

local function hash_it(n)
	local crc = 0
	for _ = 1, n * HASH_UNIT do
		crc = z.crc32(crc, buf, LEN)
	end
	return crc
end

local function stir(n)
	local s = 1
	for _ = 1, n * STIR_UNIT do
		s = s * 0.9999999 + 1e-7
	end
	return s
end

local function main()
	local seconds = window.open("luajit lua_ffi.lua")
	local clock = os.clock
	local spent_h, spent_s, rounds, sink = 0, 0, 0, 0
	local start = clock()
	local stop = start + seconds
	while clock() < stop do
		local n = math.random(1, 8)
		local t0 = clock()
		sink = sink + hash_it(n)
		local t1 = clock()
		sink = sink + stir(n)
		local t2 = clock()
		spent_h = spent_h + (t1 - t0)
		spent_s = spent_s + (t2 - t1)
		rounds = rounds + 1
	end
	local total = clock() - start
	print(string.format("%.0f %.0f", spent_h * 1e9, spent_s * 1e9))
	io.stderr:write(string.format("lua_ffi: %d rounds in %.3f s of CPU: hash_it %.3f s (%.1f %%), " ..
		"stir %.3f s (%.1f %%), hash_it/stir %.4f (sink %g)\n", rounds, total, spent_h,
		100 * spent_h / total, spent_s, 100 * spent_s / total, spent_h / spent_s, sink))
end

main()
