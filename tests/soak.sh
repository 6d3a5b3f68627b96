#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make soak: bpfprof for SOAK_MINUTES (default 10) at 999 Hz over the whole
# machine while processes come and go without pause (short programs forking
# and exec'ing) beside a steady busy one. Each minute: bpfprof's RSS, the
# part of it that is the profile and the profile's distinct stacks (-vv
# says at each drain), the rest of RSS, open fds, its BPF maps (how many,
# their bytes, the entries in proc_gen).
#
# What exited processes leave in the profile is folded (one mapping per
# file, no pids) and files no process maps any more let their symbols go,
# so memory follows what is distinct, not how many processes ran: the
# profile grows only with its distinct stacks (fork, exec and exit take
# ever new kernel paths). Fails if the rest of RSS, the profile's bytes per
# distinct stack as each fold leaves it (its indexes apart: their capacity
# doubles), the fds other than files or the map bytes move more than
# 10 % from the first minute's, if a file is open twice, or if any sample
# is lost. Run it on an otherwise idle machine: others' new programs show.
#
# usage: O=build SOAK_MINUTES=10 tests/soak.sh   (root)
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
MINUTES=${SOAK_MINUTES:-10}
SECS=$((MINUTES * 60))

if [ "$(id -u)" != 0 ]; then
	echo "soak: bpfprof loads BPF programs; run it as root (sudo make soak)" >&2
	exit 1
fi

# The steady workload, and the churn until the run is over.
start_workload split $((SECS + 30))
start_churn $((SECS + 10))

$BPFPROF -vv -F 999 -d $((SECS + 5)) -o "$T/soak.folded" 2> "$T/soak.err" &
prof=$!
BG_PIDS+=($prof)

# entries MAP_ID: how many keys a map holds.
entries() { bpftool -j map dump id "$1" 2> /dev/null | grep -o '"key":' | wc -l; }

row() { printf '%-6s %9s %11s %8s %7s %9s %5s %5s %5s %5s %9s %9s\n' "$@"; }
row minute "RSS KiB" "profile KiB" stacks "B/stack" "rest KiB" fds files other maps "maps KiB" proc_gen |
	tee "$T/table"
for m in $(seq 1 "$MINUTES"); do
	sleep $((m * 60 - $(ps -o etimes= -p $prof)))
	kill -0 $prof 2> /dev/null || break
	rss=$(awk '/^VmRSS:/ { print $2 }' /proc/$prof/status)
	read -r profile nstacks < <(sed -n \
		's/^bpfprof: drain: profile \([0-9]*\) KiB (indexes [0-9]* KiB): [0-9]* samples, \([0-9]*\) stacks.*/\1 \2/p' \
		"$T/soak.err" | tail -1)
	# Bytes per stack as the last fold left it (before a fold, live processes' part
	# adds up to an eighth), indexes apart: their capacity doubles as they fill.
	per_stack=$(sed -n 's/^bpfprof: folded .* to \([0-9]*\) KiB (indexes \([0-9]*\) KiB), \([0-9]*\) stacks.*/\1 \2 \3/p' \
		"$T/soak.err" | tail -1 | awk '{ if ($3) printf "%d", ($1 - $2) * 1024 / $3; else print 0 }')
	fds=$(ls /proc/$prof/fd | wc -l)
	# Files by device and inode (one open twice is a leak), with their names.
	for fd in /proc/$prof/fd/*; do
		link=$(readlink "$fd") && [ "${link#/}" != "$link" ] && [ -f "$fd" ] &&
			echo "$(stat -L -c %d:%i "$fd") $link"
	done 2> /dev/null | sort > "$T/files.$m"
	files=$(wc -l < "$T/files.$m")
	ids=$(cat /proc/$prof/fdinfo/* 2> /dev/null | sed -n 's/^map_id:\s*//p' | sort -un)
	maps=0 bytes=0 gen=0
	for id in $ids; do
		line=$(bpftool map show id "$id" | tr '\n' ' ')
		maps=$((maps + 1))
		bytes=$((bytes + $(echo "$line" | sed -n 's/.*memlock \([0-9]*\)B.*/\1/p')))
		case $line in *" name proc_gen "*) gen=$(entries "$id") ;; esac
	done
	row "$m" "$rss" "$profile" "$nstacks" "${per_stack:-0}" \
		$((rss - profile)) "$fds" "$files" $((fds - files)) "$maps" $((bytes / 1024)) "$gen" |
		tee -a "$T/table"
done
wait $prof
rc=$?
grep -v '^libbpf: \|^bpfprof: drain: \|^bpfprof: timing: \|^bpfprof: folded \|let go\|mapped again' "$T/soak.err"
grep '^bpfprof: folded ' "$T/soak.err" | tail -1 | sed 's/^bpfprof: /soak: last: /'
echo "soak: the profile was folded $(grep -c '^bpfprof: folded ' "$T/soak.err") times; $(grep -c 'let go: no process' "$T/soak.err") files' symbols let go, $(grep -c 'mapped again' "$T/soak.err") read again"

fail=0
# flat COLUMN NAME: every minute's value within 10 % of the first minute's.
flat() {
	awk -v c="$1" -v name="$2" 'NR == 2 { base = $c } NR > 2 && base > 0 {
		d = ($c - base) / base; if (d > m) m = d; if (-d > m) m = -d }
		END { printf "soak: %s moved at most %.1f %% from the first minute'"'"'s %s\n", name, 100 * m, base
		      exit m > 0.10 }' "$T/table"
}
flat 6 "RSS but the profile (KiB)" || fail=1
flat 5 "profile bytes per distinct stack after a fold (indexes apart)" || fail=1
flat 9 "fds other than files" || fail=1
flat 11 "BPF map bytes (KiB)" || fail=1
last=$(ls "$T"/files.* | sort -t. -k2 -n | tail -1)
twice=$(for f in "$T"/files.*; do cut -d' ' -f1 "$f" | uniq -d; done | head -3)
if [ -n "$twice" ]; then
	echo "soak: a file open twice (device:inode): $twice"
	fail=1
fi
echo "soak: files open at the end and not after the first minute (programs that ran meanwhile):"
comm -13 <(cut -d' ' -f2- "$T/files.1" | sort) <(cut -d' ' -f2- "$last" | sort) | sed 's/^/soak:   /'

awk 'NR == 2 { r = $2; p = $3; s = $4 } END { printf "soak: RSS grew %d KiB in %d minutes, the profile %d KiB of it, with %d more distinct stacks\n", $2 - r, NR - 2, $3 - p, $4 - s }' "$T/table"
rows=$(($(wc -l < "$T/table") - 1))
if [ "$rows" != "$MINUTES" ]; then
	echo "soak: bpfprof ended before minute $((rows + 1)) (exit $rc)"
	fail=1
fi
lost=$(sed -n 's/^bpfprof: lost \([0-9]*\) samples.*/\1/p' "$T/soak.err")
total=$(folded_total "$T/soak.folded")
echo "soak: $MINUTES minutes, exit $rc, ${total:-no valid profile} samples in the profile, lost ${lost:-?}"
[ "$rc" = 0 ] && [ "$lost" = 0 ] && [ -n "$total" ] || fail=1
if [ $fail = 0 ]; then echo "soak: passed"; else echo "soak: FAILED"; fi
exit $fail
