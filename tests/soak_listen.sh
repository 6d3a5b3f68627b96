#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# make soak, the agent's part: bpfprof --listen for SOAK_MINUTES (default
# 10) at 99 Hz over the whole machine while processes come and go without
# pause, scraped as an agent is: /metrics every 10 s, a 10-second profile
# every minute (read by go tool pprof). Each minute: RSS (lowest and
# highest of a reading every 5 s), the profile's KiB (-vv says at each
# drain), CPU seconds used. Before it, a 30 s one-shot run under the same
# churn gives the CPU a second of sampling costs.
#
# Fails if, from the fourth minute on (the first ones have the start's
# transients), the highest of the minutes' lowest RSS is over the lowest
# by more than 10 %, if the CPU per second of sampling is over the
# one-shot run's (by more than 10 %, the noise of a 30 s measure), if a
# profile request is not answered 200 and read by pprof, or if a sample
# is lost.
#
# usage: O=build SOAK_MINUTES=10 tests/soak_listen.sh   (root)
set -u
cd "$(dirname "$0")/.."
. tests/lib.sh
export HOME=$T	# go's cache
MINUTES=${SOAK_MINUTES:-10}
SECS=$((MINUTES * 60))

if [ "$(id -u)" != 0 ]; then
	echo "soak: bpfprof loads BPF programs; run it as root (sudo make soak)" >&2
	exit 1
fi

start_workload split $((SECS + 90))
start_churn $((SECS + 60))

# cpu_s PID: user + system seconds the process has used.
cpu_s() { awk -v hz="$(getconf CLK_TCK)" '{ sub(/.*\) /, ""); print ($12 + $13) / hz }' "/proc/$1/stat"; }

# The one-shot reference: CPU per second of sampling over 30 s, its start (loading) left out.
$BPFPROF -v -F 99 -d 31 -o "$T/one.folded" 2> "$T/one.err" &
one=$!
wait_attached "$T/one.err" $one
c0=$(cpu_s $one)
sleep 30
c1=$(cpu_s $one)
wait $one
one_rate=$(awk -v a="$c0" -v b="$c1" 'BEGIN { printf "%.5f", (b - a) / 30 }')
echo "soak: a 30 s one-shot run at 99 Hz: $one_rate CPU s per second of sampling"

$BPFPROF -vv -F 99 -d $((SECS + 5)) --listen 127.0.0.1:0 2> "$T/soak.err" &
prof=$!
BG_PIDS+=($prof)
wait_attached "$T/soak.err" $prof
url=$(sed -n 's|^bpfprof: serving on \(http://[^ ]*\)/ .*|\1|p' "$T/soak.err")
start_cpu=$(cpu_s $prof)
start_t=$(date +%s.%N)

# The scraper: /metrics every 10 s, a 10-second profile each minute, read by pprof.
# None whose window would outlast the run: bpfprof answers those 503, stopping.
scrape() {
	local i=0 code end=$(($(date +%s) + SECS + 5))
	while kill -0 $prof 2> /dev/null; do
		curl -s -o /dev/null "$url/metrics"
		if [ $((i % 6)) = 5 ] && [ $(($(date +%s) + 12)) -lt $end ]; then
			code=$(curl -s -o "$T/p.pb.gz" -w '%{http_code}' "$url/debug/pprof/profile?seconds=10")
			if [ "$code" = 200 ] && go tool pprof -raw "$T/p.pb.gz" > /dev/null 2>&1; then
				echo ok >> "$T/profiles"
			else
				echo "$code" >> "$T/profiles"
			fi
		else
			sleep 10
		fi
		i=$((i + 1))
	done
}
scrape & BG_PIDS+=($!)

