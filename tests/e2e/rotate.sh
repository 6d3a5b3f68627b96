# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# --rotate SECONDS with -o: a complete file per interval and per -o, named
# by the interval's start; together they hold every sample the run took
# (no gap, no overlap: the summary's count); --keep N keeps the newest.
. tests/lib.sh
export HOME=$T	# go's cache

stamps() { ls "$T/$1" | sed -n "s/^$2\.\([0-9]\{8\}T[0-9]\{6\}Z\)\.$3\$/\1/p" | sort; }
epoch() { date -u -d "$(echo "$1" | sed 's/\(....\)\(..\)\(..\)T\(..\)\(..\)\(..\)Z/\1-\2-\3 \4:\5:\6/')" +%s; }

start_workload split 20
sleep 0.3
mkdir "$T/r"
$BPFPROF -F 999 -d 5.5 --rotate 1 -o "$T/r/out.pb.gz" -o "$T/r/out.folded" 2> "$T/r.err"
rc=$?
check "--rotate 1 for 5.5 s: exit $rc" '[ $rc = 0 ]'
folded=$(stamps r out folded)
pprofs=$(stamps r out pb.gz)
n=$(echo "$folded" | wc -l)
check "one file per interval and per -o: $n folded, the same stamps for pprof" \
	'[ "$n" -ge 6 ] && [ "$n" -le 7 ] && [ "$folded" = "$pprofs" ]'
prev=
steps=ok
for s in $folded; do
	e=$(epoch "$s")
	[ -n "$prev" ] && [ $((e - prev)) != 1 ] && [ "$prev" != "$first" ] && steps="$s after $prev"
	[ -z "$prev" ] && first=$e
	prev=$e
done
check "intervals one second apart, on the clock's seconds after the first ($steps)" '[ "$steps" = ok ]'
sum=0 bad=
for s in $folded; do
	t=$(folded_total "$T/r/out.$s.folded") || bad="$bad $s"
	p=$(go tool pprof -raw "$T/r/out.$s.pb.gz" 2> "$T/pp.err" |
	    awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+ +[0-9]+:/ { n += $1 } END { print n + 0 }')
	[ -s "$T/pp.err" ] && bad="$bad $s(pprof says: $(head -1 "$T/pp.err"))"
	[ "$p" = "${t:-x}" ] || bad="$bad $s($p in pprof, $t folded)"
	sum=$((sum + ${t:-0}))
done
check "each interval whole: the strict folded checker, go tool pprof silent and agreeing${bad:+:$bad}" '[ -z "$bad" ]'
took=$(sed -n 's/^bpfprof: .* Hz on .*: \([0-9]*\) samples (.*/\1/p' "$T/r.err")
check "the intervals hold every sample of the run, once: $sum = the summary's $took" '[ "$sum" = "$took" ]'
# Each interval's pprof says how long it lasted: together, the run's seconds. An interval ends at
# a drain's flip, late by as long as the loop was busy (a drain under the sanitizers, early in a
# run, took 240 ms): it lasts over its second by as much as the next one falls short, so no two
# in a row last over two seconds.
secs() { go tool pprof -top "$1" 2> /dev/null | sed -n 's/^Duration: \([^,]*\),.*/\1/p' |
	 awk '/ms$/ { sub(/ms$/, ""); print $1 / 1000; next } { sub(/s$/, ""); print $1 + 0 }'; }
all=0 over= prev=
for s in $pprofs; do
	d=$(secs "$T/r/out.$s.pb.gz")
	all=$(awk -v a="$all" -v d="$d" 'BEGIN { print a + d }')
	[ -n "$prev" ] && ! within "$(awk -v a="$prev" -v d="${d:-9}" 'BEGIN { print a + d }')" 0 2.05 &&
		over="$over $s:$prev+$d"
	prev=${d:-9}
done
ran=$(sed -n 's/^bpfprof: \([0-9.]*\) s at .*/\1/p' "$T/r.err")
check "the intervals' pprof durations add up to the run's $ran s ($all s), no two in a row over two seconds${over:+:$over}" \
	'within "$(ratio "$all" "$ran")" 0.97 1.03 && [ -z "$over" ]'
check "no file under the plain name, no temporary left" \
	'[ ! -e "$T/r/out.pb.gz" ] && ! ls -A "$T/r" | grep -q "^\."'

# --keep 2: the two newest of each -o.
mkdir "$T/k"
$BPFPROF -d 4.5 --rotate 1 --keep 2 -o "$T/k/k.folded" -o "$T/k/callgrind.out.k" 2> "$T/k.err"
kept=$(stamps k k folded | tr '\n' ' ')
kept_cg=$(ls "$T/k" | grep -c '^callgrind\.out\.k\.[0-9]\{8\}T[0-9]\{6\}Z$')
newest=$(stamps k k folded | tail -1)
check "--keep 2: two files of each -o left ($kept; $kept_cg callgrind), the newest last ($newest)" \
	'[ "$(stamps k k folded | wc -l)" = 2 ] && [ "$kept_cg" = 2 ] && [ -n "$newest" ]'
touch "$T/k/k.20200101T000000Z.folded.bak" "$T/k/other.20200101T000000Z.folded"
$BPFPROF -d 1.5 --rotate 1 --keep 2 -o "$T/k/k.folded" 2> /dev/null
check "--keep removes only its own files' rotations" \
	'[ -e "$T/k/k.20200101T000000Z.folded.bak" ] && [ -e "$T/k/other.20200101T000000Z.folded" ] && [ "$(stamps k k folded | wc -l)" = 2 ]'

# A bare file name: its rotations are in the working directory.
mkdir "$T/b"
(cd "$T/b" && "$OLDPWD/$BPFPROF" -d 2.5 --rotate 1 --keep 1 -o b.folded 2> /dev/null)
check "--keep 1 with a bare -o name: one file left in the working directory ($(stamps b b folded | tr '\n' ' '))" \
	'[ "$(stamps b b folded | wc -l)" = 1 ]'

# A signal in the middle of an interval: what it had is written, whole.
mkdir "$T/s"
$BPFPROF -v --rotate 3600 -o "$T/s/s.folded" 2> "$T/s.err" &
prof=$!
wait_attached "$T/s.err" $prof
sleep 1
kill -INT $prof
wait $prof
rc=$?
last=$(stamps s s folded)
check "SIGINT an hour's interval in: exit $rc, its one file whole ($(folded_total "$T/s/s.$last.folded") samples)" \
	'[ $rc = 0 ] && [ "$(echo "$last" | wc -l)" = 1 ] && folded_total "$T/s/s.$last.folded" > /dev/null'

# Options that cannot go, or where it cannot write: one line, exit 2 (or 1, before sampling).
for args in "--keep 2 -d 1" "--rotate 2 -d 1" "--rotate 2 -o - -d 1" "--rotate 0.5 -o $T/x.folded -d 1"; do
	$BPFPROF $args > /dev/null 2> "$T/err"
	rc=$?
	check "bpfprof $args -> exit $rc: $(head -1 "$T/err")" \
		'[ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ]'
done
$BPFPROF --rotate 1 -o "$T/nowhere/x.folded" -d 2 2> "$T/err"
rc=$?
check "--rotate into a missing directory -> exit $rc at once: $(head -1 "$T/err")" \
	'[ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ]'
