#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What the agent (bpfprof --listen, 99 Hz, the whole machine) costs on a
# busier host: 100 light processes, 25 each of Python (/usr/bin/python3),
# Ruby, LuaJIT and C (tests/workloads/tick), each waking every 200 ms for
# WORK_MS ms of its own CPU time in two nested functions (*_tick_outer,
# *_tick_inner), so the agent has processes of each runtime to find and
# frames of each to read. Per round, a fresh agent: its CPU (utime + stime
# from /proc/PID/stat) over 60 s after a 10 s warm-up, in % of one CPU;
# then one /debug/pprof/profile?seconds=5, read with go tool pprof -top for
# the *_tick_inner frames of each runtime (so the agent measured is one that
# reads the runtimes); its peak RSS (VmHWM) before that profile and at the end. Cells are
# medians with min-max. The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [WORK_MS=2] bash tests/bench/agent.sh [RESULTS]
# RESULTS defaults to tests/bench/agent.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/agent.md}
ROUNDS=${ROUNDS:-3}
WORK_MS=${WORK_MS:-2}
EACH=25
WARM_S=10
RUN_S=60

. "$(dirname "$0")/lib.sh"
bench_start agent

[ "$(id -u)" = 0 ] || die "run as root: the agent loads BPF programs (sudo make bench)"
[ -x "$BPFPROF" ] && [ -x "$O/tests/workloads/tick" ] || die "build first: make O=$O test-build"
HOME=/tmp go version > /dev/null 2>&1 || die "needs go, for go tool pprof (make deps)"
LOAD=$(sed 's/.*load average: //' <<< "$(uptime)")

# The three interpreted workloads: the same loop as tests/workloads/tick.c.
cat > "$T/tick.py" <<'PY'
import sys, time
def py_tick_inner(n):
    s = 0
    for i in range(n):
        s = (s * 31 + i) & 0xffffffff
    return s
def py_tick_outer(ms):
    end = time.process_time() + ms / 1000
    while time.process_time() < end:
        py_tick_inner(500)
while True:
    py_tick_outer(float(sys.argv[1]))
    time.sleep(0.2)
PY
cat > "$T/tick.rb" <<'RB'
def rb_tick_inner(n)
  s = 0
  n.times { |i| s = (s * 31 + i) & 0xffffffff }
  s
end
def rb_tick_outer(ms)
  clock = Process::CLOCK_PROCESS_CPUTIME_ID
  stop = Process.clock_gettime(clock) + ms / 1000.0
  rb_tick_inner(500) while Process.clock_gettime(clock) < stop
end
loop do
  rb_tick_outer(ARGV[0].to_f)
  sleep 0.2
end
RB
cat > "$T/tick.lua" <<'LUA'
local function lua_tick_inner(n)
  local s = 0
  for i = 1, n do s = (s * 31 + i) % 4294967296 end
  return s
end
local function lua_tick_outer(ms)
  local stop = os.clock() + ms / 1000
  while os.clock() < stop do lua_tick_inner(500) end
end
local ffi = require("ffi")
ffi.cdef("int usleep(unsigned int);")
while true do
  lua_tick_outer(tonumber(arg[1]))
  ffi.C.usleep(200000)
end
LUA

