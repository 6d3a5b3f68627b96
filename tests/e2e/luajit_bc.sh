# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A real Lua program, LuaJIT's own bytecode lister jit.bc, listing every Lua
# file the machine has round after round (tests/workloads/lua_bc.lua), with
# the JIT on and off, profiled by bpfprof -p and by LuaJIT's own profiler
# jit.p (-jp=Gfi1: whole stacks by function, raw counts, every 1 ms) in the
# same process over the same window. Three defects this program showed:
#
# 1. Samples in the VM's code for a fast function (string.format, bit.band),
#    or its call (PC already the callee's pseudo bytecode), kept no Lua
#    frame: 4.7 % of -joff's samples "running no Lua" (lua_pcall;[luajit+0xafc8]).
# 2. A fast function was [builtin#91] where jit.p (vmdef.ffnames) says
#    string.format.
# 3. bc.lua's one dump function (bc.lua:133) stood under three names, one
#    per call site: bc.dump, bcdump and function (called by pcall). jit.p
#    names by call site too (dump, bcdump, bc.lua:133): its share of samples
#    holding any of them is the function's.
# 4. With the JIT on, some 0.15 % of the samples had their Lua frames on
#    [truncated];[unknown]: the VM's code entering a trace (BC_JLOOP) or
#    leaving one (the exit handler) runs off its C frame, and the walk went
#    on by the VM's CFI into a heap address.
. tests/lib.sh

RUN_S=6
F=999
LUA_BC=tests/workloads/lua_bc.lua

if ! [ -x /usr/bin/luajit ]; then
	not_ok "luajit_bc: /usr/bin/luajit not installed (sudo make deps installs luajit2)"
	exit 0
fi

# bp_share FOLDED REGEX: % of the samples whose stack matches REGEX.
bp_share() {
	awk -v re="$2" '{ t += $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) n += $NF }
		END { printf "%.1f", t ? 100 * n / t : 0 }' "$1"
}
# jp_share JP NAME...: the same from jit.p's G output, samples holding any of the NAMEs.
jp_share() {
	local f=$1
	shift
	awk -v names="$*" 'BEGIN { k = split(names, n, " "); for (i = 1; i <= k; i++) want[n[i]] = 1 }
		{ t += $NF; s = $0; sub(/ [0-9]+$/, "", s); m = split(s, fr, ";"); hit = 0
		  for (i = 1; i <= m; i++) if (fr[i] in want) hit = 1
		  if (hit) c += $NF }
		END { printf "%.1f", t ? 100 * c / t : 0 }' "$f"
}
jp_total() { awk '{ t += $NF } END { print t + 0 }' "$1"; }
# names_of FOLDED FILE_LINE: the names bpfprof gave the Lua function at FILE:LINE, one a line.
names_of() {
	awk -v at="($2)" '{ s = $0; sub(/ [0-9]+$/, "", s); m = split(s, fr, ";")
		for (i = 1; i <= m; i++) if (substr(fr[i], length(fr[i]) - length(at) + 1) == at)
			seen[substr(fr[i], 1, length(fr[i]) - length(at) - 1)] = 1 }
		END { for (n in seen) print n }' "$1" | sort
}
# split_functions FOLDED: how many Lua functions (FILE:LINE) stand under more than one name.
split_functions() {
	awk '{ s = $0; sub(/ [0-9]+$/, "", s); m = split(s, fr, ";")
		for (i = 1; i <= m; i++) if (match(fr[i], / \([^()]+:[0-9]+\)$/)) {
			at = substr(fr[i], RSTART); name = substr(fr[i], 1, RSTART - 1)
			if (!((at, name) in seen)) { seen[at, name] = 1; names[at]++ } } }
		END { for (a in names) if (names[a] > 1) c++; print c + 0 }' "$1"
}
# close A B [POINTS]: A and B (per cent) within 5 points (or POINTS).
close() { awk -v a="$1" -v b="$2" -v p="${3:-5}" 'BEGIN { d = a - b; exit !(d <= p && d >= -p) }'; }

