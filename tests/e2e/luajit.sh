# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# LuaJIT frames (issue 24), mixed with native ones, for both builds of
# LuaJIT 2.1 Debian has: OpenResty's (/usr/bin/luajit, luajit2) always, the
# upstream one when unpacked under $O/luajit-upstream. A Lua split as the
# workload's own clock split it, the JIT on and off; C through the FFI from
# a trace; C -> Lua -> C -> Lua through the C API; a coroutine; a storm of
# 150 ms processes; nginx's Lua module serving requests. Each workload
# measures itself over the window profiled: it waits for $T/go, which is
# made once bpfprof samples, and bpfprof -p stops when the workload ends.
#
# A Lua frame is "NAME (FILE:LINE)", a fast function its library name
# ("string.format", where the build's jit/vmdef.lua is found) or
# "[builtin#N]", a VM state with no Lua code running "[lua: ...]"; they
# replace the VM's own native frames. pprof's samples carry a lua_vm label.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

F=4999
RUN_S=4
SPLIT_S=6	# 30,000 samples: 5 % is four standard deviations of a 2:1 split
LW=tests/workloads
LUA_FRAME='\([^;()]+:[0-9]+\)'

if ! [ -x /usr/bin/luajit ]; then
	not_ok "luajit: /usr/bin/luajit not installed (sudo make deps installs luajit2)"
	exit 0
fi
LUAJITS=(/usr/bin/luajit)
UPSTREAM_DIR=$O/luajit-upstream
if [ -x "$UPSTREAM_DIR/usr/bin/luajit" ]; then
	LUAJITS+=("$UPSTREAM_DIR/usr/bin/luajit")
else
	ok "upstream LuaJIT # SKIP not unpacked in $UPSTREAM_DIR: OpenResty's build only"
fi
# flavour FILE: which LuaJIT a binary or library is (OpenResty's exports lua_getexdata).
flavour() { nm -D --defined-only "$1" 2> /dev/null | grep -q ' lua_getexdata$' && echo openresty || echo upstream; }

