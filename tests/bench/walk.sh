#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Whole stacks by program, --unwind auto (the default) against dwarf and fp
# in the same run: the share of each program's samples whose stack reaches
# its outermost frame (_start, a goroutine's runtime.goexit), for C built
# -O2 without frame pointers, a qsort callback through Debian's libc, C++,
# Debian's Python 3.11, Go, a storm of 25 ms processes of one binary, and a
# storm of 25 ms processes each of a binary new to the profiler. Then the
# share of bpfprof's stacks that perf record --call-graph dwarf also saw
# (user frames, inline frames left out); the unwind tables' build time per
# file and for the whole machine at start, and their BPF map memory.
#
# usage (root): [O=build] [RUN_S=8] bash tests/bench/walk.sh [RESULTS]
# RESULTS defaults to tests/bench/walk.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
WL=$O/tests/workloads
RESULTS=${1:-tests/bench/walk.md}
RUN_S=${RUN_S:-8}
F=999
MODES="auto dwarf fp"

. "$(dirname "$0")/lib.sh"
bench_start walk

[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
for w in split-nofp qsort-nofp cxx-nofp burst-nofp; do
	[ -x "$WL/$w" ] || die "build first: make O=$O test-build"
done
[ -x "$O/tests/bench-tables" ] || die "build first: make O=$O $O/tests/bench-tables"
command -v perf > /dev/null && [ -x /usr/bin/python3.11 ] && command -v go > /dev/null ||
	die "needs perf, python3.11 and go (make deps)"
HOME=$T GOCACHE=$T/go go build -o "$T/goroutines" tests/bench/goroutines.go || die "cannot build the Go workload"

PY='
import sys, time
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.time() + float(sys.argv[1])
while time.time() < end:
    work(10000)'

# start NAME: one of the programs, for RUN_S + 3 seconds; sets PID.
start() {
	case $1 in
	python3.11) /usr/bin/python3.11 -c "$PY" $((RUN_S + 3)) & ;;
	goroutines) "$T/goroutines" $((RUN_S + 3)) & ;;
	*) "$WL/$1" $((RUN_S + 3)) > /dev/null & ;;
	esac
	PID=$!
	PIDS+=($PID)
	sleep 0.5
}

# share FILE PATTERN COMM: % of COMM's samples in FILE whose stack matches PATTERN.
share() {
	awk -v p="$2" -v c="^$3;" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
		if (s !~ c) next; t += n; if (s ~ p) w += n }
		END { if (t) printf "%.1f", 100 * w / t; else print "-" }' "$1"
}

# Whole stacks ----------------------------------------------------------------

declare -A WHOLE
# program: "command name" "pattern of a whole stack"
PROGRAMS=(split-nofp qsort-nofp cxx-nofp python3.11 goroutines)
declare -A PATTERN=(
	[split-nofp]='^split-nofp;_start;'
	[qsort-nofp]='^qsort-nofp;_start;'
	[cxx-nofp]='^cxx-nofp;_start;'
	[python3.11]='^python3.11;_start;.*;Py_BytesMain;'
	[goroutines]='^goroutines;runtime\.goexit'
)
for prog in "${PROGRAMS[@]}"; do
	for mode in $MODES; do
		start "$prog"
		"$BPFPROF" --unwind $mode -F $F -d "$RUN_S" -p $PID -o "$T/$prog.$mode.folded" 2> "$T/err" ||
			note "$prog, --unwind $mode: $(tail -1 "$T/err")"
		kill $PID 2>/dev/null; wait $PID 2>/dev/null
		WHOLE[$prog.$mode]=$(share "$T/$prog.$mode.folded" "${PATTERN[$prog]}" "$prog")
		note "$prog, --unwind $mode: ${WHOLE[$prog.$mode]}% whole"
	done
done