RUBY=$(command -v ruby3.1 || command -v ruby)
NAMES=() RUNS=() LABELS=()
[ -x /usr/bin/python3 ] && NAMES+=(py_tick_inner) RUNS+=("/usr/bin/python3 $T/tick.py") LABELS+=(Python)
[ -n "$RUBY" ] && NAMES+=(rb_tick_inner) RUNS+=("$RUBY $T/tick.rb") LABELS+=(Ruby)
command -v luajit > /dev/null && NAMES+=(lua_tick_inner) RUNS+=("luajit $T/tick.lua") LABELS+=(LuaJIT)
NAMES+=(c_tick_inner) RUNS+=("$O/tests/workloads/tick") LABELS+=(C)
[ ${#RUNS[@]} = 4 ] || note "# only ${#RUNS[@]} of the 4 runtimes here (make deps): ${NAMES[*]}"

for run in "${RUNS[@]}"; do
	for ((i = 0; i < EACH; i++)); do
		$run "$WORK_MS" > /dev/null 2>> "$T/workloads.err" &
		PIDS+=($!)
	done
done
sleep 2
alive=0
for p in "${PIDS[@]}"; do kill -0 "$p" 2> /dev/null && alive=$((alive + 1)); done
[ "$alive" = $((EACH * ${#RUNS[@]})) ] || { head -5 "$T/workloads.err" >&2; die "only $alive of $((EACH * ${#RUNS[@]})) workloads running"; }

# round: a fresh agent; its CPU over RUN_S s after WARM_S s, one 5 s profile, its peak RSS.
round() {
	local port=$((20000 + RANDOM % 20000)) pid t0 t1 hz n shown=0
	"$BPFPROF" -F 99 --listen "127.0.0.1:$port" 2> "$T/agent.err" &
	pid=$!
	PIDS+=($pid)
	sleep $WARM_S
	kill -0 $pid 2> /dev/null || { tail -3 "$T/agent.err" >&2; die "the agent exited"; }
	hz=$(getconf CLK_TCK)
	t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep $RUN_S
	t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	put cpu "$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s=$RUN_S 'BEGIN { printf "%.3f", 100 * (b - a) / hz / s }')"
	put rss.before "$(awk '$1 == "VmHWM:" { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")"
	if curl -sf -o "$T/p.pb.gz" "http://127.0.0.1:$port/debug/pprof/profile?seconds=5" &&
		HOME=/tmp go tool pprof -top -nodecount=100000 -nodefraction=0 -edgefraction=0 \
			"$T/p.pb.gz" > "$T/top" 2> "$T/top.err"; then
		for n in "${NAMES[@]}"; do grep -qw "$n" "$T/top" && shown=$((shown + 1)); done
		put shown $shown
	else
		note "no profile read: $(tail -1 "$T/top.err" 2> /dev/null)"
	fi
	put rss "$(awk '$1 == "VmHWM:" { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")"
	kill -INT $pid
	wait $pid 2> /dev/null
	note "  CPU $(awk -v k=cpu '$1 == k { v = $2 } END { print v }' "$DATA") %, peak RSS" \
		"$(awk '$1 == "rss" { v = $2 } END { print v }' "$DATA") MB, runtimes shown ${shown} of ${#NAMES[@]}"
}

note "$ROUNDS rounds (some $((ROUNDS * (WARM_S + RUN_S + 7) / 60 + 1)) minutes), load average $LOAD"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	round
done

{
	echo "What the agent costs on a busier host, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r),"
	echo "load average at start $LOAD: bpfprof -F 99 --listen beside $((EACH * ${#RUNS[@]})) light processes"
	echo "($EACH each of ${LABELS[*]}), each waking every 200 ms for $WORK_MS ms of CPU;"
	echo "$ROUNDS rounds, a fresh agent each, median (min-max). CPU from /proc/PID/stat over ${RUN_S} s after"
	echo "${WARM_S} s of warm-up; then one 5 s /debug/pprof/profile, read by go tool pprof -top; peak RSS (VmHWM) before it and at the end."
	echo "Command: \`sudo ROUNDS=$ROUNDS WORK_MS=$WORK_MS O=$O bash tests/bench/agent.sh\`."
	echo
	echo "| figure | bpfprof agent | target |"
	echo "|---|---|---|"
	echo "| CPU, % of one CPU after warm-up | $(cell cpu 2) | <= 0.1 |"
	echo "| peak RSS, MB, before the profile was asked for | $(cell rss.before 1) | - |"
	echo "| peak RSS, MB, at the end | $(cell rss 1) | <= 24 |"
	echo "| runtimes whose frames the 5 s profile showed, of ${#NAMES[@]} | $(cell shown 0) | ${#NAMES[@]} |"
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