# vm_range FILE: "LO HI" (hex), LuaJIT's VM code in FILE: the one FDE whose first rule is a
# CFA 80 bytes up (the interpreter's C frame), as buildvm emits it.
vm_range() {
	readelf --debug-dump=frames "$1" 2> /dev/null | awk '
		/ FDE / { split($NF, a, /[=.]+/); lo = a[2]; hi = a[3]; first = 1; next }
		first && /DW_CFA_def_cfa_offset: 80$/ { print lo, hi; exit }
		{ first = 0 }'
}
# vm_left FOLDED FILE: samples in which a native frame of FILE's VM code ([BASENAME+0xOFF],
# OFF in vm_range) is left above a Lua frame: the Lua frames replace those of the VM.
vm_left() {
	local range
	range=$(vm_range "$2")
	[ -n "$range" ] || { echo "no-vm-range"; return; }
	awk -v f="[$(basename "$2")+0x" -v range="$range" '
	function hex(s,  i, n) {
		s = tolower(s); n = 0
		for (i = 1; i <= length(s); i++) n = n * 16 + index("0123456789abcdef", substr(s, i, 1)) - 1
		return n
	}
	BEGIN { split(range, r, " "); lo = hex(r[1]); hi = hex(r[2]) }
	{
		n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, fr, ";"); lua = 0
		for (i = 1; i <= k; i++) {
			if (fr[i] ~ /\([^()]+:[0-9]+\)$/ || fr[i] ~ /^\[(lua: |builtin#)/) {
				lua = 1
			} else if (lua && index(fr[i], f) == 1) {
				o = hex(substr(fr[i], length(f) + 1, length(fr[i]) - length(f) - 1))
				if (o >= lo && o <= hi) { t += n; break }
			}
		}
	}
	END { print t + 0 }' "$1"
}
# lua_vm PPROF: "STATE SAMPLES" lines, the samples by their lua_vm label ("none": without),
# and "total N", as go tool pprof -raw reads them.
lua_vm() {
	go tool pprof -raw "$1" 2> /dev/null | awk '
		/^Samples:/ { in_s = 1; next }
		/^Locations/ { in_s = 0 }
		in_s && /^ +[0-9]+ +[0-9]+: / { if (n) c[v] += n; n = $1; v = "none"; total += n; next }
		in_s && match($0, /lua_vm:\[[a-z]+\]/) { v = substr($0, RSTART + 8, RLENGTH - 9) }
		END { if (n) c[v] += n; for (v in c) print v, c[v]; print "total", total + 0 }'
}
vm_count() { awk -v s="$2" '$1 == s { print $2; f = 1 } END { if (!f) print 0 }' "$1"; }
# summary_line ERR: bpfprof's "bpfprof: luajit: ..." line (its wording is not settled: read loosely).
summary_line() { grep -m1 '^bpfprof: luajit: [0-9]' "$1"; }
# first_count ERR: the first number on that line (the samples of LuaJIT processes).
first_count() { summary_line "$1" | sed 's/^bpfprof: luajit: //' | grep -Eo '[0-9]+' | head -1; }

# 1. alpha and beta call the same work(n) twice and once a round: the samples
# under each split as the workload's own clock split its time, within 5 %,
# the JIT on (work's loop a trace) and off (all interpreted), both builds.
i=0
for lj in "${LUAJITS[@]}"; do
	fl=$(flavour "$lj")
	for mode in jit joff; do
		name=split-$fl-$mode
		flags=()
		[ $mode = joff ] && flags=(-joff)
		what="$fl luajit ${flags[*]:-(JIT on)}"
		start_window $name $SPLIT_S "$lj" "${flags[@]}" $LW/lua_split.lua
		outs=(-o "$T/$name.pb.gz")
		[ $i = 0 ] && outs+=(-o "$T/callgrind.out.$name")
		profile_window $name -F $F "${outs[@]}"
		read -r a_ns b_ns < "$T/$name.out"
		total=$(folded_total "$T/$name.folded")
		alpha=$(sum_matching "$T/$name.folded" ';alpha \(lua_split\.lua:[0-9]+\)(;|$)')
		beta=$(sum_matching "$T/$name.folded" ';beta \(lua_split\.lua:[0-9]+\)(;|$)')
		want=$(ratio "$a_ns" "$b_ns")
		got=$(ratio "$alpha" "$beta")
		if [ $RC = 0 ] && [ "$WL_RC" = 0 ] && [ -n "$total" ] && [ "$beta" -gt 3000 ] &&
			near_pct "$alpha" "$beta" "$want" 5; then
			ok "$what: alpha/beta = $got in $alpha + $beta samples, the workload measured $want (within 5 %; 4 sd $(ratio_spread "$alpha" "$beta") %)"
		else
			not_ok "$what: alpha/beta = $got ($alpha / $beta samples of ${total:-unreadable}, rc $RC, workload rc $WL_RC), the workload measured $want ($a_ns / $b_ns ns)"
			top "$T/$name.folded"
			diag "$T/$name.err"
		fi
		total=${total:-0}
		lua=$(sum_matching "$T/$name.folded" "$LUA_FRAME")
		whole=$(sum_matching "$T/$name.folded" '^luajit;_start;(.*;)?main chunk \(lua_split\.lua:[0-9]+\)(;|$)')
		check "$what: $(share "$lua" "$total")% of $total samples carry Lua frames (>= 95 %)" \
			'[ "$total" -gt 0 ] && within "$(share "$lua" "$total")" 95 100'
		check "$what: $(share "$whole" "$lua")% of those whole from _start through 'main chunk (lua_split.lua:N)' (>= 95 %)" \
			'[ "$lua" -gt 0 ] && within "$(share "$whole" "$lua")" 95 100'
		left=$(vm_left "$T/$name.folded" "$(readlink -f "$lj")")
		check "$what: no native frame of the VM's code left above a Lua frame ($left samples with one)" \
			'[ "$lua" -gt 0 ] && [ "$left" = 0 ]'
		lua_vm "$T/$name.pb.gz" > "$T/$name.vm"
		vm_total=$(vm_count "$T/$name.vm" total)
		interp=$(vm_count "$T/$name.vm" interp)
		trace=$(vm_count "$T/$name.vm" trace)
		if [ $mode = jit ]; then
			check "$what: pprof: $(share "$trace" "$vm_total")% of $vm_total samples labelled lua_vm:trace (work's loop compiled; >= 50 %)" \
				'[ "$vm_total" -gt 0 ] && within "$(share "$trace" "$vm_total")" 50 100'
		else
			check "$what: pprof: $(share "$interp" "$vm_total")% of $vm_total samples labelled lua_vm:interp (>= 50 %), $trace trace" \
				'[ "$vm_total" -gt 0 ] && [ "$trace" = 0 ] && within "$(share "$interp" "$vm_total")" 50 100'
		fi
		sum=$(summary_line "$T/$name.err")
		check "$what: the summary counts LuaJIT's samples: '${sum:-no bpfprof: luajit: line}'" \
			'[ "$(first_count "$T/$name.err")" -gt 0 ] 2> /dev/null'
		i=$((i + 1))
	done
done

# The stack, root to leaf: the luajit binary's native frames, then the
# script's Lua functions in place of the VM's.
split0=split-$(flavour /usr/bin/luajit)-jit
check "/usr/bin/luajit: native frames to the Lua ones: _start;...;main;lua_cpcall;...;lua_pcall;main chunk;main;alpha;work" \
	'grep -Eq "^luajit;_start;__libc_start_main;(.*;)?main;lua_cpcall;(.*;)?lua_pcall;main chunk \(lua_split\.lua:[0-9]+\);main \(lua_split\.lua:[0-9]+\);alpha \(lua_split\.lua:[0-9]+\);work \(lua_split\.lua:[0-9]+\)(;| )" "$T/$split0.folded"'

# 2. pprof and callgrind: the Lua file as the function's file, its lines.
go tool pprof -raw "$T/$split0.pb.gz" > "$T/raw.txt" 2> "$T/raw.err"
check "pprof: go tool pprof -raw reads it silently, work's Function in lua_split.lua" \
	'[ ! -s "$T/raw.err" ] && grep -Eq " work (.*/)?tests/workloads/lua_split\.lua:[0-9]+ " "$T/raw.txt"'
go tool pprof -traces "$T/$split0.pb.gz" > "$T/traces.txt" 2> "$T/traces.err"
check "pprof: go tool pprof -traces reads it silently, with alpha and work" \
	'[ ! -s "$T/traces.err" ] && grep -Eq "(^| )work\$" "$T/traces.txt" && grep -Eq "(^| )alpha\$" "$T/traces.txt"'
for_line=$(grep -n 'for _ = 1, n \* UNIT do' $LW/lua_split.lua | head -1 | cut -d: -f1)
go tool pprof -top -lines -sample_index=samples -nodecount=1000000 "$T/$split0.pb.gz" > "$T/lines.txt" 2> "$T/lines.err"
work_flat=$(awk '$(NF-1) == "work" { s += $1 } END { print s + 0 }' "$T/lines.txt")
loop_flat=$(awk -v a="lua_split.lua:$for_line" -v b="lua_split.lua:$((for_line + 1))" \
	'$(NF-1) == "work" && ($NF ~ a "$" || $NF ~ b "$") { s += $1 } END { print s + 0 }' "$T/lines.txt")
check "pprof: work's samples at its loop's lines ($for_line, $((for_line + 1))): $loop_flat of $work_flat (>= 95 %)" \
	'[ ! -s "$T/lines.err" ] && awk -v a="$loop_flat" -v b="$work_flat" "BEGIN { exit !(b > 0 && a >= 0.95 * b) }"'
cg=$(ls "$T"/callgrind.out.split-* 2> /dev/null | head -1)
check "callgrind: fl= names the Lua file" 'grep -Eq "^c?fl=\([0-9]+\) (.*/)?lua_split\.lua\$" "$cg"'

# 3. C through the FFI from a trace: zlib's crc32 under hash_it, and hash_it
# against stir (Lua) as the workload measured them.
for lj in "${LUAJITS[@]}"; do
	fl=$(flavour "$lj")
	name=ffi-$fl
	start_window $name $RUN_S "$lj" $LW/lua_ffi.lua
	profile_window $name -F $F
	read -r h_ns s_ns < "$T/$name.out"
	Z='(crc32|crc32_z|\[libz\.so[^;]*\])'
	in_c=$(sum_matching "$T/$name.folded" ";$Z(;|\$)")
	under=$(sum_matching "$T/$name.folded" ";hash_it \\(lua_ffi\\.lua:[0-9]+\\);(.*;)?$Z(;|\$)")
	if [ $RC = 0 ] && [ "$in_c" -gt 1000 ] && within "$(share "$under" "$in_c")" 90 100; then
		ok "$fl luajit, FFI: $(share "$under" "$in_c")% of $in_c samples in zlib's crc32 show hash_it below (>= 90 %)"
	else
		not_ok "$fl luajit, FFI: $under of $in_c samples in zlib's crc32 show hash_it below (rc $RC)"
		top "$T/$name.folded"; diag "$T/$name.err"
	fi
	hash=$(sum_matching "$T/$name.folded" ';hash_it \(lua_ffi\.lua:[0-9]+\)(;|$)')
	stir=$(sum_matching "$T/$name.folded" ';stir \(lua_ffi\.lua:[0-9]+\)(;|$)')
	want=$(ratio "$h_ns" "$s_ns")
	check "$fl luajit, FFI: hash_it/stir = $(ratio "$hash" "$stir") in $hash + $stir samples, the workload measured $want (within 5 %)" \
		'[ "$stir" -gt 2000 ] && near_pct "$hash" "$stir" "$want" 5'
done

# 4. C -> Lua -> C -> Lua: a host linking libluajit-5.1.so.2 runs a script
# whose outer calls c_spin (C), which calls back into Lua, inner (lua_call
# jumps to the VM: it leaves no frame of its own).
HOST=$WL/lua_host
hosts=(system)
up_lib=$(readlink -f "$UPSTREAM_DIR/usr/lib/x86_64-linux-gnu")
[ -e "$up_lib/libluajit-5.1.so.2" ] && hosts+=(upstream)
if ! [ -x "$HOST" ]; then
	not_ok "C API: $HOST not built (it needs LuaJIT's headers: libluajit2-5.1-dev)"
	hosts=()
fi
for h in "${hosts[@]}"; do
	name=capi-$h
	env=()
	[ $h = upstream ] && env=(LD_LIBRARY_PATH=$up_lib)
	start_window $name $RUN_S env "${env[@]}" "$HOST" $LW/lua_capi.lua
	lib=$(awk '$6 ~ /\/libluajit-5\.1\.so/ { print $6; exit }' /proc/$PID/maps 2> /dev/null)
	profile_window $name -F $F
	what="lua_host with $(basename "${lib:-no libluajit}") ($( [ -n "$lib" ] && flavour "$lib"))"
	if [ $h = upstream ]; then
		check "$what: the upstream library is the one loaded ($lib)" '[[ $lib == $up_lib/* ]]'
	fi
	read -r c_ns i_ns < "$T/$name.out"
	L='lua_capi\.lua:[0-9]+'
	# c_spin's own: it is the newest user frame (kernel frames may stand above it, as above
	# inner's: an interrupt's, a reschedule IPI's on a loaded machine).
	c_self=$(sum_matching "$T/$name.folded" ';c_spin(;[^;]*_\[k\])*$')
	c_any=$(sum_matching "$T/$name.folded" ';c_spin(;|$)')
	c_under=$(sum_matching "$T/$name.folded" ";outer \\($L\\);(.*;)?c_spin(;|\$)")
	inner=$(sum_matching "$T/$name.folded" ";inner \\($L\\)(;|\$)")
	inner_whole=$(sum_matching "$T/$name.folded" "^lua_host;_start;(.*;)?main;(.*;)?lua_pcall;main chunk \\($L\\);main \\($L\\);outer \\($L\\);(.*;)?c_spin;(.*;)?inner \\($L\\)(;|\$)")
	want=$(ratio "$c_ns" "$i_ns")
	if [ $RC = 0 ] && [ "$WL_RC" = 0 ] && [ "$inner" -gt 2000 ] && near_pct "$c_self" "$inner" "$want" 5; then
		ok "$what: c_spin's own/inner = $(ratio "$c_self" "$inner") in $c_self + $inner samples, the workload measured $want (within 5 %)"
	else
		not_ok "$what: c_spin's own/inner = $(ratio "$c_self" "$inner") ($c_self / $inner samples, rc $RC, workload rc $WL_RC), the workload measured $want"
		top "$T/$name.folded"; diag "$T/$name.err"; diag "$T/$name.wl"
	fi
	check "$what: $(share "$c_under" "$c_any")% of $c_any samples in c_spin show outer (Lua) below (>= 90 %)" \
		'[ "$c_any" -gt 0 ] && within "$(share "$c_under" "$c_any")" 90 100'
	check "$what: $(share "$inner_whole" "$inner")% of $inner samples in inner whole: _start;...;main;lua_pcall;main chunk;main;outer;c_spin;...;inner (>= 90 %)" \
		'[ "$inner" -gt 0 ] && within "$(share "$inner_whole" "$inner")" 90 100'
	left=$(vm_left "$T/$name.folded" "${lib:-/nonexistent}")
	check "$what: no native frame of the VM's code left above a Lua frame ($left samples with one)" \
		'[ "$inner" -gt 0 ] && [ "$left" = 0 ]'
done

# 4b. The same Lua under two C callers alike (c_via_a, c_via_b: the VM's C
# frame at the same address, the stacks below differing in one return
# address), in turn: the frames below a trace's VM frame, kept per thread,
# are taken again only while the stack below reads the same.
for h in "${hosts[@]}"; do
	name=via-$h
	env=()
	[ $h = upstream ] && env=(LD_LIBRARY_PATH=$up_lib)
	start_window $name $RUN_S env "${env[@]}" "$HOST" $LW/lua_via.lua
	profile_window $name -F $F
	# Called from C: named by their first lines.
	a="function \\(lua_via\\.lua:$(grep -n '^local function alpha' $LW/lua_via.lua | cut -d: -f1)\\)"
	b="function \\(lua_via\\.lua:$(grep -n '^local function beta' $LW/lua_via.lua | cut -d: -f1)\\)"
	alpha=$(sum_matching "$T/$name.folded" ";$a(;|\$)")
	beta=$(sum_matching "$T/$name.folded" ";$b(;|\$)")
	right=$(( $(sum_matching "$T/$name.folded" "^lua_host;_start;(.*;)?main;(.*;)?c_via_a;(.*;)?$a(;|\$)") +
		$(sum_matching "$T/$name.folded" "^lua_host;_start;(.*;)?main;(.*;)?c_via_b;(.*;)?$b(;|\$)") ))
	wrong=$(( $(sum_matching "$T/$name.folded" ";c_via_b;(.*;)?$a(;|\$)") +
		$(sum_matching "$T/$name.folded" ";c_via_a;(.*;)?$b(;|\$)") ))
	check "lua_host ($h), two C callers alike: $wrong of $((alpha + beta)) samples in alpha or beta on the other's C caller (none), $right whole on their own (>= 95 %)" \
		'[ $RC = 0 ] && [ $((alpha + beta)) -gt 2000 ] && [ $wrong = 0 ] && within "$(share "$right" $((alpha + beta)))" 95 100'
done

# 5. A coroutine: inside_coro's samples keep the resumer's stack below the coroutine's.
for lj in "${LUAJITS[@]}"; do
	fl=$(flavour "$lj")
	for mode in jit joff; do
		name=coro-$fl-$mode
		flags=()
		[ $mode = joff ] && flags=(-joff)
		start_window $name $RUN_S "$lj" "${flags[@]}" $LW/lua_coro.lua
		profile_window $name -F $F
		inside=$(sum_matching "$T/$name.folded" ';inside_coro \(lua_coro\.lua:[0-9]+\)(;|$)')
		under=$(sum_matching "$T/$name.folded" ';resumer \(lua_coro\.lua:[0-9]+\);(.*;)?inside_coro \(lua_coro\.lua:[0-9]+\)(;|$)')
		if [ $RC = 0 ] && [ "$inside" -gt 2000 ] && within "$(share "$under" "$inside")" 80 100; then
			ok "$fl luajit ${flags[*]:-(JIT on)}, coroutine: $(share "$under" "$inside")% of $inside samples in inside_coro show resumer below (>= 80 %)"
		else
			not_ok "$fl luajit ${flags[*]:-(JIT on)}, coroutine: $under of $inside samples in inside_coro show resumer below (rc $RC)"
			top "$T/$name.folded"; diag "$T/$name.err"
		fi
	done
done

# 6. A storm of 150 ms luajit processes, one after another: named while they
# live, most gone before the drain that reads them. In a cgroup of their own,
# so other LuaJIT processes on the machine are not counted.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-luajit-$$
mkdir "$CGROUP_DIR"
(wait_go; for i in $(seq 30); do /usr/bin/luajit $LW/lua_short.lua 2>> "$T/storm.wl"; done) &
storm=$!
BG_PIDS+=($storm)
echo $storm > "$CGROUP_DIR/cgroup.procs"
profile_until_done "$T/storm.folded" $storm -F 999 --cgroup "$CGROUP_DIR"
all=$(sum_matching "$T/storm.folded" '^luajit;')
running=$(sum_matching "$T/storm.folded" '^luajit;(.*;)?lua_pcall;')
named=$(sum_matching "$T/storm.folded" '^luajit;(.*;)?lua_pcall;(.*;)?short_fn \(lua_short\.lua:[0-9]+\)(;|$)')
storm_ok() { [ "$running" -gt 3000 ] && within "$(share "$named" "$running")" 90 100; }
check "storm of 30 luajit processes of 150 ms: $(share "$named" "$running")% of $running samples running their script named with short_fn (>= 90 %; $(share "$named" "$all")% of all $all)" \
	'storm_ok'

# 8. Bad input. A program scribbling on its own Lua stack (a frame link
# pointed at an unmapped address, or at a buffer of junk): no crash, every
# sample keeps its native stack, the cut counted.
for mode in fault junk; do
	(wait_go; exec /usr/bin/luajit $LW/lua_scribble.lua 3 $mode 2> "$T/scribble-$mode.wl") &
	pid=$!
	BG_PIDS+=($pid)
	profile_until_done "$T/scribble-$mode.folded" $pid -F 999 -p $pid
	wait $pid
	wl_rc=$?
	all=$(sum_matching "$T/scribble-$mode.folded" '^luajit;')
	native=$(sum_matching "$T/scribble-$mode.folded" '^luajit;_start;(.*;)?lua_pcall;')
	cut=$(summary_line "$T/scribble-$mode.err" | sed -n 's/.*, \([0-9]*\) at an unreadable frame.*/\1/p')
	scribble_ok() {
		[ "$wl_rc" = 0 ] && [ "$all" -gt 1000 ] && [ "${cut:-0}" -gt 0 ] &&
			within "$(share "$native" "$all")" 95 100
	}
	check "scribbled Lua stack ($mode): $(share "$native" "$all")% of $all samples whole from _start to lua_pcall (>= 95 %), ${cut:-no} walks cut at an unreadable frame, the program unharmed" \
		'scribble_ok'
done

# Garbage collection and traces thrown away under the walk (jit.flush):
# every VM state met, each sample named, the collector's time a frame.
(wait_go; exec /usr/bin/luajit $LW/lua_churn.lua 4 2> "$T/churn.wl") &
pid=$!
BG_PIDS+=($pid)
profile_until_done "$T/churn.folded" $pid -F 999 -p $pid -o "$T/churn.svg"
all=$(sum_matching "$T/churn.folded" '^luajit;')
whole=$(sum_matching "$T/churn.folded" "^luajit;_start;(.*;)?lua_pcall;main chunk $LUA_FRAME;")
gc_frames=$(sum_matching "$T/churn.folded" ';\[lua: gc\](;|$)')
states=$(grep -m1 '^bpfprof: luajit: the VM was' "$T/churn.err")
gc_counted=$(echo "$states" | sed -n 's/.*collecting garbage \([0-9]*\).*/\1/p')
jit_work=$(echo "$states" | sed -n 's/.*recording \([0-9]*\), optimising \([0-9]*\), assembling \([0-9]*\).*/\1 + \2 + \3/p')
churn_ok() {
	[ "$all" -gt 2000 ] && within "$(share "$whole" "$all")" 90 100 && [ "$gc_frames" -gt 0 ] &&
		[ "$gc_frames" -le "${gc_counted:-0}" ] && [ $((${jit_work:-0})) -gt 0 ]
}
check "GC and jit.flush: $(share "$whole" "$all")% of $all samples whole through the main chunk (>= 90 %); [lua: gc] on $gc_frames of the ${gc_counted:-?} samples collecting garbage; $((${jit_work:-0})) recording, optimising or assembling" \
	'churn_ok'
# A Lua frame's fill: violet, red and blue over green.
fill=$(awk -F'"' '/<g class="lua"><title>churn \(lua_churn\.lua:/ { for (i = 1; i < NF; i++) if ($i ~ /fill=$/) print $(i + 1) }' \
	"$T/churn.svg" | head -1)
violet() {
	[[ $fill =~ ^#[0-9a-f]{6}$ ]] && [ $((16#${fill:5:2})) -gt $((16#${fill:3:2})) ] &&
		[ $((16#${fill:1:2})) -gt $((16#${fill:3:2})) ]
}
check "svg: churn is a frame of class lua, in violet (${fill:-no fill})" 'violet'

# A LuaJIT bpfprof cannot vouch for (OpenResty's luajit with the upstream
# build's ID: the table and the code disagree): named once on stderr, its
# samples counted and kept native (interpreted, so its native walk is whole).
cp /usr/bin/luajit "$T/luajit-unknown"
own=$(readelf -n /usr/bin/luajit | sed -n 's/.*Build ID: //p')
python3 -c '
import sys
path, old, new = sys.argv[1], bytes.fromhex(sys.argv[2]), bytes.fromhex(sys.argv[3])
data = open(path, "rb").read()
assert data.count(old) == 1
open(path, "wb").write(data.replace(old, new))' "$T/luajit-unknown" "$own" 79b0b8114f05a2726860c3141195279ceb0f6e29
(wait_go; exec "$T/luajit-unknown" -joff $LW/lua_short.lua 2000 2> /dev/null) &
pid=$!
BG_PIDS+=($pid)
profile_until_done "$T/unknown.folded" $pid -F 999 -p $pid
all=$(sum_matching "$T/unknown.folded" '^luajit-unknown;')
native=$(sum_matching "$T/unknown.folded" '^luajit-unknown;_start;(.*;)?lua_pcall;')
lua=$(sum_matching "$T/unknown.folded" "$LUA_FRAME")
not_read=$(summary_line "$T/unknown.err" | sed -n 's/.*, \([0-9]*\) of a build not read.*/\1/p')
unknown_ok() {
	[ "$all" -gt 1000 ] && [ "$lua" = 0 ] && [ "${not_read:-0}" -ge $((all * 9 / 10)) ] &&
		within "$(share "$native" "$all")" 90 100 &&
		[ "$(grep -c "luajit-unknown': a build whose layout bpfprof cannot read" "$T/unknown.err")" = 1 ]
}
check "unknown LuaJIT build: named once on stderr, ${not_read:-?} of $all samples counted as of a build not read, $(share "$native" "$all")% native to lua_pcall (>= 90 %), $lua with Lua frames" \
	'unknown_ok'

# 7. nginx with Debian's Lua module: the worker's samples in handler.lua
# under M.serve, under nginx's own frames, while ab loads it.
NGX_MODS=/usr/lib/nginx/modules
if ! command -v nginx > /dev/null || ! [ -e $NGX_MODS/ngx_http_lua_module.so ] || ! command -v ab > /dev/null; then
	not_ok "nginx: nginx, its Lua module or ab missing (nginx-light, libnginx-mod-http-lua, apache2-utils)"
	exit 0
fi
NGX=$T/nginx
mkdir -p $NGX
port=$(( (RANDOM % 20000) + 30000 ))
sed -e "s|@PREFIX@|$NGX|g; s|@PORT@|$port|g; s|@LUA_DIR@|$(pwd)/tests/e2e/nginx|g" \
	tests/e2e/nginx/nginx.conf.in > $NGX/nginx.conf
nginx -p $NGX -c $NGX/nginx.conf -g 'daemon off;' 2> "$T/nginx.stderr" &
master=$!
BG_PIDS+=($master)
url=http://127.0.0.1:$port/lua
for i in $(seq 100); do
	curl -s -o "$T/body" "$url" 2> /dev/null && break
	kill -0 $master 2> /dev/null || break
	sleep 0.05
done
worker=$(ps --ppid $master -o pid= | head -1 | tr -d ' ')
if ! grep -q '^/lua part 4: ' "$T/body" 2> /dev/null || [ -z "$worker" ]; then
	not_ok "nginx: does not serve $url with its Lua handler (worker '${worker}')"
	diag "$T/nginx.stderr"; diag $NGX/error.log
	exit 0
fi
ok "nginx: serves $url from handler.lua (worker $worker)"
ab -q -t $((RUN_S + 2)) -n 10000000 -c 4 "$url" > "$T/ab.out" 2>&1 &
ab=$!
BG_PIDS+=($ab)
sleep 1	# the handler's traces compiled
$BPFPROF -F 999 -d $RUN_S -p $worker -o "$T/nginx.folded" -o "$T/nginx.pb.gz" 2> "$T/nginx.err"
rc=$?
wait $ab
rps=$(sed -n 's/^Requests per second: *\([0-9.]*\).*/\1/p' "$T/ab.out")
H='handler\.lua:[0-9]+'
in_handler=$(sum_matching "$T/nginx.folded" ";(checksum|render) \\($H\\)(;|\$)")
under=$(sum_matching "$T/nginx.folded" "^nginx;(.*;)?ngx_http_lua_content_[a-z_]*;(.*;)?M\\.serve \\($H\\);(.*;)?(render|checksum) \\($H\\)(;|\$)")
if [ $rc = 0 ] && [ "$in_handler" -gt 1000 ] && within "$(share "$under" "$in_handler")" 90 100; then
	ok "nginx (${rps:-?} requests/s): $(share "$under" "$in_handler")% of $in_handler samples in render/checksum show M.serve, then nginx;...;ngx_http_lua_content_* below (>= 90 %)"
else
	not_ok "nginx (${rps:-?} requests/s): $under of $in_handler samples in render/checksum show M.serve and nginx's frames below (rc $rc)"
	top "$T/nginx.folded"; diag "$T/nginx.err"
fi
nlib=$(awk '$6 ~ /\/libluajit-5\.1\.so/ { print $6; exit }' /proc/$worker/maps 2> /dev/null)
left=$(vm_left "$T/nginx.folded" "${nlib:-/nonexistent}")
check "nginx: no native frame of the VM's code ($(basename "${nlib:-none}")) left above a Lua frame ($left samples with one)" \
	'[ "$in_handler" -gt 0 ] && [ "$left" = 0 ]'
go tool pprof -raw "$T/nginx.pb.gz" > "$T/nginx.raw" 2> "$T/nginx.raw.err"
check "nginx: pprof: go tool pprof -raw reads it silently, checksum's Function in tests/e2e/nginx/handler.lua" \
	'[ ! -s "$T/nginx.raw.err" ] && grep -Eq " checksum (.*/)?tests/e2e/nginx/handler\.lua:[0-9]+ " "$T/nginx.raw"'
sum=$(summary_line "$T/nginx.err")
check "nginx: the summary counts LuaJIT's samples: '${sum:-no bpfprof: luajit: line}'" \
	'[ "$(first_count "$T/nginx.err")" -gt 0 ] 2> /dev/null'
kill -QUIT $master 2> /dev/null
wait $master
