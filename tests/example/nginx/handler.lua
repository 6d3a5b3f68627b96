-- SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
-- The handler behind the README's flame graph of nginx serving Lua
-- (tests/e2e/nginx/nginx.conf.in with this directory as its Lua path):
-- each request renders a page (string formatting in Lua, LuaJIT's
-- built-ins), digests it with nginx's MD5 (C, through the FFI of
-- lua-resty-core) and scores it (a loop compiled to a trace).
local M = {}

local function score(n)
	local s = 1
	for i = 1, n do
		s = s * 0.9999999 + i * 1e-9
	end
	return s
end

local function render(uri)
	local rows = {}
	for i = 1, 200 do
		rows[i] = string.format("<tr><td>%s</td><td>%d</td><td>%.4f</td></tr>", uri, i, i / 7)
	end
	return "<table>" .. table.concat(rows) .. "</table>"
end

local function digest(page)
	local d = page
	for _ = 1, 50 do
		d = ngx.md5(d .. page)
	end
	return d
end

function M.serve()
	local page = render(ngx.var.uri)
	ngx.say(page, digest(page), score(100000))
end

return M
