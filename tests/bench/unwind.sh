#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# The cost of whole stacks without frame pointers: bpfprof --unwind dwarf
# against perf record --call-graph dwarf + perf script, on the same workload
# (split-nofp and qsort-nofp, -O2 -fomit-frame-pointer, one per CPU), at
# 999 Hz: profiler CPU (user + system of the profiler's processes), bytes
# written, samples and the share of them whose stack reaches main; the BPF
# time per sample with --unwind fp and dwarf (with -p, and of the whole
# machine while the workload runs); and --unwind fp on the same
# programs built with frame pointers, whose hot path still runs through libc
# (built without). Rounds take turns as in run.sh; cells are medians with
# min-max. Then, once each, the whole machine with fp and dwarf at 99, 999
# and 9999 Hz: CPU, peak RSS and samples lost, the figures behind the
# default. The markdown tables go to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=20] bash tests/bench/unwind.sh [RESULTS]
# RESULTS defaults to tests/bench/unwind.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
WL=$O/tests/workloads
RESULTS=${1:-tests/bench/unwind.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-20}
F=999
STACK_SIZE=16384	# bpfprof's default --stack-size

. "$(dirname "$0")/lib.sh"
bench_start unwind

[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
for w in split-nofp qsort-nofp split qsort; do
	[ -x "$WL/$w" ] || die "build first: make O=$O test-build"
done
[ -x "$BPFPROF" ] || die "build first: make O=$O"
command -v perf > /dev/null && [ -x /usr/bin/time ] || die "needs perf and time (make deps)"
bpf_stats_on

# Bytes one sample takes in bpfprof's ring buffer with --unwind dwarf: its
# record (struct dwarf_record up to the stack copy, then the copy) and the
# ring's 8-byte header.
RECORD_HEAD=$(printf '#include <stddef.h>\n#include <stdio.h>\n#include <linux/types.h>\n#include "bpfprof/sample.h"\nint main(void) { printf("%%zu\\n", offsetof(struct dwarf_record, stack)); return 0; }\n' |
	cc -Iinclude -x c -o "$T/head" - && "$T/head") || die "cannot compile against include/bpfprof/sample.h"
RING_BYTES=$((RECORD_HEAD + STACK_SIZE + 8))

# Processes --------------------------------------------------------------------

# start_workloads SUFFIX: split and qsort (SUFFIX -nofp or none), one per CPU; sets WPIDS "A,B".
start_workloads() {
	"$WL/split$1" $((RUN_S + 30)) > /dev/null &
	PIDS+=($!)
	WPIDS=$!
	"$WL/qsort$1" $((RUN_S + 30)) > /dev/null &
	PIDS+=($!)
	WPIDS=$WPIDS,$!
	sleep 0.5
}
stop_workloads() {
	local p
	for p in ${WPIDS//,/ }; do kill "$p" 2>/dev/null; wait "$p" 2>/dev/null; done
}

# cpu FILE: user + system seconds from /usr/bin/time -f '%U %S'.
cpu() { tail -1 "$1" | awk '{ print $1 + $2 }'; }

# Runs -------------------------------------------------------------------------

# perf_run: perf record --call-graph dwarf on both workloads, then perf script.
perf_run() {
	local d=$T/perf
	rm -rf "$d" && mkdir -p "$d"
	start_workloads -nofp
	/usr/bin/time -f '%U %S' -o "$d/time" perf record -q -e cpu-clock --call-graph dwarf -F $F \
		-p "$WPIDS" -o "$d/perf.data" -- sleep "$RUN_S" 2> "$d/err"
	local rc=$?
	stop_workloads
	[ $rc = 0 ] || { note "perf record failed: $(tail -2 "$d/err" | tr '\n' ' ')"; return 1; }
	# Writing the stacks out is part of perf's job, as writing the profile is bpfprof's.
	/usr/bin/time -f '%U %S' -o "$d/time2" perf script -i "$d/perf.data" > "$d/out" 2> "$d/err2" ||
		{ note "perf script failed: $(tail -2 "$d/err2" | tr '\n' ' ')"; return 1; }
	put cpu.perf "$(awk -v a="$(cpu "$d/time")" -v b="$(cpu "$d/time2")" 'BEGIN { print a + b }')"
	put data.perf "$(stat -c %s "$d/perf.data")"
	put out.perf "$(stat -c %s "$d/out")"
	# Samples are blank-line separated: "comm pid time: period cpu-clock:", then a frame a line.
	awk '/^[^ \t]/ { w = ($1 == "split-nofp" || $1 == "qsort-nofp"); n += w; next }
	     w && $2 ~ /^main\+0x/ { full++; w = 0 }
	     END { print n + 0, full + 0 }' "$d/out" > "$d/counts"
	read -r n full < "$d/counts"
	put samples.perf "$n"
	put full.perf "$(awk -v a="$full" -v b="$n" 'BEGIN { if (b) print 100 * a / b }')"
	note "  perf: $(cpu "$d/time") + $(cpu "$d/time2") s CPU, $n samples, $full reach main"
	rm -rf "$d"
}

# bpfprof_run KEY MODE SUFFIX [-a]: bpfprof --unwind MODE on the workloads
# built with SUFFIX; with -a the whole machine, for the BPF time alone (with
# -p the program also runs, briefly, for every sample of other tasks).
bpfprof_run() {
	local key=$1 mode=$2 d=$T/$1 target
	rm -rf "$d" && mkdir -p "$d"
	start_workloads "$3"
	target=(-p "$WPIDS")
	[ "${4:-}" = -a ] && target=()
	/usr/bin/time -f '%U %S' -o "$d/time" "$BPFPROF" --unwind "$mode" -F $F -d "$RUN_S" \
		"${target[@]}" -o "$d/out.folded" 2> "$d/err" &
	local tp=$! child=
	PIDS+=($tp)
	while [ -z "$child" ] && kill -0 $tp 2>/dev/null; do
		read -r child _ < "/proc/$tp/task/$tp/children" 2>/dev/null
		sleep 0.01
	done
	[ -n "$child" ] && bpf_ns "$child"
	wait $tp
	local rc=$?
	stop_workloads
	[ $rc = 0 ] || { note "bpfprof --unwind $mode failed: $(tail -2 "$d/err" | tr '\n' ' ')"; return 1; }
	if [ "${4:-}" = -a ]; then
		put "bpfns.$mode" "$BPF_NS"
		note "  bpfprof --unwind $mode, whole machine: BPF ${BPF_NS:-?} ns a sample"
		rm -rf "$d"
		return 0
	fi
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	       if (s !~ /^(split|qsort)(-nofp)?;/) next
	       t += n; if (s ~ /;main(;|$)/) full += n }
	     END { print t + 0, full + 0 }' "$d/out.folded" > "$d/counts"
	read -r n full < "$d/counts"
	put "cpu.$key" "$(cpu "$d/time")"
	put "out.$key" "$(stat -c %s "$d/out.folded")"
	put "samples.$key" "$n"
	put "full.$key" "$(awk -v a="$full" -v b="$n" 'BEGIN { if (b) print 100 * a / b }')"
	[ "$mode" = dwarf ] && put "ring.$key" $((n * RING_BYTES))
	put "bpfns-p.$key" "$BPF_NS"
	note "  bpfprof --unwind $mode$3: $(cpu "$d/time") s CPU, $n samples, $full reach main, BPF ${BPF_NS:-?} ns a run"
	rm -rf "$d"
}

# default_run HZ MODE: the whole machine at HZ with --unwind MODE while the
# workloads run: CPU, peak RSS, the share of samples lost.
default_run() {
	local d=$T/default lost samples
	rm -rf "$d" && mkdir -p "$d"
	start_workloads -nofp
	/usr/bin/time -f '%U %S %M' -o "$d/time" "$BPFPROF" --unwind "$2" -F "$1" -d "$RUN_S" \
		-o "$d/out.folded" 2> "$d/err"
	local rc=$?
	stop_workloads
	[ $rc = 0 ] || { note "bpfprof --unwind $2 -F $1 failed: $(tail -2 "$d/err" | tr '\n' ' ')"; return 1; }
	lost=$(sed -n 's/^bpfprof: lost \([0-9]*\) samples.*/\1/p' "$d/err")
	samples=$(sed -n 's/^bpfprof: .* CPUs\{0,1\}: \([0-9]*\) samples.*/\1/p' "$d/err")
	put "dcpu.$2.$1" "$(cpu "$d/time")"
	put "drss.$2.$1" "$(tail -1 "$d/time" | awk '{ print $3 / 1024 }')"
	put "dlost.$2.$1" "$(awk -v l="$lost" -v s="$samples" 'BEGIN { if (s) print 100 * l / s }')"
	note "  whole machine, --unwind $2 at $1 Hz: $(cpu "$d/time") s CPU, $lost of $samples samples lost"
	rm -rf "$d"
}

# both_run: --unwind auto and --unwind fp on the whole machine at once, so
# both programs run on the same samples: the BPF time per sample of each.
both_run() {
	local d=$T/both m
	rm -rf "$d" && mkdir -p "$d"
	start_workloads -nofp
	for m in auto fp; do
		"$BPFPROF" --unwind $m -F $F -d "$RUN_S" -o "$d/$m.folded" 2> "$d/$m.err" &
		echo $! > "$d/$m.pid"
		PIDS+=($!)
	done
	for m in auto fp; do
		(BPF_NS=; bpf_ns "$(cat "$d/$m.pid")"; echo "$BPF_NS" > "$d/$m.ns") &
	done
	wait_for_pids "$(cat "$d/auto.pid")" "$(cat "$d/fp.pid")"
	sleep 1
	stop_workloads
	for m in auto fp; do
		put "bpfboth.$m" "$(cat "$d/$m.ns" 2>/dev/null)"
	done
	note "  auto and fp at once, whole machine: BPF $(cat "$d/auto.ns" 2>/dev/null) and $(cat "$d/fp.ns" 2>/dev/null) ns a sample"
	rm -rf "$d"
}

run() {
	case $1 in
	perf) perf_run ;;
	auto) bpfprof_run auto auto -nofp ;;
	bpf-both) both_run ;;
	dwarf) bpfprof_run dwarf dwarf -nofp ;;
	fp) bpfprof_run fp fp -nofp ;;
	fp-fpbuild) bpfprof_run fp-fpbuild fp "" ;;
	bpf-dwarf) bpfprof_run bpf-dwarf dwarf -nofp -a ;;
	bpf-fp) bpfprof_run bpf-fp fp -nofp -a ;;
	esac
}

