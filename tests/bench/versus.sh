#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A change against the build before it: this build's bpfprof and PEER (another
# build's, e.g. of the commit before a change, built with `make O=/tmp/old`)
# attached at once (-p) to a busy Python, Ruby and LuaJIT process (their
# frames read by both), at 999 Hz: so both programs run on
# the same samples. Per round: the BPF time per sample of each (the kernel's
# bpf_stats), their CPU, their samples with runtime frames; then each one's
# start ("attached N ms after exec", -v) measured one after the other: with
# -p of the three (each runtime's walk loaded at the start), and
# system-wide once they are gone (no runtime's process to load a walk for). Cells
# are medians of the rounds with min-max. The table goes to stdout and RESULTS.
#
# usage (root): PEER=path/to/bpfprof [O=build] [ROUNDS=3] [RUN_S=10] bash tests/bench/versus.sh [RESULTS]
# RESULTS defaults to tests/bench/versus.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/versus.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
F=999

. "$(dirname "$0")/lib.sh"
bench_start versus

pair_ready
[ -x "${PEER:-}" ] || die "PEER=path/to/another/bpfprof: the build to compare with"
PY=/usr/bin/python3.11
RUBY=$(command -v ruby3.1) || die "needs ruby3.1 (make deps)"
LUAJIT=$(command -v luajit) || die "needs luajit (make deps)"
[ -x $PY ] || die "needs python3.11 (make deps)"
WL=tests/workloads

# frames FILE: % of FILE's samples of the three workloads with a frame of their own code.
frames() {
	awk '/^(python3|ruby|luajit)/ { n = $NF; t += n; if (/\((py_split\.py|lua_split\.lua|busy\.rb):[0-9]+\)/) p += n }
	     END { if (t) printf "%.1f", 100 * p / t }' "$1"
}
cat > "$T/busy.rb" << 'EOF_RB'
def work; x = 0; 20_000.times { |i| x = (x * 31 + i) & 0xffffff }; x; end
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
work while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
EOF_RB

# round: the two at once on the same samples, then each one's start.
round() {
	local d=$T/run pids=() w=() m b i
	rm -rf "$d" && mkdir -p "$d"
	$PY $WL/py_split.py $((RUN_S + 8)) > /dev/null & w+=($!)
	"$RUBY" "$T/busy.rb" $((RUN_S + 8)) & w+=($!)
	"$LUAJIT" $WL/lua_split.lua $((RUN_S + 8)) > /dev/null & w+=($!)
	PIDS+=("${w[@]}")
	sleep 1
	for m in this peer; do
		b=$BPFPROF
		[ $m = peer ] && b=$PEER
		/usr/bin/time -f '%U %S' -o "$d/$m.time" "$b" -F $F -d "$RUN_S" \
			-p "$(IFS=,; echo "${w[*]}")" -o "$d/$m.folded" 2> "$d/$m.err" &
		pids+=($!)
	done
	sleep 0.2
	for i in 0 1; do
		(bpf_ns "$(pgrep -P "${pids[$i]}" bpfprof)"; echo "$BPF_NS" > "$d/$i.ns") &
	done
	wait_for_pids "${pids[@]}"
	wait "${pids[@]}"
	for i in 1 2 3; do
		for m in this peer; do
			b=$BPFPROF
			[ $m = peer ] && b=$PEER
			put "start_rt.$m" "$("$b" -v -F 99 -d 0.2 -p "$(IFS=,; echo "${w[*]}")" \
				-o "$d/s.folded" 2>&1 | sed -n 's/^bpfprof: timing: attached \([0-9]*\) ms.*/\1/p')"
		done
	done
	kill "${w[@]}" 2> /dev/null
	wait "${w[@]}" 2> /dev/null
	for m in this peer; do
		[ -s "$d/$m.folded" ] || { note "$m: no profile"; cat "$d/$m.err" >&2; return 1; }
	done
	put ns.this "$(cat "$d/0.ns")"
	put ns.peer "$(cat "$d/1.ns")"
	put cpu.this "$(cpu_of "$d/this.time")"
	put cpu.peer "$(cpu_of "$d/peer.time")"
	put frames.this "$(frames "$d/this.folded")"
	put frames.peer "$(frames "$d/peer.folded")"
	for i in 1 2 3; do
		for m in this peer; do
			b=$BPFPROF
			[ $m = peer ] && b=$PEER
			put "start.$m" "$("$b" -v -F 99 -d 0.2 -o "$d/s.folded" 2>&1 |
				sed -n 's/^bpfprof: timing: attached \([0-9]*\) ms.*/\1/p')"
		done
	done
	note "  BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample"
}

note "$ROUNDS rounds of $RUN_S s runs at $F Hz (some $((ROUNDS * (RUN_S + 12) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	round || note "no figures this round"
done

{
	echo "This build against PEER, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r): a busy"
	echo "python3.11, ruby3.1 and luajit process (their frames read by both), -p of the three, $F Hz,"
	echo "$RUN_S s, the two at once on the same samples; then each one's start, 3 times a round, with"
	echo "-p of the three and system-wide once they are gone;"
	echo "$ROUNDS rounds; median (min-max)."
	echo "Command: \`sudo PEER=$PEER ROUNDS=$ROUNDS RUN_S=$RUN_S O=$O bash tests/bench/versus.sh\`."
	echo
	echo "| | this build | PEER | ratio |"
	echo "|---|---|---|---|"
	echo "| BPF time per sample, ns | $(cell ns.this 0) | $(cell ns.peer 0) | $(ratio ns.this ns.peer) |"
	echo "| profiler CPU, s (user + system) | $(cell cpu.this 2) | $(cell cpu.peer 2) | $(ratio cpu.this cpu.peer) |"
	echo "| attached after exec, -p of the three, ms | $(cell start_rt.this 0) | $(cell start_rt.peer 0) | $(ratio start_rt.this start_rt.peer) |"
	echo "| attached after exec, system-wide, no runtime's process, ms | $(cell start.this 0) | $(cell start.peer 0) | $(ratio start.this start.peer) |"
	echo "| the runtimes' samples with their frames, % | $(cell frames.this 1) | $(cell frames.peer 1) | |"
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