# RSS every 5 s: each minute's lowest (what stays resident) and highest.
rss_now() { awk '/^VmRSS:/ { print $2 }' /proc/$prof/status 2> /dev/null; }
row() { printf '%-6s %9s %9s %11s %8s %10s\n' "$@"; }
row minute "RSS KiB" "peak KiB" "profile KiB" stacks "CPU s" | tee "$T/table"
for m in $(seq 1 "$MINUTES"); do
	rss= peak=
	while [ "$(ps -o etimes= -p $prof 2> /dev/null || echo $((m * 60)))" -lt $((m * 60)) ]; do
		r=$(rss_now)
		[ -n "$r" ] || break
		[ -z "$rss" ] || [ "$r" -lt "$rss" ] && rss=$r
		[ -z "$peak" ] || [ "$r" -gt "$peak" ] && peak=$r
		sleep 5
	done
	kill -0 $prof 2> /dev/null || break
	read -r profile nstacks < <(sed -n \
		's/^bpfprof: drain: profile \([0-9]*\) KiB (indexes [0-9]* KiB): [0-9]* samples, \([0-9]*\) stacks.*/\1 \2/p' \
		"$T/soak.err" | tail -1)
	row "$m" "${rss:-$(rss_now)}" "${peak:-$(rss_now)}" "$profile" "$nstacks" "$(cpu_s $prof)" | tee -a "$T/table"
done
end_cpu=$(cpu_s $prof)
end_t=$(date +%s.%N)
wait $prof
rc=$?
grep -v '^libbpf: \|^bpfprof: drain: \|^bpfprof: timing: \|^bpfprof: folded \|let go\|mapped again\|^bpfprof: http' "$T/soak.err" | head -20

fail=0
# The first minutes hold the start's transients: every process's files read, and the debug
# units their stacks touch indexed, libc's 9 MB of debug sections read whole while many come
# at once. From the fourth minute on (the second in a run under 6 minutes), the minutes'
# lowest RSS stay within 10 % of each other, the highest over the lowest; the peaks (a
# profile's window answered, a unit read) are shown, not checked.
awk -v b="$([ "$MINUTES" -ge 6 ] && echo 5 || echo 3)" 'NR >= b && $2 > 0 {
	if (!lo || $2 < lo) lo = $2; if ($2 > hi) hi = $2 }
     END { printf "soak: from minute %d, the lowest RSS of each minute %d-%d KiB (%.1f %% apart)\n",
	   b - 1, lo, hi, lo ? 100 * (hi - lo) / lo : 0; exit !(lo > 0 && hi <= 1.10 * lo) }' \
	"$T/table" || fail=1
rate=$(awk -v a="$start_cpu" -v b="$end_cpu" -v t0="$start_t" -v t1="$end_t" 'BEGIN { printf "%.5f", (b - a) / (t1 - t0) }')
echo "soak: --listen used $rate CPU s per second of sampling, the one-shot run $one_rate ($(ratio "$rate" "$one_rate")x)"
within "$(ratio "$rate" "$one_rate")" 0 1.10 || fail=1
answered=$(grep -c '^ok$' "$T/profiles" 2> /dev/null)
other=$(grep -vc '^ok$' "$T/profiles" 2> /dev/null)
echo "soak: ${answered:-0} profiles answered and read by go tool pprof, ${other:-0} not"
[ "${answered:-0}" -ge $((MINUTES - 1)) ] && [ "${other:-0}" = 0 ] || fail=1
rows=$(($(wc -l < "$T/table") - 1))
[ "$rows" = "$MINUTES" ] || { echo "soak: bpfprof ended before minute $((rows + 1)) (exit $rc)"; fail=1; }
lost=$(sed -n 's/^bpfprof: lost \([0-9]*\) samples.*/\1/p' "$T/soak.err")
echo "soak: $MINUTES minutes of --listen, exit $rc, lost ${lost:-?}"
[ "$rc" = 0 ] && [ "$lost" = 0 ] || fail=1
if [ $fail = 0 ]; then echo "soak: passed"; else echo "soak: FAILED"; fi
exit $fail
