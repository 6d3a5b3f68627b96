-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- The measured window the Lua workloads here share: their arguments
-- SECONDS [READY_FILE GO_FILE], and the handshake with the test that runs
-- them (READY_FILE written once loaded, then GO_FILE awaited without
-- burning a CPU while the profiler loads). A workload loads it from beside
-- itself:
--   local window = dofile((arg[0]:match("^(.*/)") or "") .. "lua_window.lua")
local ffi = require("ffi")
pcall(ffi.cdef, "int poll(void *fds, unsigned long nfds, int timeout);")

local M = {}

-- Polls for the file, 20 ms between looks.
function M.wait_for(path)
	while true do
		local f = io.open(path)
		if f then
			f:close()
			return
		end
		ffi.C.poll(nil, 0, 20)
	end
end

-- SECONDS, after the handshake when READY_FILE and GO_FILE are given; the
-- usage on stderr and exit 2 when SECONDS is missing or ok is false.
function M.open(usage, ok)
	local seconds = tonumber(arg[1])
	if not seconds or ok == false then
		io.stderr:write("usage: " .. usage .. " SECONDS [READY_FILE GO_FILE]\n")
		os.exit(2)
	end
	if arg[3] then
		assert(io.open(arg[2], "w")):close()
		M.wait_for(arg[3])
	end
	return seconds
end

return M
