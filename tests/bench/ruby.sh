#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What Ruby frames cost: bpfprof (Ruby frames read, the default) and
# bpfprof --no-ruby (native frames only) attached at once to the whole
# machine while two busy Ruby processes (20 Ruby calls deep over a Ruby
# loop of dependent arithmetic, and over OpenSSL's SHA-256, a C method)
# keep both CPUs busy, at 999 Hz: so both programs run on the same
# samples. Per run of each: the BPF time per sample (the kernel's
# bpf_stats), the profiler's CPU (user + system) and the share of the Ruby
# processes' samples that carry a Ruby frame. Cells are medians of the
# rounds with min-max. The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=10] [DEPTH=20] bash tests/bench/ruby.sh [RESULTS]
# RESULTS defaults to tests/bench/ruby.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/ruby.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
DEPTH=${DEPTH:-20}	# Ruby calls over the loop
F=999

. "$(dirname "$0")/lib.sh"
bench_start ruby

pair_ready
RUBY=$(command -v ruby3.1) || die "needs ruby3.1 (make deps)"

# The workload: Ruby calls DEPTH deep over a loop of dependent arithmetic
# (one process) or over OpenSSL's SHA-256 of 64 KiB (the other).
cat > "$T/busy.rb" << 'EOF_RB'
require "openssl"
def loop_work
  x = 1
  i = 0
  while i < 20_000
    x = (x * 31 + 7) & 0xffffff
    i += 1
  end
  x
end
def deep(k, &work)
  return work.call if k.zero?
  r = deep(k - 1, &work)
  r
end
data = "x" * 65_536
digest = OpenSSL::Digest.new("SHA256")
work = ARGV[2] == "loop" ? -> { loop_work } : -> { digest.digest(data) }
stop = Process.clock_gettime(Process::CLOCK_MONOTONIC) + Float(ARGV[0])
depth = Integer(ARGV[1])
deep(depth, &work) while Process.clock_gettime(Process::CLOCK_MONOTONIC) < stop
EOF_RB

# share FILE: % of the ruby processes' samples in FILE with a Ruby frame (a "(busy.rb:" one).
share() {
	awk '/^ruby/ { n = $NF; t += n; if (/\(busy\.rb:[0-9]+\)/) p += n }
	     END { if (t) printf "%.1f", 100 * p / t }' "$1"
}

# both: the two profilers at once on the same samples.
both() {
	local d=$T/run w1 w2 rc
	rm -rf "$d" && mkdir -p "$d"
	"$RUBY" "$T/busy.rb" $((RUN_S + 4)) $DEPTH loop & w1=$!
	"$RUBY" "$T/busy.rb" $((RUN_S + 4)) $DEPTH digest & w2=$!
	PIDS+=($w1 $w2)
	sleep 1
	pair_run "$d" --no-ruby
	rc=$?
	kill $w1 $w2 2>/dev/null
	wait $w1 $w2 2>/dev/null
	[ $rc = 0 ] || return 1
	put "ns.ruby" "$(cat "$d/0.ns")"
	put "ns.native" "$(cat "$d/1.ns")"
	put "cpu.ruby" "$(cpu_of "$d/frames.time")"
	put "cpu.native" "$(cpu_of "$d/native.time")"
	put "share.ruby" "$(share "$d/frames.folded")"
	put "share.native" "$(share "$d/native.folded")"
	note "  BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample; CPU" \
		"$(tail -1 "$d/frames.time") and $(tail -1 "$d/native.time") s;" \
		"$(share "$d/frames.folded")% with Ruby frames"
}

note "$ROUNDS rounds of $RUN_S s runs at $F Hz (some $((ROUNDS * (RUN_S + 3) / 60 + 1)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	note "round $((r + 1)) of $ROUNDS"
	both || note "no figures this round"
done

bpf_ratio=$(ratio ns.ruby ns.native)
{
	echo "Ruby frames, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $($RUBY -v | cut -d' ' -f1-2):"
	echo "two busy Ruby processes ($DEPTH Ruby calls deep over a Ruby loop of dependent arithmetic, and"
	echo "over OpenSSL's SHA-256), the whole machine, $F Hz, $RUN_S s; bpfprof and bpfprof --no-ruby at"
	echo "once on the same samples; $ROUNDS rounds; median (min-max)."
	echo "Command: \`sudo ROUNDS=$ROUNDS RUN_S=$RUN_S DEPTH=$DEPTH O=$O bash tests/bench/ruby.sh\`."
	echo
	echo "| | bpfprof (Ruby frames) | bpfprof --no-ruby | ratio | target |"
	echo "|---|---|---|---|---|"
	echo "| BPF time per sample, ns | $(cell ns.ruby 0) | $(cell ns.native 0) | $bpf_ratio | <= 2 |"
	echo "| profiler CPU, s (user + system) | $(cell cpu.ruby 2) | $(cell cpu.native 2) | $(ratio cpu.ruby cpu.native) | - |"
	echo "| Ruby processes' samples with Ruby frames, % | $(cell share.ruby 1) | $(cell share.native 1) | | - |"
	echo
	awk -v r="$bpf_ratio" 'BEGIN { if (r == "-") print "BPF time ratio: no figures.";
		else printf "BPF time ratio %s: %s the target of <= 2.\n", r, r <= 2 ? "meets" : "misses" }'
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
