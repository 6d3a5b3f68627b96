# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# --push to a stand-in for Pyroscope's ingest API (tests/pyroscope_receiver.py,
# which checks each request against Pyroscope's documented parameters):
# every interval arrives exactly once and they join, the samples of all
# pushes add up to the run's, across an outage of the receiver (some 5 s) and
# a spell of 503s; a push kept but not answered is sent again and the
# summary counts it as perhaps twice; what cannot be sent by the stop is said.
. tests/lib.sh
export HOME=$T	# go's cache

port=$(( (RANDOM % 20000) + 30000 ))
receive() {
	python3 tests/pyroscope_receiver.py $port "$1" 2> "$1.stderr" &
	RECEIVER=$!
	BG_PIDS+=($RECEIVER)
	for i in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return
		sleep 0.1
	done
}
samples_of() {
	go tool pprof -raw "$1" 2> "$1.err" |
		awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+:/ { n += $1 } END { print n + 0 }'
}
# pushed LOG: the summary's figures, "SENT AGAIN TWICE DROPPED UNSENT".
pushed() {
	sed -n 's/^bpfprof: pushed \([0-9]*\) intervals to .* (\([0-9]*\) attempts again, \([0-9]*\) perhaps twice); refused [0-9]*, dropped \([0-9]*\) .*, not sent at the stop \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$1"
}
# same_twice DIR: every interval that came twice came the same both times.
same_twice() {
	local f
	for f in $(ls "$1" | grep '\.2\.pb\.gz$'); do
		cmp -s "$1/$f" "$1/${f%.2.pb.gz}.1.pb.gz" || return 1
	done
}
# check_arrivals DIR WHAT [TWICE]: each interval once (TWICE of them, those the summary
# said perhaps twice, may come again: a .2 the same as its .1), joined; sets SUM (samples,
# of the first of each) and N (intervals).
check_arrivals() {
	local d=$1 prev= gaps= bad= f twice=${3:-0} dups
	SUM=0 N=0
	check "$2: no request refused by the receiver (but the 503s it was told to answer)" \
		'! grep -qv "^503 unavailable (fail503)" "$d/refused" 2> /dev/null'
	grep -v "^503 unavailable (fail503)" "$d/refused" > "$d/refused.other" 2> /dev/null
	diag "$d/refused.other" 3
	dups=$(ls "$d" | grep -c '\.[2-9]\.pb\.gz$')
	check "$2: $dups intervals twice, at most the $twice the summary said perhaps twice, each the same both times" \
		'[ "$dups" -le "$twice" ] && ! ls "$d" | grep -q "\.[3-9]\.pb\.gz$" && same_twice "$d"'
	for f in $(ls "$d" | grep '\.1\.pb\.gz$' | sort -t- -k1,1n); do
		from=${f%%-*}
		until=${f#*-}
		until=${until%%.*}
		[ -n "$prev" ] && [ "$from" != "$prev" ] && gaps="$gaps $prev..$from"
		prev=$until
		SUM=$((SUM + $(samples_of "$d/$f")))
		[ -s "$d/$f.err" ] && bad="$bad $f"
		N=$((N + 1))
	done
	check "$2: $N intervals, each one's until the next one's from${gaps:+ (gaps:$gaps)}" \
		'[ "$N" -gt 0 ] && [ -z "$gaps" ]'
	check "$2: go tool pprof reads every push silently${bad:+ (not:$bad)}" '[ -z "$bad" ]'
}

start_workload split 30
sleep 0.3

# wait_for FILE PATTERN: up to 60 s for a line matching PATTERN in FILE.
wait_for() {
	local i
	for i in $(seq 600); do
		grep -qs "$2" "$1" && return
		sleep 0.1
	done
}

# 1. Pushes every second; the receiver gone after the first arrived, for some 5 s from
# when bpfprof says it cannot send (on a loaded machine, or under the sanitizers, drains
# and so pushes come late: the steps wait for what bpfprof did, not for the clock).
mkdir "$T/r1"
receive "$T/r1"
$BPFPROF -v -F 999 --push "http://127.0.0.1:$port" --push-interval 1 \
	--app-name 'testapp{env=ci}' -o "$T/whole.folded" 2> "$T/p1.err" &
prof=$!
wait_attached "$T/p1.err" $prof
wait_for "$T/r1/log" .
kill $RECEIVER
wait $RECEIVER 2> /dev/null
wait_for "$T/p1.err" "^bpfprof: warning: --push: cannot send to"
sleep 4
receive "$T/r1"
wait_for "$T/p1.err" "answers again"
sleep 1.5
kill -INT $prof
wait $prof
rc=$?
check "--push until SIGINT: exit $rc" '[ $rc = 0 ]'
# A push the receiver kept as it was killed, unanswered, goes again: the summary says so.
read -r sent again twice dropped unsent <<< "$(pushed "$T/p1.err")"
check_arrivals "$T/r1" "outage" "$twice"
took=$(folded_total "$T/whole.folded")
check "outage: the pushes hold every sample of the run, once: $SUM = the run's $took" '[ "$SUM" = "$took" ]'
check "outage: the summary says $sent pushed ($N arrived), $again attempts again, $twice perhaps twice, $dropped dropped, $unsent unsent" \
	'[ "$sent" = "$N" ] && [ "${again:-0}" -gt 0 ] && [ "$dropped" = 0 ] && [ "$unsent" = 0 ]'
check "outage: it said the server went and came back" \
	'grep -q "^bpfprof: warning: --push: cannot send to" "$T/p1.err" && grep -q "answers again" "$T/p1.err"'
check "the receiver saw Pyroscope's parameters: the name as given, sampleRate 999" \
	'[ "$(cut -d" " -f3,4 "$T/r1/log" | sort -u)" = "testapp{env=ci} 999" ]'

# 2. The receiver answers 503 for 2 s: the intervals wait, then go, in order. Then it
# keeps one push and closes the connection unanswered: that one goes again, and the
# summary says one perhaps twice.
mkdir "$T/r2"
kill $RECEIVER
wait $RECEIVER 2> /dev/null
receive "$T/r2"
$BPFPROF -v -F 999 -d 5 --push "http://127.0.0.1:$port" --push-interval 1 -o "$T/w2.folded" 2> "$T/p2.err" &
prof=$!
wait_attached "$T/p2.err" $prof
sleep 1
touch "$T/r2/fail503"
sleep 2
rm "$T/r2/fail503"
touch "$T/r2/noanswer"
wait $prof
read -r sent again twice dropped unsent <<< "$(pushed "$T/p2.err")"
check "503s, then one kept unanswered: the summary says $sent pushed, $twice perhaps twice, $(ls "$T/r2" | grep -c '\.2\.pb\.gz$') arrived twice" \
	'[ "$twice" = 1 ] && [ "$(ls "$T/r2" | grep -c "\.2\.pb\.gz$")" = 1 ] && [ ! -e "$T/r2/noanswer" ]'
check_arrivals "$T/r2" "503s" "$twice"
check "503s: every sample pushed once: $SUM = $(folded_total "$T/w2.folded")" '[ "$SUM" = "$(folded_total "$T/w2.folded")" ]'
check "503s: the summary's app name is the host's ($(cut -d' ' -f3 "$T/r2/log" | sort -u))" \
	'[ "$(cut -d" " -f3 "$T/r2/log" | sort -u)" = "$(hostname)" ]'

# 3. Nobody answers at all: the stop waits at most 5 s, and says what was not sent.
kill $RECEIVER
wait $RECEIVER 2> /dev/null
$BPFPROF -v -F 99 -d 2 --push "http://127.0.0.1:$port" --push-interval 1 2> "$T/p3.err" &
prof=$!
wait_attached "$T/p3.err" $prof
t0=$(now_ns)	# from the attach: starting is not what is timed
wait $prof
rc=$?
ms=$(( ($(now_ns) - t0) / 1000000 ))
unsent=$(sed -n 's/.*not sent at the stop \([0-9]*\)$/\1/p' "$T/p3.err")
# The trying is what -v shows between the last drain's read and the end (symbols freed after).
read_ms=$(sed -n 's/^bpfprof: timing: last drain read \([0-9]*\).* ms after .*/\1/p' "$T/p3.err")
freed_ms=$(sed -n 's/^bpfprof: timing: detached and symbols freed \([0-9]*\).* ms after .*/\1/p' "$T/p3.err")
trying=$(( ${freed_ms:-99999} - ${read_ms:-0} ))
check "no server: exit $rc after $ms ms, of which $trying from the last drain to the end (at most 5 s of trying, and freeing), $unsent intervals said not sent" \
	'[ $rc = 0 ] && [ $trying -lt 7000 ] && [ "${unsent:-0}" -ge 2 ]'

# 4. Options that cannot go: one line, exit 2.
for args in "--push ftp://x" "--push-interval 5" "--app-name x" "--push http://x --app-name ''" \
	    "--push http://x --push-interval 0"; do
	eval "\$BPFPROF $args -d 1" > /dev/null 2> "$T/err"
	rc=$?
	check "bpfprof $args -> exit $rc: $(head -1 "$T/err")" \
		'[ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ]'
done

# libcurl is opened when --push first needs it: missing, one line naming the package.
lib=$(readlink -f "$(ldconfig -p | awk '/libcurl\.so\.4 .*x86-64/ { print $NF; exit }')")
unshare -m sh -c "mount --bind /dev/null '$lib' && exec $BPFPROF --push http://127.0.0.1:1 -d 1 -o '$T/nolib.folded'" 2> "$T/nolib.err"
rc=$?
check "--push without libcurl: exit $rc, $(cat "$T/nolib.err")" \
	'[ -n "$lib" ] && [ $rc = 1 ] && [ "$(wc -l < "$T/nolib.err")" = 1 ] && grep -q "install libcurl4" "$T/nolib.err"'
