#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What bpfprof itself costs, against bcc's libbpf-tools profile where
# PEER_PROFILE names one (built from its source beside the project, never
# committed into it): two busy processes (tests/workloads/split, frame
# pointers and CFI both) keep both CPUs busy while each profiler runs over
# the whole machine. Rounds interleave the profilers; cells are medians with
# min-max. Per run: CPU (user + system, /usr/bin/time) for 10 s at 999 Hz
# and for 1 s at 99 Hz, peak RSS, the time from exec to attached (bpfprof
# -v); then the agent (--listen, 99 Hz): its CPU over 20 s after a 10 s
# warm-up. The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [PEER_PROFILE=path/to/profile] bash tests/bench/cost.sh [RESULTS]
# RESULTS defaults to tests/bench/cost.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/cost.md}
ROUNDS=${ROUNDS:-3}
PEER=${PEER_PROFILE:-}

. "$(dirname "$0")/lib.sh"
bench_start cost

[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
[ -x "$BPFPROF" ] && [ -x "$O/tests/workloads/split" ] || die "build first: make O=$O test-build"
[ -x /usr/bin/time ] || die "needs time (make deps)"
[ -z "$PEER" ] || [ -x "$PEER" ] || die "PEER_PROFILE=$PEER: not an executable"

# timed KEY CMD...: CMD's CPU (user + system) as cpu.KEY and its peak RSS (MB) as rss.KEY;
# with bpfprof -v, its "attached N ms after exec" as attach.KEY.
timed() {
	local key=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$T/time" "$@" > /dev/null 2> "$T/err" ||
		{ note "$key: $* failed"; tail -3 "$T/err" >&2; return 1; }
	put "cpu.$key" "$(awk '{ print $1 + $2 }' "$T/time" | tail -1)"
	put "rss.$key" "$(awk '{ printf "%.1f", $3 / 1024 }' "$T/time" | tail -1)"
	put "attach.$key" "$(sed -n 's/.*attached \([0-9]*\) ms after exec.*/\1/p' "$T/err")"
}

# agent: bpfprof --listen at 99 Hz; its CPU over 20 s after 10 s of warm-up, in % of a CPU.
agent() {
	local pid t0 t1 hz
	"$BPFPROF" -F 99 --listen "127.0.0.1:$((20000 + RANDOM % 20000))" 2> "$T/agent.err" &
	pid=$!
	PIDS+=($pid)
	sleep 10
	hz=$(getconf CLK_TCK)
	t0=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	sleep 20
	t1=$(awk '{ print $14 + $15 }' "/proc/$pid/stat")
	kill -INT $pid
	wait $pid 2> /dev/null
	put "cpu.agent" "$(awk -v a="$t0" -v b="$t1" -v hz="$hz" 'BEGIN { printf "%.2f", 100 * (b - a) / hz / 20 }')"
}

"$O/tests/workloads/split" 100000 > /dev/null 2>&1 & PIDS+=($!)
"$O/tests/workloads/split" 100000 > /dev/null 2>&1 & PIDS+=($!)
sleep 1
note "$ROUNDS rounds (some $((ROUNDS * (40 + 2 * 12) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	if [ -n "$PEER" ]; then
		timed peer.999 "$PEER" -F 999 -f 10
		timed peer.99 "$PEER" -F 99 -f 1
	fi
	timed fp.999 "$BPFPROF" -v --unwind fp -F 999 -d 10 -o "$T/fp.folded"
	timed auto.999 "$BPFPROF" -v -F 999 -d 10 -o "$T/auto.folded"
	timed auto.99 "$BPFPROF" -v -F 99 -d 1 -o "$T/auto1.folded"
	agent
	note "  CPU: bpfprof $(median cpu.auto.999) s (fp $(median cpu.fp.999) s)${PEER:+, profile $(median cpu.peer.999) s}"
done

# row NAME KEY DECIMALS TARGET: a table row, the peer's cell and ratio where there is one.
row() {
	local peer=- r=-
	[ -n "$PEER" ] && [ -n "$(median "$2.peer.${5:-999}")" ] && peer=$(cell "$2.peer.${5:-999}" "$3") &&
		r=$(ratio "$2.auto.${5:-999}" "$2.peer.${5:-999}")
	echo "| $1 | $peer | $(cell "$2.fp.${5:-999}" "$3") | $(cell "$2.auto.${5:-999}" "$3") | $r | $4 |"
}
{
	echo "What bpfprof costs, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r): two busy processes"
	echo "(tests/workloads/split), the whole machine; $ROUNDS rounds, median (min-max);"
	echo "${PEER:+the peer: the libbpf-tools profile of bcc ($PEER), }bpfprof --unwind fp and bpfprof's default (--unwind auto)."
	echo "Command: \`sudo ROUNDS=$ROUNDS ${PEER:+PEER_PROFILE=$PEER }O=$O bash tests/bench/cost.sh\`."
	echo
	echo "| figure | bcc profile | bpfprof --unwind fp | bpfprof default | default / bcc | target |"
	echo "|---|---|---|---|---|---|"
	row "CPU, s, 10 s at 999 Hz" cpu 2 "<= 1.0x bcc"
	row "CPU, s, 1 s at 99 Hz" cpu 2 "<= 1.0x bcc" 99
	echo "| attached after exec, ms | - | $(cell attach.fp.999 0) | $(cell attach.auto.999 0) | - | <= 100 |"
	row "peak RSS, MB, 10 s at 999 Hz" rss 1 "<= 16"
	echo "| agent (--listen, 99 Hz), % of a CPU after warm-up | - | - | $(cell cpu.agent 2) | - | <= 0.1 |"
	echo
	echo "default / --unwind fp, CPU at 999 Hz: $(ratio cpu.auto.999 cpu.fp.999) (target <= 1.2)."
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
