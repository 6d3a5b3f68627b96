# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Frames are named even when the process is gone before the drain, when its
# binary is deleted or replaced, when it runs from a memfd or exists only
# inside another mount namespace: processes are followed from the start of
# the run (perf side-band records) and their files opened while they live.
. tests/lib.sh

# share NUM DEN: NUM/DEN as a percentage, 1 decimal.
share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

# 1. A storm: 120 processes of 25 ms of CPU each, two at a time, profiled
# system-wide with 1 s drains and frame-pointer stacks: most are gone before
# the drain that reads their samples.
(wait_go; for i in $(seq 60); do "$WL/burst" 25 & "$WL/burst" 25; wait; done) &
storm=$!
BG_PIDS+=($storm)
profile_until_done "$T/storm.folded" $storm -F 999 --unwind fp
# Samples in the burst binary's own code: named main/burst_work, or [burst+0x...] when not.
awk '/^burst;/ {
	n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	if (s ~ /;(main|burst_work)(;|$)/) named += n
	else if (s ~ /;\[burst\+0x/) unnamed += n
} END { print named + 0, unnamed + 0 }' "$T/storm.folded" > "$T/storm.count"
read -r named unnamed < "$T/storm.count"
procs=$(sed -n 's/^bpfprof: \([0-9]*\) processes.*/\1/p' "$T/storm.err")
if [ "$named" -gt 2000 ] && within "$(share "$named" $((named + unnamed)))" 99 100; then
	ok "storm: $(share "$named" $((named + unnamed)))% of $((named + unnamed)) samples in the exited processes' code are named ($procs processes)"
else
	not_ok "storm: $named named, $unnamed unnamed samples in the burst binary"
	grep '^burst;' "$T/storm.folded" | sort -t' ' -k2 -rn | head -5 | sed 's/^/#   /'
fi
# Each process burns 25 ms of its own CPU clock in burst_work: 120 x 25 ms
# at 999 Hz. (Exec, ld.so and exit around it cost what the host makes them.)
total=$(sum_matching "$T/storm.folded" '^burst;')
burst_work=$(sum_matching "$T/storm.folded" '^burst;.*;main;burst_work(;|$)')
expect=$((999 * 120 * 25 / 1000))
check "storm: $burst_work samples in main;burst_work, 120 x 25 ms at 999 Hz = $expect (+-10%)" \
	'within "$burst_work" $((expect * 90 / 100)) $((expect * 110 / 100))'
# Every frame named: no [unknown] (an address in no known mapping) and no
# [file+0x...] (no symbol). What stays is where frame pointers fail: ld.so
# has none, so a walk from its code can go astray.
whole=$(awk '/^burst;/ { n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	if (s !~ /\[unknown\]|\[[^];]*\+0x[0-9a-f]+\]/) w += n } END { print w + 0 }' "$T/storm.folded")
if within "$(share "$whole" "$total")" 96 100; then
	ok "storm: $(share "$whole" "$total")% of $total samples of the short processes have every frame named"
else
	not_ok "storm: $whole of $total samples of the short processes have every frame named, want 96%"
	grep '^burst;' "$T/storm.folded" | grep '\[unknown\]\|+0x' | awk '{print $NF, $0}' | sort -rn | head -5 |
		cut -c1-200 | sed 's/^/#   /'
fi

# 1b. Churn: thousands of short processes. What the exited ones leave is
# folded (their mappings of a file into one, their samples' pids dropped), so
# the profile grows with programs, not processes; every sample stays, named.
(wait_go; for i in $(seq 1500); do "$WL/burst" 1; /bin/true; done) > /dev/null &
churn=$!
BG_PIDS+=($churn)
profile_until_done "$T/churn.folded" $churn -vv -F 999 -o "$T/churn.pb.gz"
folds=$(grep -c '^bpfprof: folded what' "$T/churn.err")
procs=$(sed -n 's/^bpfprof: \([0-9]*\) processes.*/\1/p' "$T/churn.err")
if [ "$folds" -ge 1 ] && [ "${procs:-0}" -ge 1000 ]; then
	ok "churn: what exited processes left was folded $folds time(s); $procs processes counted"
else
	not_ok "churn: $folds folds, ${procs:-no} processes counted (want 1000)"; grep -v '^libbpf' "$T/churn.err" | diag /dev/stdin
fi
total=$(folded_total "$T/churn.folded")
go tool pprof -raw "$T/churn.pb.gz" > /dev/null 2> "$T/churn.pprof.err"
ptotal=$(go tool pprof -top -sample_index=samples "$T/churn.pb.gz" 2> /dev/null |
	sed -n 's/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p')
if [ ! -s "$T/churn.pprof.err" ] && [ -n "$total" ] && [ "$ptotal" = "$total" ]; then
	ok "churn: go tool pprof reads the folded profile silently, $ptotal samples as in folded"
