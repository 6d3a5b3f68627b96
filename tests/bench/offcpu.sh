#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What --off-cpu costs, against bcc's offcputime (the peer), on this machine:
#
# - BPF time per sched_switch: bpfprof --off-cpu and the peer attached at
#   once to the whole machine while `perf bench sched pipe` switches some
#   hundred thousand times a second, so both programs run on the same
#   switches (the kernel's bpf_stats);
# - the slowdown of `perf bench sched pipe` (usecs/op) under each alone,
#   against none, in turns so a drifting machine weighs on all alike;
# - agreement: both at once on tests/workloads/waits (-p), the microseconds
#   each gives its two blocking paths, nanosleep (hrtimer_nanosleep) and read()
#   on a timerfd (timerfd_read);
# - events lost: bpfprof's summary.
#
# The peer: $PEER if set (an offcputime taking -p PID, -f for folded output
# and a duration: Debian's offcputime-bpfcc, or bcc's libbpf-tools build of
# it with -f), else offcputime-bpfcc if it runs on this kernel (it needs
# kprobes and the kernel's headers). Cells are medians with min-max.
#
# usage (root): [O=build] [ROUNDS=3] [PEER=path [PEER_NAME=words]] bash tests/bench/offcpu.sh [RESULTS]
# RESULTS defaults to tests/bench/offcpu.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
WAITS=$O/tests/workloads/waits
RESULTS=${1:-tests/bench/offcpu.md}
ROUNDS=${ROUNDS:-3}
LOOPS=${LOOPS:-200000}

. "$(dirname "$0")/lib.sh"
bench_start offcpu

[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
[ -x "$BPFPROF" ] && [ -x "$WAITS" ] || die "build first: make O=$O test-build"
command -v perf > /dev/null || die "needs perf for 'perf bench sched pipe' (make deps: linux-perf)"
# Without a peer there is nothing to compare: said, and no table (make bench goes on).
if [ -z "${PEER:-}" ]; then
	PEER=$(command -v offcputime-bpfcc) ||
		{ note "skipped: no peer (install bpfcc-tools, or give PEER=path of an offcputime)"; exit 0; }
	timeout 20 "$PEER" -f 1 > "$T/probe" 2>&1 ||
		{ note "skipped: $PEER does not run on this kernel ($(grep -m1 -i 'error\|fail\|cannot' "$T/probe")); give PEER=path of bcc's libbpf-tools offcputime (built with -f)"; exit 0; }
fi
[ -x "$PEER" ] || die "PEER=$PEER: not an executable"
bpf_stats_on

pipe_us() { perf bench sched pipe -l "$LOOPS" 2>&1 | awk '/usecs\/op/ { print $1 }'; }
# attached ERR: until bpfprof (run with -v, stderr to ERR) samples.
attached() { while ! grep -qs '^bpfprof: timing: attached' "$1"; do sleep 0.05; done; }

# alone WHO: perf bench sched pipe under one profiler (or none), its usecs/op.
alone() {
	local who=$1 p
	case $who in
	none) put "pipe.none" "$(pipe_us)"; return ;;
	bpfprof) "$BPFPROF" -v --off-cpu -d 60 -o "$T/alone.folded" 2> "$T/alone.err" & p=$!
		 attached "$T/alone.err" ;;
	peer) "$PEER" -f 60 > /dev/null 2>&1 & p=$!
	      sleep 3 ;;
	esac
	PIDS+=($p)
	put "pipe.$who" "$(pipe_us)"
	kill -INT $p
	wait $p 2> /dev/null
	[ $who = bpfprof ] && put "lost.alone" "$(sed -n 's/.*; lost \([0-9]*\) (.*/\1/p' "$T/alone.err")"
}

