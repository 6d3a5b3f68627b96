#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What LuaJIT frames cost: bpfprof (Lua frames read, the default) and
# bpfprof --no-lua (native frames only) attached at once to the whole
# machine while two busy LuaJIT processes (each 20 Lua calls deep over a
# dependent-arithmetic loop, one with the JIT on, one with -joff) keep both
# CPUs busy, at 999 Hz: so both programs run on the same samples. Per run
# of each: the BPF time per sample (the kernel's bpf_stats), the profiler's
# CPU (user + system) and the share of the LuaJIT processes' samples that
# carry a Lua frame. Rounds take turns over the builds present (the
# installed /usr/bin/luajit, OpenResty's luajit2, and Debian's upstream
# LuaJIT unpacked in $O/luajit-upstream); cells are medians with min-max.
# The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=10] [DEPTH=20] bash tests/bench/luajit.sh [RESULTS]
# RESULTS defaults to tests/bench/luajit.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/luajit.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
DEPTH=${DEPTH:-20}	# Lua calls over the loop
F=999

. "$(dirname "$0")/lib.sh"
bench_start luajit

pair_ready
[ -x /usr/bin/luajit ] || die "needs luajit (make deps installs OpenResty's luajit2)"

# name:path; upstream only once make has unpacked it (make O=$O $O/luajit-upstream/.unpacked).
LUAJITS=(openresty:/usr/bin/luajit)
[ -x "$O/luajit-upstream/usr/bin/luajit" ] && LUAJITS+=("upstream:$O/luajit-upstream/usr/bin/luajit")

# The workload: Lua calls DEPTH deep (not tail calls, so each keeps its frame)
# over a loop of dependent arithmetic; the JIT compiles the loop into a
# trace in one process and the other interprets it (-joff).
cat > "$T/busy.lua" << 'EOF'
local clock = os.clock
local function loop(n)
	local x = 1
	for i = 1, n do x = (x * 1.0000001 + 0.25) % 1000003 end
	return x
end
local function deep(k)
	if k == 0 then return loop(20000) end
	local r = deep(k - 1)
	return r
end
local stop = clock() + tonumber(arg[1])
local depth = tonumber(arg[2])
while clock() < stop do deep(depth) end
EOF

# share FILE PID...: % of those processes' samples in FILE (run with --per-pid, so another
# luajit on the machine is not counted) with a Lua frame (a "(busy.lua:" one).
share() {
	local f=$1
	shift
	awk -v pids=" $* " '{ root = $0; sub(/;.*/, "", root); n = split(root, w, "-")
	     if (index(pids, " " w[n] " ") == 0) next
	     t += $NF; if (/\(busy\.lua:[0-9]+\)/) p += $NF }
	     END { if (t) printf "%.1f", 100 * p / t }' "$f"
}

# both NAME LUAJIT: the two profilers at once on the same samples.
both() {
	local name=$1 lj=$2 d=$T/run w1 w2 rc
	rm -rf "$d" && mkdir -p "$d"
	"$lj" "$T/busy.lua" $((RUN_S + 4)) $DEPTH & w1=$!
	"$lj" -joff "$T/busy.lua" $((RUN_S + 4)) $DEPTH & w2=$!
	PIDS+=($w1 $w2)
	sleep 1
	pair_run "$d" --no-lua --per-pid
	rc=$?
	kill $w1 $w2 2>/dev/null
	wait $w1 $w2 2>/dev/null
	[ $rc = 0 ] || return 1
	put "ns.lua" "$(cat "$d/0.ns")"
	put "ns.native" "$(cat "$d/1.ns")"
	put "ns.lua.$name" "$(cat "$d/0.ns")"
	put "ns.native.$name" "$(cat "$d/1.ns")"
	put "cpu.lua" "$(cpu_of "$d/frames.time")"
	put "cpu.native" "$(cpu_of "$d/native.time")"
	put "share.lua" "$(share "$d/frames.folded" $w1 $w2)"
	put "share.native" "$(share "$d/native.folded" $w1 $w2)"
	note "  $name ($lj): BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample; CPU" \
		"$(tail -1 "$d/frames.time") and $(tail -1 "$d/native.time") s;" \
		"$(share "$d/frames.folded" $w1 $w2)% with Lua frames ($(share "$d/native.folded" $w1 $w2)% with --no-lua)"
}

note "$ROUNDS rounds over ${#LUAJITS[@]} builds of $RUN_S s runs at $F Hz" \
	"(some $((ROUNDS * ${#LUAJITS[@]} * (RUN_S + 3) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	for b in "${LUAJITS[@]}"; do
		both "${b%%:*}" "${b#*:}" || note "${b#*:}: no figures this round"
	done
done

bpf_ratio=$(ratio ns.lua ns.native)
{
	echo "LuaJIT frames, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r): two busy LuaJIT"
	echo "processes ($DEPTH Lua calls deep over a dependent-arithmetic loop, one with the JIT on, one"
	echo "with -joff), the whole machine, $F Hz, $RUN_S s; bpfprof and bpfprof --no-lua at once on the"
	echo "same samples; over $(printf '%s ' "${LUAJITS[@]#*:}")x $ROUNDS rounds; median (min-max)."
	echo "Command: \`sudo ROUNDS=$ROUNDS RUN_S=$RUN_S DEPTH=$DEPTH O=$O bash tests/bench/luajit.sh\`."
	echo
	echo "| | bpfprof (Lua frames) | bpfprof --no-lua | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| BPF time per sample, ns | $(cell ns.lua 0) | $(cell ns.native 0) | $bpf_ratio | <= 2 |"
	echo "| profiler CPU, s (user + system) | $(cell cpu.lua 2) | $(cell cpu.native 2) | $(ratio cpu.lua cpu.native) | - |"
	echo "| LuaJIT processes' samples with Lua frames, % | $(cell share.lua 1) | $(cell share.native 1) | | - |"
	echo
	awk -v r="$bpf_ratio" 'BEGIN { if (r == "-") print "BPF time ratio: no figures.";
		else printf "BPF time ratio %s: %s the target of <= 2.\n", r, r <= 2 ? "meets" : "misses" }'
	echo
	echo "BPF time per sample by build, ns: Lua frames / native only = ratio"
	echo
	for b in "${LUAJITS[@]}"; do
		k=${b%%:*}
		echo "- $k (${b#*:}): $(cell ns.lua.$k 0) / $(cell ns.native.$k 0) = $(ratio ns.lua.$k ns.native.$k)"
	done
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