else
	not_ok "churn: pprof $ptotal samples, folded $total"; diag "$T/churn.pprof.err"
fi
# Frames in burst's own code: named, or [burst+0x...] if naming failed.
named=$(sum_matching "$T/churn.folded" '^burst;.*;main(;burst_work)?$')
unnamed=$(sum_matching "$T/churn.folded" '^burst;.*\[burst\+0x[0-9a-f]*\]$')
if [ "$named" -gt 500 ] && within "$(share "$named" $((named + unnamed)))" 99 100; then
	ok "churn: $(share "$named" $((named + unnamed)))% of $((named + unnamed)) samples in burst's own code are named"
else
	not_ok "churn: $named named, $unnamed unnamed samples in burst's own code"
fi

# 1c. A program that ran and ended: once no process has mapped its file for 10
# drains, its symbols go; when it runs again they are read again.
# Both runs start once bpfprof samples: its start is slow on a loaded machine.
cp "$WL/burst" "$T/again-burst"
$BPFPROF -vv -F 999 -d 5 --interval 0.1 -o "$T/again.folded" 2> "$T/again.err" &
bp=$!
wait_attached "$T/again.err" $bp
("$T/again-burst" 300; sleep 2.5; "$T/again-burst" 300) > /dev/null
wait $bp
named=$(sum_matching "$T/again.folded" '^again-burst;.*;main;burst_work$')
unnamed=$(sum_matching "$T/again.folded" '^again-burst;.*\[again-burst\+0x[0-9a-f]*\]$')
if grep -q "^bpfprof: symbols of '.*again-burst' let go" "$T/again.err" &&
	grep -q "^bpfprof: '.*again-burst' mapped again" "$T/again.err"; then
	ok "a file no process maps any more lets its symbols go, and is read again when mapped again"
else
	not_ok "no letting go and reading again of again-burst's symbols"; grep again-burst "$T/again.err" | diag /dev/stdin
fi
# Each run is some 300 samples in burst_work: both named.
check "both runs named: $named samples in main;burst_work (> 450), $unnamed unnamed" \
	'[ "$named" -gt 450 ] && [ "$unnamed" = 0 ]'

# 2. A long-lived binary deleted during the run, and one replaced by another file.
cp "$WL/split" "$T/deleted-split"
cp "$WL/split" "$T/replaced-split"
"$T/deleted-split" 8 > /dev/null & BG_PIDS+=($!)
"$T/replaced-split" 8 > /dev/null & BG_PIDS+=($!)
sleep 0.3
(sleep 1.2; rm "$T/deleted-split"; cp "$WL/spin" "$T/new"; mv "$T/new" "$T/replaced-split") &
$BPFPROF -F 999 -d 3 -o "$T/deleted.folded" 2> /dev/null
for who in deleted replaced; do
	n=$(sum_matching "$T/deleted.folded" "^$who-split;.*;split_caller;split_(two|one)_third")
	all=$(sum_matching "$T/deleted.folded" "^$who-split;")
	if [ "$all" -gt 200 ] && within "$(share "$n" "$all")" 95 100; then
		ok "$who binary: $n of $all samples still name split_caller's callees"
	else
		not_ok "$who binary: $n of $all samples named"; grep "^$who" "$T/deleted.folded" | head -3
	fi
done

# 3. A program run from a memfd (no path leads to it) that exits before the drain.
"$WL/memfd_exec" "$WL/split" 2 > /dev/null &
BG_PIDS+=($!)
$BPFPROF -F 999 -d 4 --interval 3 -o "$T/memfd.folded" 2> /dev/null
n=$(sum_matching "$T/memfd.folded" '^memfd:bpfprof-t;.*;split_caller;split_(two|one)_third')
all=$(sum_matching "$T/memfd.folded" '^memfd:bpfprof-t;')
if [ "$all" -gt 200 ] && within "$(share "$n" "$all")" 95 100; then
	ok "memfd binary, gone before the drain: $n of $all samples named"
else
	not_ok "memfd binary: $n of $all samples named"; grep '^memfd' "$T/memfd.folded" | head -3
fi

# 3b. The same, started once the machine was quiet for a second: the loop, asleep until its
# drain, is woken by the side-band's first record (with --unwind fp no table request wakes it).
(sleep 1.5; exec "$WL/memfd_exec" "$WL/split" 1 > /dev/null) &
BG_PIDS+=($!)
$BPFPROF -F 999 -d 5 --interval 4 --unwind fp -o "$T/memfd-late.folded" 2> /dev/null
n=$(sum_matching "$T/memfd-late.folded" '^memfd:bpfprof-t;.*;split_caller;split_(two|one)_third')
all=$(sum_matching "$T/memfd-late.folded" '^memfd:bpfprof-t;')
if [ "$all" -gt 200 ] && within "$(share "$n" "$all")" 95 100; then
	ok "memfd binary started on a quiet machine, gone before the drain: $n of $all samples named"