# storm DIR_OR_EMPTY MODE: 120 processes of 25 ms, two at a time, the whole
# machine sampled; with a directory, each process a copy of the binary
# made just before (a file new to the profiler).
storm() {
	local d=$1 mode=$2 i bin
	rm -f "$T/go"
	(while [ ! -e "$T/go" ]; do sleep 0.05; done
	 for i in $(seq 60); do
		for bin in a b; do
			if [ -n "$d" ]; then cp "$WL/burst-nofp" "$d/burst-nofp.$i$bin"; fi
		done
		if [ -n "$d" ]; then
			"$d/burst-nofp.${i}a" 25 & "$d/burst-nofp.${i}b" 25; wait
		else
			"$WL/burst-nofp" 25 & "$WL/burst-nofp" 25; wait
		fi
	 done) &
	local storm=$!
	"$BPFPROF" --unwind $mode -F $F -d 30 -o "$T/storm.folded" 2> "$T/err" &
	local prof=$!
	sleep 1.5
	touch "$T/go"
	wait $storm
	sleep 0.5
	kill -INT $prof; wait $prof
	# The copies' comm is their file name, cut to 15 characters.
	grep 'burst_work' "$T/storm.folded" > "$T/storm.work"
	share "$T/storm.work" '^burst-nofp[^;]*;_start;__libc_start_main;__libc_start_call_main;main;burst_work(;|$)' \
		'burst-nofp[^;]*'
}
mkdir -p "$T/new"
for mode in $MODES; do
	WHOLE[storm.$mode]=$(storm "" $mode)
	rm -f "$T/new"/*
	WHOLE[stormnew.$mode]=$(storm "$T/new" $mode)
	note "storms, --unwind $mode: one binary ${WHOLE[storm.$mode]}%, new binaries ${WHOLE[stormnew.$mode]}% of burst_work's samples whole"
done

# Against perf --call-graph dwarf ----------------------------------------------

# The two name some functions differently (perf libc's internal alias
# __GI___qsort_r, bpfprof qsort_r from its DWARF; .part.N clones; symbol
# versions): both are compared by the name with those marks taken off, and
# a frame neither can name (perf's [unknown], bpfprof's [file+0xOFF]) as "?".
NORMALIZE='function norm(f) { if (f ~ /^\[.*\]$/) return "?"; sub(/@.*$/, "", f); sub(/^__GI_/, "", f); sub(/^_+/, "", f); sub(/\.(part|constprop|isra|cold|lto_priv)(\.[0-9]+)*$/, "", f); return f }'

# perf_stacks FILE: perf script's samples as folded user stacks, root first,
# without inline frames (perf script --no-inline) or the kernel's.
perf_stacks() {
	perf script --no-inline -F comm,ip,sym,dso -i "$1" 2> /dev/null | awk "$NORMALIZE"'
		/^[^ \t]/ { if (s != "") c[s]++; comm = $1; s = ""; n = 0; next }
		/^[ \t]*$/ { next }
		$0 ~ /kernel\.kallsyms|\(\[unknown\]\)/ { next }
		{ f = $2; sub(/\+0x[0-9a-f]+$/, "", f); st[n++] = norm(f); s = comm; for (i = n - 1; i >= 0; i--) s = s ";" st[i] }
		END { if (s != "") c[s]++; for (k in c) print k, c[k] }'
}
# bpfprof_stacks FILE: the same view of a folded file.
bpfprof_stacks() {
	awk "$NORMALIZE"'{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";"); o = f[1]
		for (i = 2; i <= k; i++) if (f[i] !~ /_\[[ki]\]$/) o = o ";" norm(f[i])
		c[o] += n } END { for (x in c) print x, c[x] }' "$1"
}
declare -A SAME
for prog in split-nofp qsort-nofp python3.11; do
	start "$prog"
	perf record -q -e cpu-clock --call-graph dwarf -F $F -p $PID -o "$T/perf.data" -- sleep "$RUN_S" 2> /dev/null &
	local_perf=$!
	"$BPFPROF" -F $F -d "$RUN_S" -p $PID -o "$T/same.folded" 2> /dev/null
	wait $local_perf
	kill $PID 2>/dev/null; wait $PID 2>/dev/null
	perf_stacks "$T/perf.data" > "$T/perf.stacks"
	bpfprof_stacks "$T/same.folded" > "$T/bpfprof.stacks"
	# perf's own unwinding stops early on some stacks (at __libc_start_call_main,
	# an [unknown] frame above it): a stack of bpfprof's is the same as one of
	# perf's when, its root-side frames beyond perf's reach left out, it equals it.
	SAME[$prog]=$(awk 'NR == FNR { sub(/ [0-9]+$/, ""); seen[$0] = 1; next }
		{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n
		  k = split(s, f, ";"); hit = 0
		  for (i = 2; i <= k && !hit; i++) {
			tail = f[1]; for (j = i; j <= k; j++) tail = tail ";" f[j]
			if (tail in seen) hit = 1
		  }
		  if (hit) m += n }
		END { if (t) printf "%.1f", 100 * m / t; else print "-" }' "$T/perf.stacks" "$T/bpfprof.stacks")
	note "$prog: ${SAME[$prog]}% of bpfprof's samples on a stack perf saw"
done

# Tables -----------------------------------------------------------------------

"$O/tests/bench-tables" 21 /lib/x86_64-linux-gnu/libc.so.6 /lib64/ld-linux-x86-64.so.2 \
	/usr/lib/x86_64-linux-gnu/libstdc++.so.6 "$(readlink -f /usr/bin/python3.11)" > "$T/tables"
"$BPFPROF" -v -F 99 -d 1 -o /dev/null 2> "$T/start.err"
TABLES=$(sed -n 's/^bpfprof: unwind tables: //p' "$T/start.err")

{
	echo "Whole stacks by program, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r); $F Hz, $RUN_S s each:"
	echo "the share of the program's samples whose stack reaches its outermost frame."
	echo
	echo "| program | \`--unwind auto\` (default) | \`--unwind dwarf\` | \`--unwind fp\` |"
	echo "|---|---|---|---|"
	for prog in "${PROGRAMS[@]}"; do
		echo "| $prog | ${WHOLE[$prog.auto]}% | ${WHOLE[$prog.dwarf]}% | ${WHOLE[$prog.fp]}% |"
	done
	echo "| storm: 120 processes of 25 ms, one binary (burst_work's samples) | ${WHOLE[storm.auto]}% | ${WHOLE[storm.dwarf]}% | ${WHOLE[storm.fp]}% |"
	echo "| storm: 120 processes of 25 ms, each a binary new to the profiler | ${WHOLE[stormnew.auto]}% | ${WHOLE[stormnew.dwarf]}% | ${WHOLE[stormnew.fp]}% |"
	echo
	echo "The same stacks as \`perf record --call-graph dwarf\`, both on the same process at once (user"
	echo "frames, inline frames left out; a stack of bpfprof's counts when, cut where perf's unwinding"
	echo "stopped, perf saw it): split-nofp ${SAME[split-nofp]}%, qsort-nofp ${SAME[qsort-nofp]}%,"
	echo "python3.11 ${SAME[python3.11]}% of bpfprof's samples."
	echo
	echo "Unwind tables, built from each file's CFI:"
	echo
	cat "$T/tables"
	echo
	echo "The whole machine at start (\`bpfprof -v\`): $TABLES"
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