# both: the two at once on the same switches, their BPF time per run.
both() {
	local b p
	"$BPFPROF" -v --off-cpu -d 60 -o "$T/both.folded" 2> "$T/both.err" & b=$!
	"$PEER" -f 60 > /dev/null 2>&1 & p=$!
	PIDS+=($b $p)
	attached "$T/both.err"
	sleep 3
	(bpf_ns $b 26; echo "$BPF_NS" > "$T/b.ns") &
	(bpf_ns $p 26; echo "$BPF_NS" > "$T/p.ns") &
	pipe_us > /dev/null
	kill -INT $b $p
	wait
	put "ns.bpfprof" "$(cat "$T/b.ns")"
	put "ns.peer" "$(cat "$T/p.ns")"
	put "lost.both" "$(sed -n 's/.*; lost \([0-9]*\) (.*/\1/p' "$T/both.err")"
	note "  at once: BPF $(cat "$T/b.ns") and $(cat "$T/p.ns") ns a switch (bpfprof, peer)"
}

# agree: both at once on waits, for 5 s: each blocking path's microseconds.
path_us() { awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) t += n } END { print t + 0 }' "$1"; }
agree() {
	local w b p
	"$WAITS" 12 > /dev/null 2>&1 & w=$!
	PIDS+=($w)
	sleep 0.5
	"$BPFPROF" -v --off-cpu -p $w -d 5 -o "$T/agree.folded" 2> "$T/agree.err" & b=$!
	attached "$T/agree.err"
	"$PEER" -p $w -f 5 > "$T/peer.folded" 2> /dev/null & p=$!
	wait $b $p
	kill $w
	for k in hrtimer_nanosleep timerfd_read; do
		put "us.$k.bpfprof" "$(path_us "$T/agree.folded" "$k")"
		put "us.$k.peer" "$(path_us "$T/peer.folded" "$k")"
		put "agree.$k" "$(awk -v a="$(path_us "$T/agree.folded" "$k")" \
			-v b="$(path_us "$T/peer.folded" "$k")" 'BEGIN { if (b) printf "%.3f", a / b }')"
	done
	note "  waits: nanosleep $(path_us "$T/agree.folded" hrtimer_nanosleep) / $(path_us "$T/peer.folded" hrtimer_nanosleep) us," \
		"timerfd read $(path_us "$T/agree.folded" timerfd_read) / $(path_us "$T/peer.folded" timerfd_read) us (bpfprof / peer)"
}

note "$ROUNDS rounds against $PEER (some $((ROUNDS * 40 / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	if ((r % 2)); then order="peer bpfprof none"; else order="none bpfprof peer"; fi
	for who in $order; do alone $who; done
	both
	agree
done

slowdown() { awk -v a="$(median "pipe.$1")" -v n="$(median pipe.none)" 'BEGIN { if (a && n) printf "%.2f", a / n; else print "-" }'; }
{
	echo "Off-CPU profiles, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r): bpfprof --off-cpu"
	echo "against the peer ${PEER_NAME:-$PEER}, $ROUNDS rounds; median (min-max)."
	echo
	echo "| | bpfprof --off-cpu | peer | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| BPF time per sched_switch, both at once during perf bench sched pipe, ns | $(cell ns.bpfprof 0) | $(cell ns.peer 0) | $(ratio ns.bpfprof ns.peer) | <= 0.8 |"
	echo "| perf bench sched pipe, usecs/op (none: $(cell pipe.none 2)) | $(cell pipe.bpfprof 2) | $(cell pipe.peer 2) | | |"
	echo "| ... slowed, x none | $(slowdown bpfprof) | $(slowdown peer) | | bpfprof's <= the peer's |"
	echo "| waits (-p, 5 s, both at once): nanosleep path, us | $(cell us.hrtimer_nanosleep.bpfprof 0) | $(cell us.hrtimer_nanosleep.peer 0) | $(cell agree.hrtimer_nanosleep 3) | 0.95-1.05 |"
	echo "| waits: timerfd read path, us | $(cell us.timerfd_read.bpfprof 0) | $(cell us.timerfd_read.peer 0) | $(cell agree.timerfd_read 3) | 0.95-1.05 |"
	echo "| switches lost by bpfprof (alone, at once) | $(cell lost.alone 0), $(cell lost.both 0) | | | 0, or counted |"
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
