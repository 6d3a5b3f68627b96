-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- The Lua that nginx.conf.in runs for each request to /lua: CPU work in
-- named functions, M.serve -> render -> checksum, so a profile of the
-- worker shows each request's Lua frames on top of nginx's own. checksum
-- is a chain of dependent multiply-adds; render builds the body.
local M = {}

local ROUNDS = 600000 -- chain steps a request: some 1 ms compiled

local function checksum(seed, steps)
	local s = seed
	for _ = 1, steps do
		s = s * 0.9999999 + 1e-7
	end
	return s
end

local function render(uri)
	local parts = {}
	for i = 1, 4 do
		parts[i] = string.format("%s part %d: %.6f", uri, i, checksum(i, ROUNDS / 4))
	end
	return table.concat(parts, "\n") .. "\n"
end

function M.serve()
	ngx.say(render(ngx.var.uri))
end

return M