else
	not_ok "memfd binary started late: $n of $all samples named"
	grep '^memfd' "$T/memfd-late.folded" | head -3
fi

# 4. A binary that exists only inside a private mount namespace.
unshare -m --propagation private sh -c "
	mkdir -p /tmp/bpfprof-ns-$$ && mount -t tmpfs tmpfs /tmp/bpfprof-ns-$$ &&
	cp '$WL/split' /tmp/bpfprof-ns-$$/ns-split && exec /tmp/bpfprof-ns-$$/ns-split 4" > /dev/null &
BG_PIDS+=($!)
sleep 0.5
check "the namespace's binary is invisible from here" '[ ! -e "/tmp/bpfprof-ns-$$/ns-split" ]'
$BPFPROF -F 999 -d 2 -o "$T/ns.folded" 2> /dev/null
n=$(sum_matching "$T/ns.folded" '^ns-split;.*;split_caller;split_(two|one)_third')
all=$(sum_matching "$T/ns.folded" '^ns-split;')
if [ "$all" -gt 200 ] && within "$(share "$n" "$all")" 95 100; then
	ok "a binary only inside a mount namespace: $n of $all samples named"
else
	not_ok "mount namespace binary: $n of $all samples named"; grep '^ns-split' "$T/ns.folded" | head -3
fi
rmdir "/tmp/bpfprof-ns-$$" 2> /dev/null

# 5. A hostile container: a JIT process in a mount namespace of its own (its
# own /tmp) whose /tmp/perf-PID.map is a symlink to an absolute path. That
# path names a map inside the container, with INSIDE_ names, and on the host
# a copy with HOST_SECRET_ names that the container cannot see. bpfprof
# must resolve the symlink inside the container's root: INSIDE_ frames, no
# HOST_SECRET_ frame, and the host file never read (its atime kept). The
# container hands out its map and node's pid on fds 3 and 4: $T is in the
# /tmp it no longer sees.
shared=/tmp/bpfprof-test-hostile-$$.map
cat > "$T/container.sh" <<SH
mount -t tmpfs tmpfs /tmp || exit 99
# A checkout under /tmp is hidden now, but not from our working directory:
# node, which opens its script by its full path, gets a copy.
cp tests/workloads/jit.js /tmp/jit.js || exit 98
node --perf-basic-prof --no-turbo-inlining --no-logfile-per-isolate --logfile=/tmp/v8.log \
	/tmp/jit.js 9 < /dev/null > /dev/null 3>&- 4>&- &
# Until V8 has written burn's code into its map (1.5 s were too few beside busy processes).
i=0
while [ \$i -lt 100 ] && ! grep -qs burn /tmp/perf-\$!.map; do sleep 0.1; i=\$((i + 1)); done
cat /tmp/perf-\$!.map >&3
sed -E 's/^([0-9a-fA-Fx]+ [0-9a-fA-Fx]+ )/\1INSIDE_/' /tmp/perf-\$!.map > $shared
ln -sf $shared /tmp/perf-\$!.map
echo \$! >&4
exec 3>&- 4>&-
wait
SH
unshare -m --propagation private sh "$T/container.sh" 3> "$T/node.map" 4> "$T/node.pid" &
BG_PIDS+=($!)
for i in $(seq 150); do [ -s "$T/node.pid" ] && break; sleep 0.1; done
node_pid=$(cat "$T/node.pid" 2> /dev/null)
sed -E 's/^([0-9a-fA-Fx]+ [0-9a-fA-Fx]+ )/\1HOST_SECRET_/' "$T/node.map" > "$shared"
touch -a -d '2001-01-01' "$shared"	# older than its mtime: any read moves it (relatime)
atime=$(stat -c %X "$shared")
[ -z "${KEEP:-}" ] && trap 'rm -f "$shared"; cleanup' EXIT
$BPFPROF -F 999 -d 2 -p "${node_pid:-0}" -o "$T/hostile.folded" 2> "$T/hostile.err"
inside=$(sum_matching "$T/hostile.folded" ';INSIDE_[^;]*_\[j\]')
host=$(sum_matching "$T/hostile.folded" 'HOST_SECRET')
total=$(folded_total "$T/hostile.folded")
if [ -n "$node_pid" ] && [ "${total:-0}" -gt 500 ] && [ "$inside" -gt $((total / 2)) ] && [ "$host" = 0 ]; then
	ok "hostile container: its map symlink resolved inside it ($inside of $total samples in INSIDE_ JIT frames, 0 HOST_SECRET_)"
else
	not_ok "hostile container: pid '$node_pid', $total samples, $inside INSIDE_, $host HOST_SECRET_"
	diag "$T/hostile.err"; grep -m3 'HOST_SECRET\|_\[j\]' "$T/hostile.folded" | sed 's/^/#   /'
fi
check "hostile container: the host file its symlink names was never read (atime kept)" \
	'[ "$(stat -c %X "$shared")" = "$atime" ]'