for flag in -jon -joff; do
	name=bc$flag
	LUA_BC_JITP="Gfi1 $T/$name.jp" start_window $name $RUN_S /usr/bin/luajit $flag $LUA_BC
	profile_window $name -F $F
	total=$(folded_total "$T/$name.folded")
	jtotal=$(jp_total "$T/$name.jp" 2> /dev/null)
	if [ "$RC" != 0 ] || [ "${total:-0}" -lt 1500 ] || [ "${jtotal:-0}" -lt 300 ]; then
		not_ok "$name: too few samples (bpfprof rc $RC, ${total:-no} samples; jit.p ${jtotal:-no})"
		diag "$T/$name.err"
		diag "$T/$name.wl"
		continue
	fi

	# 1. Lua frames on all but 0.5 % of the samples of the process.
	summary='s/.*luajit: \([0-9]*\) samples of LuaJIT processes, \([0-9]*\) with their Lua'
	summary+=' frames.* without: \([0-9]*\) running no Lua.*/\1 \2 \3/p'
	read -r n with without < <(sed -n "$summary" "$T/$name.err")
	check "$name: Lua frames on ${with:-no} of ${n:-no} samples (>= 99.5 %), ${without:-?} no Lua" \
		'[ "${n:-0}" -gt 0 ] && [ $(( ${with:-0} * 1000 )) -ge $(( n * 995 )) ]'
	no_lua=$(awk '!/ \([^()]+:[0-9]+\)/ { t += $NF } END { print t + 0 }' "$T/$name.folded")
	check "$name: $no_lua of $total samples in the folded output without a Lua frame (<= 0.5 %)" \
		'[ $(( no_lua * 200 )) -le "$total" ]'

	# 2. Fast functions by their library names, as jit.p's vmdef.ffnames has them.
	unnamed=$(sum_matching "$T/$name.folded" '[[]builtin#')
	fmt=$(bp_share "$T/$name.folded" ';string[.]format(;|$)')
	check "$name: string.format on $fmt % of the samples, $unnamed samples with a [builtin#N] frame" \
		'[ "$unnamed" = 0 ] && awk -v s="$fmt" "BEGIN { exit !(s >= 3) }"'

	# 3. One name for bc.lua's dump, whatever called it; its share as jit.p's under its names.
	names=$(names_of "$T/$name.folded" bc.lua:133 | paste -sd, -)
	split=$(split_functions "$T/$name.folded")
	check "$name: bc.lua:133 named '$names'; $split Lua functions under more than one name (0)" \
		'[ "$split" = 0 ] && [ -n "$names" ] && [ "${names#*,}" = "$names" ]'
	bp=$(bp_share "$T/$name.folded" ";$names [(]bc[.]lua:133[)]")
	jp=$(jp_share "$T/$name.jp" dump bcdump bc.lua:133)
	check "$name: $names (bc.lua:133) on $bp % of $total, $jp % of $jtotal in jit.p (5 points)" \
		'close "$bp" "$jp"'
	# Interpreted, where jit.p is right (with the JIT on, its samples fall where a trace
	# checks for them: seen, bcline 17 % in jit.p against 63 % in bpfprof); jit.p sees no
	# fast function's code (its samples wait for the next bytecode): bcline holds them.
	bp=$(bp_share "$T/$name.folded" ';bcline [(]bc[.]lua:66[)]')
	jp=$(jp_share "$T/$name.jp" bcline)
	if [ $flag = -joff ]; then
		check "$name: bcline on $bp % in bpfprof, $jp % in jit.p (within 5 points)" 'close "$bp" "$jp"'
	else
		echo "# $name: bcline on $bp % in bpfprof, $jp % in jit.p (not compared: the JIT on)"
	fi

	# 4. Lua frames standing on [truncated];[unknown]: the VM's code run off its C frame
	# (entering a trace, leaving one) walked on by the VM's CFI, which does not hold there.
	lost=$(awk '/^[^;]*;\[truncated\];\[unknown\];.* \([^()]+:[0-9]+\)/ { t += $NF }
		END { print t + 0 }' "$T/$name.folded")
	check "$name: $lost of $total samples with Lua frames on [truncated];[unknown] (<= 0.05 %)" \
		'[ $(( lost * 2000 )) -le "$total" ]'
	echo "# $name: $(sum_matching "$T/$name.folded" '^[^;]*;[[]truncated[]]') of $total samples" \
		"rooted at [truncated]"
done
