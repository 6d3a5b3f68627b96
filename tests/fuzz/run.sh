#!/bin/sh
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Runs each named fuzz target (built by make fuzz-build) for FUZZ_SECONDS
# on its corpus: what it found so far ($O/fuzz/corpus/NAME), the committed
# seeds and regressions, and the seeds from real files. A crash, a leak,
# undefined behaviour, a failed check, a hang (FUZZ_TIMEOUT s for one
# input) or more than FUZZ_RSS_MB of memory stops the target: the input is
# in $O/fuzz/crashes/NAME/. FUZZ_FLAGS are passed on to libFuzzer.
#
# usage: O=build FUZZ_SECONDS=60 tests/fuzz/run.sh NAME...
set -u
O=${O:-build}
secs=${FUZZ_SECONDS:-60}
f=$O/fuzz
failed=

for t in "$@"; do
	if [ ! -x "$f/fuzz_$t" ]; then
		echo "fuzz: no target '$t' (make fuzz-build)" >&2
		exit 2
	fi
	mkdir -p "$f/corpus/$t" "$f/crashes/$t"
	dirs=$f/corpus/$t
	for d in tests/fuzz/corpus/$t tests/fuzz/regressions/$t $f/seeds/$t; do
		if [ -d "$d" ]; then dirs="$dirs $d"; fi
	done
	# libFuzzer cuts inputs to 1 MiB: a larger seed (a runtime's library) would be a broken ELF.
	# shellcheck disable=SC2086
	max=$(find $dirs -type f -size +1024k -printf '%s\n' | sort -n | tail -n 1)
	before=$(ls "$f/crashes/$t" | wc -l)
	echo "fuzz: $t for $secs s"
	# shellcheck disable=SC2086
	"$f/fuzz_$t" -max_total_time="$secs" -timeout="${FUZZ_TIMEOUT:-25}" \
		-rss_limit_mb="${FUZZ_RSS_MB:-2048}" -artifact_prefix="$f/crashes/$t/" \
		-print_final_stats=1 ${max:+-max_len=$max} ${FUZZ_FLAGS:-} $dirs > "$f/$t.log" 2>&1
	rc=$?
	# -fork=N -ignore_crashes=1 (in FUZZ_FLAGS) goes on after a crash and exits 0.
	if [ "$(ls "$f/crashes/$t" | wc -l)" != "$before" ] && [ "$rc" = 0 ]; then rc=1; fi
	awk -v t="$t" '
		/^#[0-9]+/ {
			runs = $1; gsub(/[^0-9]/, "", runs)
			for (i = 1; i < NF; i++) {
				if ($i == "cov:") cov = $(i + 1)
				if ($i == "corp:") corp = $(i + 1)
				if ($i == "exec/s:" || $i == "exec/s") rate = $(i + 1)
				if ($i == "rss:") rss = $(i + 1)
			}
		}
		/^stat::number_of_executed_units/ { runs = $2 }
		/^stat::peak_rss_mb/ { rss = $2 "Mb" }
		/oom\/timeout\/crash:/ { for (i = 1; i < NF; i++) if ($i == "oom/timeout/crash:") bad = $(i + 1) }
		END {
			printf "fuzz: %s: %s runs, %s/s, coverage %s, corpus %s, rss %s", t, runs, rate, cov, corp, rss
			if (bad != "") printf ", oom/timeout/crash %s", bad
			printf "\n"
		}
	' "$f/$t.log"
	if [ "$rc" != 0 ]; then
		failed="$failed $t"
		grep -E 'ERROR|SUMMARY|fuzz: check failed|Test unit written' "$f/$t.log" | sort | uniq -c |
			sort -rn | head -n 10
		echo "fuzz: $t failed (exit $rc); the whole log is $f/$t.log"
	fi
done
if [ -n "$failed" ]; then
	echo "fuzz: crashes in:$failed; inputs in $f/crashes/" >&2
	exit 1
fi
echo "fuzz: no crashes"
