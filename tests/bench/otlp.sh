#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What the agent costs sending OTLP: bpfprof -F 99 --otlp to a stand-in of
# an OpenTelemetry Collector's receiver (tests/otlp_receiver.py, on the
# loopback), the whole machine, BUSY busy processes (tests/workloads/split,
# 2 by default) beside it. Its CPU (utime + stime from /proc/PID/stat) over RUN_S seconds
# after a 10 s warm-up, in % of one CPU; its peak RSS (VmHWM); the requests
# the receiver kept and the summary's line. The markdown table goes to
# stdout and to RESULTS.
#
# usage (root): [O=build] [RUN_S=600] [BUSY=2] bash tests/bench/otlp.sh [RESULTS]
# RESULTS defaults to tests/bench/otlp.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/otlp.md}
RUN_S=${RUN_S:-600}
BUSY=${BUSY:-2}
WARM_S=10

. "$(dirname "$0")/lib.sh"
bench_start otlp

[ "$(id -u)" = 0 ] || die "run as root: the agent loads BPF programs (sudo make bench)"
[ -x "$BPFPROF" ] && [ -x "$O/tests/workloads/split" ] || die "build first: make O=$O test-build"
LOAD=$(sed 's/.*load average: //' <<< "$(uptime)")

for ((i = 0; i < BUSY; i++)); do
	"$O/tests/workloads/split" 100000 > /dev/null 2>&1 & PIDS+=($!)
done
port=$((20000 + RANDOM % 20000))
mkdir -p "$T/rx"
/usr/bin/python3 tests/otlp_receiver.py $port "$T/rx" 2> "$T/rx.err" & PIDS+=($!)
sleep 0.5
note "the agent for $((WARM_S + RUN_S)) s"
"$BPFPROF" -F 99 --otlp "http://127.0.0.1:$port" 2> "$T/agent.err" &
pid=$!
PIDS+=($pid)
sleep $WARM_S
hz=$(getconf CLK_TCK)
t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
sleep "$RUN_S"
t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
rss=$(awk '/^VmHWM:/ { printf "%.1f", $2 / 1024 }' "/proc/$pid/status")
kill -INT $pid
wait $pid 2> /dev/null
cpu=$(awk -v a="$t0" -v b="$t1" -v hz="$hz" -v s="$RUN_S" 'BEGIN { printf "%.3f", 100 * (b - a) / hz / s }')
kept=$(cat "$T/rx/log" 2> /dev/null | wc -l)
refused=$(cat "$T/rx/refused" 2> /dev/null | wc -l)
summary=$(grep '^bpfprof: sent over OTLP' "$T/agent.err" | sed "s/127.0.0.1:$port/127.0.0.1:PORT/")
{
	echo "What the agent costs sending OTLP, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r),"
	echo "load average at start $LOAD: bpfprof -F 99 --otlp to tests/otlp_receiver.py on the loopback,"
	echo "the whole machine, $BUSY busy tests/workloads/split beside it; CPU from /proc/PID/stat over"
	echo "$RUN_S s after $WARM_S s of warm-up, peak RSS (VmHWM) at the end."
	echo "Command: \`sudo RUN_S=$RUN_S BUSY=$BUSY O=$O bash tests/bench/otlp.sh\`."
	echo
	echo "| figure | bpfprof --otlp | target |"
	echo "|---|---|---|"
	echo "| CPU, % of one CPU after warm-up | $cpu | <= 0.1 |"
	echo "| peak RSS, MB | $rss | - |"
	echo "| requests the receiver kept (refused) | $kept ($refused) | every interval |"
	echo
	echo "The summary: \`$summary\`"
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