note "$ROUNDS rounds of $RUN_S s runs at $F Hz (some $(((ROUNDS + 1) * 6 * (RUN_S + 8) / 60 + 1)) minutes)"
names=(perf auto dwarf fp fp-fpbuild bpf-dwarf bpf-fp bpf-both)
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	for ((i = 0; i < ${#names[@]}; i++)); do
		name=${names[$(((r + i) % ${#names[@]}))]}
		# perf 6.1 has died in its build-id pass on this machine: one more try.
		run "$name" || run "$name" || note "$name: no figures this round"
	done
done
note "the default: the whole machine with auto, fp and dwarf at 99, 999 and 9999 Hz"
for hz in 99 999 9999; do
	for mode in auto fp dwarf; do
		default_run $hz $mode || note "--unwind $mode at $hz Hz: no figures"
	done
done

{
	echo "Whole stacks without frame pointers, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r):"
	echo "split-nofp and qsort-nofp (one per CPU), $F Hz, $RUN_S s, $ROUNDS rounds; median (min-max)."
	echo
	echo "| | perf record --call-graph dwarf + perf script | bpfprof --unwind auto (default) | auto / fp | bpfprof --unwind dwarf | dwarf / perf | bpfprof --unwind fp |"
	echo "|---|---|---|---|---|---|---|"
	echo "| profiler CPU, s (user + system) | $(cell cpu.perf 2) | $(cell cpu.auto 2) | $(ratio cpu.auto cpu.fp) | $(cell cpu.dwarf 2) | $(ratio cpu.dwarf cpu.perf) | $(cell cpu.fp 2) |"
	echo "| samples of the workload | $(cell samples.perf 0) | $(cell samples.auto 0) | $(ratio samples.auto samples.fp) | $(cell samples.dwarf 0) | $(ratio samples.dwarf samples.perf) | $(cell samples.fp 0) |"
	echo "| stacks that reach main, % | $(cell full.perf 1) | $(cell full.auto 1) | | $(cell full.dwarf 1) | $(ratio full.dwarf full.perf) | $(cell full.fp 1) |"
	echo "| written, MB | perf.data $(cell data.perf 1 1e-6), script output $(cell out.perf 1 1e-6) | $(cell out.auto 3 1e-6) | | $(cell out.dwarf 3 1e-6) | $(ratio out.dwarf data.perf) of perf.data | $(cell out.fp 3 1e-6) |"
	echo "| kernel to profiler, MB | perf.data $(cell data.perf 1 1e-6) | - (counted in the kernel) | | ring buffer $(cell ring.dwarf 1 1e-6) ($RING_BYTES B a sample) | $(ratio ring.dwarf data.perf) | - (counted in the kernel) |"
	echo "| BPF time per run, ns, with -p (a run for another task's sample ends at the filter) | - | $(cell bpfns-p.auto 0) | $(ratio bpfns-p.auto bpfns-p.fp) | $(cell bpfns-p.dwarf 0) | | $(cell bpfns-p.fp 0) |"
	echo "| BPF time per sample, ns, whole machine, auto and fp at once on the same samples | - | $(cell bpfboth.auto 0) | $(ratio bpfboth.auto bpfboth.fp) | | | $(cell bpfboth.fp 0) |"
	echo "| BPF time per sample, ns, whole machine (other tasks' stacks too) | - | | | $(cell bpfns.dwarf 0) | | $(cell bpfns.fp 0) |"
	echo
	echo "\`--unwind fp\` on the same programs built with frame pointers (split, qsort; libc's qsort still has none):"
	echo "$(cell full.fp-fpbuild 1)% of $(cell samples.fp-fpbuild 0) samples reach main, $(cell cpu.fp-fpbuild 2) s CPU."
	echo
	echo "The default: the whole machine for $RUN_S s while the same programs run, once each:"
	echo
	echo "| | profiler CPU, s, at 99 / 999 / 9999 Hz | peak RSS, MB | samples lost, % |"
	echo "|---|---|---|---|"
	for mode in auto fp dwarf; do
		echo "| \`--unwind $mode\` | $(cell dcpu.$mode.99 2) / $(cell dcpu.$mode.999 2) / $(cell dcpu.$mode.9999 2)" \
			"| $(cell drss.$mode.99 0) / $(cell drss.$mode.999 0) / $(cell drss.$mode.9999 0)" \
			"| $(cell dlost.$mode.99 1) / $(cell dlost.$mode.999 1) / $(cell dlost.$mode.9999 1) |"
	done
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
