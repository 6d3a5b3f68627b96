#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What PHP frames cost: bpfprof (PHP frames read, the default) and
# bpfprof --no-php (native frames only) attached at once to the whole
# machine while two busy PHP processes (20 PHP calls deep over a PHP
# loop of dependent arithmetic, and over hash('sha256'), a C function)
# keep both CPUs busy, at 999 Hz: so both programs run on the same
# samples. Per run of each: the BPF time per sample (the kernel's
# bpf_stats), the profiler's CPU (user + system) and the share of the PHP
# processes' samples that carry a PHP frame. Cells are medians of the
# rounds with min-max. The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=10] [DEPTH=20] bash tests/bench/php.sh [RESULTS]
# RESULTS defaults to tests/bench/php.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/php.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
DEPTH=${DEPTH:-20}	# PHP calls over the loop
F=999

. "$(dirname "$0")/lib.sh"
bench_start php

pair_ready
PHP=$(command -v php8.2) || die "needs php8.2-cli (make deps)"

# The workload: PHP calls DEPTH deep over a loop of dependent arithmetic
# (one process) or over hash('sha256') of 64 KiB (the other).
cat > "$T/busy.php" << 'EOF_PHP'
<?php
function loop_work() {
	$x = 1;
	for ($i = 0; $i < 20000; $i++)
		$x = ($x * 31 + 7) & 0xffffff;
	return $x;
}
function deep($k, $work) {
	if ($k == 0)
		return $work();
	$r = deep($k - 1, $work);
	return $r;
}
$data = str_repeat("x", 65536);
$work = $argv[3] == "loop" ? 'loop_work' : function () use ($data) { return hash('sha256', $data); };
$stop = hrtime(true) + (int)($argv[1] * 1e9);
$depth = (int)$argv[2];
while (hrtime(true) < $stop)
	deep($depth, $work);
EOF_PHP

# share FILE: % of the php processes' samples in FILE with a PHP frame (a "(busy.php:" one).
share() {
	awk '/^php/ { n = $NF; t += n; if (/\(busy\.php:[0-9]+\)/) p += n }
	     END { if (t) printf "%.1f", 100 * p / t }' "$1"
}

# both: the two profilers at once on the same samples.
both() {
	local d=$T/run w1 w2 rc
	rm -rf "$d" && mkdir -p "$d"
	"$PHP" "$T/busy.php" $((RUN_S + 4)) $DEPTH loop & w1=$!
	"$PHP" "$T/busy.php" $((RUN_S + 4)) $DEPTH digest & w2=$!
	PIDS+=($w1 $w2)
	sleep 1
	pair_run "$d" --no-php
	rc=$?
	kill $w1 $w2 2>/dev/null
	wait $w1 $w2 2>/dev/null
	[ $rc = 0 ] || return 1
	put "ns.php" "$(cat "$d/0.ns")"
	put "ns.native" "$(cat "$d/1.ns")"
	put "cpu.php" "$(cpu_of "$d/frames.time")"
	put "cpu.native" "$(cpu_of "$d/native.time")"
	put "share.php" "$(share "$d/frames.folded")"
	put "share.native" "$(share "$d/native.folded")"
	note "  BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample; CPU" \
		"$(tail -1 "$d/frames.time") and $(tail -1 "$d/native.time") s;" \
		"$(share "$d/frames.folded")% with PHP frames"
}

note "$ROUNDS rounds of $RUN_S s runs at $F Hz (some $((ROUNDS * (RUN_S + 3) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	both || note "no figures this round"
done

bpf_ratio=$(ratio ns.php ns.native)
{
	echo "PHP frames, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $($PHP -v | head -1 | cut -d' ' -f1-2):"
	echo "two busy PHP processes ($DEPTH PHP calls deep over a PHP loop of dependent arithmetic, and"
	echo "over hash('sha256')), the whole machine, $F Hz, $RUN_S s; bpfprof and bpfprof --no-php at"
	echo "once on the same samples; $ROUNDS rounds; median (min-max)."
	echo "Command: \`sudo ROUNDS=$ROUNDS RUN_S=$RUN_S DEPTH=$DEPTH O=$O bash tests/bench/php.sh\`."
	echo
	echo "| | bpfprof (PHP frames) | bpfprof --no-php | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| BPF time per sample, ns | $(cell ns.php 0) | $(cell ns.native 0) | $bpf_ratio | <= 2 |"
	echo "| profiler CPU, s (user + system) | $(cell cpu.php 2) | $(cell cpu.native 2) | $(ratio cpu.php cpu.native) | - |"
	echo "| PHP processes' samples with PHP frames, % | $(cell share.php 1) | $(cell share.native 1) | | - |"
	echo
	awk -v r="$bpf_ratio" 'BEGIN { if (r == "-") print "BPF time ratio: no figures.";
		else printf "BPF time ratio %s: %s the target of <= 2.\n", r, r <= 2 ? "meets" : "misses" }'
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
