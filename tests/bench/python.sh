#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What Python frames cost: bpfprof (Python frames read, the default) and
# bpfprof --no-python (native frames only) attached at once to the whole
# machine while two busy Python processes (a 20-deep Python call chain over
# a pure-Python loop, and a hashlib call) keep both CPUs busy, at 999 Hz:
# so both programs run on the same samples. Per run of each: the BPF time
# per sample (the kernel's bpf_stats), the profiler's CPU (user + system)
# and the share of the Python processes' samples that carry a Python
# frame. Rounds take turns over the interpreters present (Debian's
# python3.11, and the /root/.pyenv builds); cells are medians with min-max.
# The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=10] bash tests/bench/python.sh [RESULTS]
# RESULTS defaults to tests/bench/python.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/python.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
F=999

. "$(dirname "$0")/lib.sh"
bench_start python

pair_ready

PYTHONS=(/usr/bin/python3.11)
for v in 3.8.18 3.9.18 3.10.13 3.11.7 3.12.1 3.13.0; do
	p=/root/.pyenv/versions/$v/bin/python${v%.*}
	[ -x "$p" ] && PYTHONS+=("$p")
done
# Debian's other releases, in the roots the tests build once per machine (when they
# can): bullseye's 3.9, sid's 3.13 and 3.14, each run chrooted by a wrapper of its own.
declare -A LABEL
in_root() {
	local name=$1 bin=$2 root w
	shift 2
	root=$("$@" 2> /dev/null) && [ -x "$root$bin" ] || { note "no $name root: $bin left out"; return; }
	w=$T/roots/$name/$(basename "$bin")
	mkdir -p "$(dirname "$w")"
	printf '#!/bin/sh\nexec %s/tests/tools/in_root.sh -b %s %s %s "$@"\n' "$(pwd)" "$T" "$root" "$bin" > "$w"
	chmod +x "$w"
	PYTHONS+=("$w")
	LABEL[$w]="$name's $bin"
}
in_root bullseye /usr/bin/python3.9 tests/tools/debian_root.sh bullseye-root bullseye python3.9 python3.9-dbg
in_root sid /usr/bin/python3.13 tests/tools/newer_root.sh sid
in_root sid /usr/bin/python3.14 tests/tools/newer_root.sh sid
# key PYTHON: its figures' name; label PYTHON: how the table names it.
key() { tr -c 'A-Za-z0-9\n' _ <<< "$1"; }
label() { echo "${LABEL[$1]:-$1}"; }

# The workload: Python calls 20 deep over a pure-Python loop (one process),
# and over hashlib (the other): Python frames over native ones.
cat > "$T/busy.py" << 'EOF'
import hashlib, sys, time
def loop(n):
    s = 0
    for i in range(n):
        s = (s * 31 + i) & 0xffff
    return s
def deep(k, f):
    return deep(k - 1, f) if k else f()
buf = bytes(1 << 20)
work = (lambda: loop(20000)) if sys.argv[2] == "loop" else (lambda: hashlib.sha256(buf).digest())
end = time.monotonic() + float(sys.argv[1])
while time.monotonic() < end:
    deep(20, work)
EOF

# share FILE: % of the python processes' samples in FILE with a Python frame (a "(busy.py:" one).
share() {
	awk '/^python/ { n = $NF; t += n; if (/\(busy\.py:/) p += n }
	     END { if (t) printf "%.1f", 100 * p / t }' "$1"
}

# both PYTHON: the two profilers at once on the same samples.
both() {
	local py=$1 d=$T/run w1 w2 rc k
	rm -rf "$d" && mkdir -p "$d"
	"$py" "$T/busy.py" $((RUN_S + 4)) loop & w1=$!
	"$py" "$T/busy.py" $((RUN_S + 4)) hash & w2=$!
	PIDS+=($w1 $w2)
	sleep 1
	pair_run "$d" --no-python
	rc=$?
	kill $w1 $w2 2>/dev/null
	wait $w1 $w2 2>/dev/null
	[ $rc = 0 ] || return 1
	k=$(key "$py")
	put "ns.python" "$(cat "$d/0.ns")"
	put "ns.native" "$(cat "$d/1.ns")"
	put "ns.python.$k" "$(cat "$d/0.ns")"
	put "ns.native.$k" "$(cat "$d/1.ns")"
	put "cpu.python" "$(cpu_of "$d/frames.time")"
	put "cpu.native" "$(cpu_of "$d/native.time")"
	put "share.python" "$(share "$d/frames.folded")"
	note "  $(label "$py"): BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample; CPU" \
		"$(tail -1 "$d/frames.time") and $(tail -1 "$d/native.time") s;" \
		"$(share "$d/frames.folded")% with Python frames"
}

note "$ROUNDS rounds over ${#PYTHONS[@]} interpreters of $RUN_S s runs at $F Hz" \
	"(some $((ROUNDS * ${#PYTHONS[@]} * (RUN_S + 3) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	for py in "${PYTHONS[@]}"; do
		both "$py" || note "$py: no figures this round"
	done
done

{
	echo "Python frames, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r): two busy Python"
	echo "processes (20 Python calls deep over a pure-Python loop, and over hashlib), the whole machine,"
	echo "$F Hz, $RUN_S s; bpfprof and bpfprof --no-python at once on the same samples; over"
	echo "$(for py in "${PYTHONS[@]}"; do printf '%s, ' "$(label "$py")"; done)x $ROUNDS rounds; median (min-max)."
	echo
	echo "| | bpfprof (Python frames) | bpfprof --no-python | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| BPF time per sample, ns | $(cell ns.python 0) | $(cell ns.native 0) | $(ratio ns.python ns.native) | <= 2 |"
	echo "| profiler CPU, s (user + system) | $(cell cpu.python 2) | $(cell cpu.native 2) | $(ratio cpu.python cpu.native) | <= 1.5 |"
	echo "| Python processes' samples with Python frames, % | $(cell share.python 1) | - | | >= 90 |"
	echo
	echo "BPF time per sample by interpreter, ns: Python frames / native only = ratio"
	echo
	for py in "${PYTHONS[@]}"; do
		k=$(key "$py")
		echo "- $(label "$py"): $(cell ns.python.$k 0) / $(cell ns.native.$k 0) = $(ratio ns.python.$k ns.native.$k)"
	done
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
