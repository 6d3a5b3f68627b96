# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Off-CPU and wall-clock profiles of tests/workloads/waits, a thread that
# repeats 20 ms on the CPU (its own clock), 20 ms in nanosleep() and 40 ms
# in read() on a timerfd, measuring each phase's wall time itself: the
# profile is compared with what the thread did on this host, so a loaded
# machine (which stretches every phase) changes both alike.
. tests/lib.sh

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
measured() { sed -n "s/^measured: $2 //p" "$1"; }
# run_waits NAME SECONDS[,THREADS] BPFPROF-ARGS...: bpfprof on the workload from before it
# starts to its end.
run_waits() {
	local name=$1 secs=${2%,*} threads=1 pid
	[ "$2" != "$secs" ] && threads=${2#*,}
	shift 2
	(wait_go; exec "$WL/waits" "$secs" "$threads" 2> "$T/$name.measured") &
	pid=$!
	BG_PIDS+=($pid)
	profile_until_done "$T/$name.folded" $pid -p $pid "$@"
}

# 1. --off-cpu: read:sleep as the thread measured them, and their share of its time.
run_waits off 4 --off-cpu -o "$T/off.pb.gz" -o "$T/callgrind.out.off" -o "$T/off.svg"
total=$(folded_total "$T/off.folded")
check "off-cpu: the folded output passes the strict checker ($total us)" '[ -n "$total" ]'
doze=$(sum_matching "$T/off.folded" ';doze;.*;\[off-cpu: sleeping\]$')
wait_t=$(sum_matching "$T/off.folded" ';wait_timer;.*;\[off-cpu: sleeping\]$')
m_burn=$(measured "$T/off.measured" burn)
m_doze=$(measured "$T/off.measured" doze)
m_wait=$(measured "$T/off.measured" wait_timer)
want=$(ratio "$m_wait" "$m_doze")
got=$(ratio "$wait_t" "$doze")
check "off-cpu: read/sleep = $got ($wait_t / $doze us), the thread measured $want (within 5 %)" \
	'within "$(ratio "$got" "$want")" 0.95 1.05'
want=$(share $((m_doze + m_wait)) $((m_burn + m_doze + m_wait)))
got=$(share $(((doze + wait_t) * 1000)) $((m_burn + m_doze + m_wait)))
check "off-cpu: sleep and read are $got% of the thread's time, it measured $want% (within 5 %)" \
	'within "$(ratio "$got" "$want")" 0.95 1.05'
check "off-cpu: no CPU samples, and the summary says what was counted" \
	'grep -q "^bpfprof: off-CPU: threads left the CPU [0-9]* times; [0-9]* waits counted" "$T/off.err"'
check "off-cpu: every stack ends in why it waited" \
	'[ "$(sum_matching "$T/off.folded" ";\[off-cpu: (sleeping|uninterruptible|runnable)\]\$")" = "$total" ]'
check "off-cpu: no scheduler frames at the leaf (schedule, __schedule)" \
	'[ "$(sum_matching "$T/off.folded" ";(__)?schedule_\[k\];\[off-cpu")" = 0 ]'

# Every writer, with its reader.
go tool pprof -raw "$T/off.pb.gz" > "$T/off.raw" 2> "$T/off.pprof.err"
rc=$?
pprof_ns=$(awk '/^Samples:/ { on = 1; next } /^Locations/ { on = 0 } on && /^ *[0-9]+:/ { sub(":", "", $1); t += $1 } END { printf "%.0f\n", t }' "$T/off.raw")
if [ $rc = 0 ] && [ ! -s "$T/off.pprof.err" ] && grep -q '^off_cpu/nanoseconds' "$T/off.raw" &&
   [ "$pprof_ns" = "$((total * 1000))" ]; then
	ok "off-cpu: go tool pprof reads it silently: off_cpu/nanoseconds, $pprof_ns ns = the folded total"
else
	not_ok "off-cpu: go tool pprof: rc $rc, $pprof_ns ns for $total us"
	diag "$T/off.pprof.err"
	head -5 "$T/off.raw" | sed 's/^/#   /'
fi
check "off-cpu: pprof labels each sample with its state" 'grep -q "state:\[sleeping\]" "$T/off.raw"'
callgrind_annotate "$T/callgrind.out.off" > "$T/off.cg" 2> "$T/off.cg.err"
rc=$?
cg_total=$(awk '/ PROGRAM TOTALS$/ { v = $1; gsub(",", "", v); print v; exit }' "$T/off.cg")
if [ $rc = 0 ] && [ ! -s "$T/off.cg.err" ] && grep -q '^OffCPU_us' "$T/off.cg" &&
   [ "$cg_total" = "$total" ]; then
	ok "off-cpu: callgrind_annotate reads it silently: OffCPU_us, total $cg_total"
else
	not_ok "off-cpu: callgrind_annotate: rc $rc, total '$cg_total' for $total"
	diag "$T/off.cg.err"
fi
check "off-cpu: the SVG's unit is us, its leaf frames say why" \
	'grep -q "[0-9] us off the CPU" "$T/off.svg" &&
	      grep -q "<title>\[off-cpu: sleeping\] ([0-9]* us, " "$T/off.svg"'

# 2. --wall: on-CPU samples and off-CPU time in one unit, F x the thread's time.
F=999
run_waits wall 4 --wall -F $F -o "$T/wall.pb.gz"
total=$(folded_total "$T/wall.folded")
cpu=$(sum_matching "$T/wall.folded" ';burn(;|$)' )
cpu_run=$(sum_matching "$T/wall.folded" ';burn;.*\[off-cpu: runnable\]$')
cpu=$((cpu - cpu_run))
doze=$(sum_matching "$T/wall.folded" ';doze;.*;\[off-cpu: sleeping\]$')
wait_t=$(sum_matching "$T/wall.folded" ';wait_timer;.*;\[off-cpu: sleeping\]$')
m_burn=$(measured "$T/wall.measured" burn)
m_doze=$(measured "$T/wall.measured" doze)
m_wait=$(measured "$T/wall.measured" wait_timer)
# On a loaded machine burn's wall time holds time runnable too: the CPU part is 20 ms a round.
check "wall: sleep/cpu = $(ratio "$doze" "$((cpu + cpu_run))") (with burn's runnable time), the thread measured $(ratio "$m_doze" "$m_burn") (within 5 %)" \
	'within "$(ratio "$(ratio "$doze" "$((cpu + cpu_run))")" "$(ratio "$m_doze" "$m_burn")")" 0.95 1.05'
check "wall: read/sleep = $(ratio "$wait_t" "$doze"), the thread measured $(ratio "$m_wait" "$m_doze") (within 5 %)" \
	'within "$(ratio "$(ratio "$wait_t" "$doze")" "$(ratio "$m_wait" "$m_doze")")" 0.95 1.05'
expect=$(awk -v f=$F -v ns=$((m_burn + m_doze + m_wait)) 'BEGIN { printf "%.0f", f * ns / 1e9 }')
check "wall: $total samples = F x the thread's $(awk -v n=$((m_burn + m_doze + m_wait)) 'BEGIN { printf "%.2f", n / 1e9 }') s = $expect (within 5 %)" \
	'within "$(ratio "$total" "$expect")" 0.95 1.05'
go tool pprof -raw "$T/wall.pb.gz" > "$T/wall.raw" 2> "$T/wall.pprof.err"
check "wall: go tool pprof reads it silently: samples/count and wall/nanoseconds, state labels running and sleeping" \
	'[ ! -s "$T/wall.pprof.err" ] && grep -q "^samples/count wall/nanoseconds" "$T/wall.raw" &&
	      grep -q "state:\[running\]" "$T/wall.raw" && grep -q "state:\[sleeping\]" "$T/wall.raw"'

# 3. --min-block: waits shorter than it are not counted, and the summary says how many.
run_waits minblock 2 --off-cpu --min-block 30000
doze=$(sum_matching "$T/minblock.folded" ';doze;')
wait_t=$(sum_matching "$T/minblock.folded" ';wait_timer;')
short=$(sed -n 's/.* \([0-9]*\) shorter than --min-block.*/\1/p' "$T/minblock.err")
check "--min-block 30000: the 20 ms sleeps left out ($doze us), the 40 ms reads kept ($wait_t us), $short waits counted as shorter" \
	'[ "$doze" = 0 ] && [ "$wait_t" -gt 0 ] && [ "${short:-0}" -gt 0 ]'

# 4. 200 threads, started and ended while off-CPU runs: each one followed, nothing lost.
run_waits threads 2,200 --off-cpu
lost=$(sed -n 's/.*; lost \([0-9]*\) (.*, \([0-9]*\) not followed.*/\1 \2/p' "$T/threads.err")
tids=$(sed -n 's/^bpfprof: [0-9]* processes, \([0-9]*\) threads.*/\1/p' "$T/threads.err")
check "200 threads: nothing lost or unfollowed ($lost), $tids threads in the profile" \
	'[ "$lost" = "0 0" ] && [ "${tids:-0}" -ge 200 ]'
m_wait=$(measured "$T/threads.measured" wait_timer)
wait_t=$(sum_matching "$T/threads.folded" ';wait_timer;.*;\[off-cpu: sleeping\]$')
check "200 threads: their reads $wait_t us, as they measured $((m_wait / 1000)) us (within 5 %)" \
	'within "$(ratio "$wait_t" "$((m_wait / 1000))")" 0.95 1.05'

# 5. A thread that leaves from where it left last time takes that walk again,
# if the stack words it read are the same: callers waits in one place
# from two callers whose frames are alike (the same registers at the system
# call), each twice in a row; only a return address tells them apart.
(wait_go; exec "$WL/callers" 3 2> "$T/callers.measured") &
pid=$!
BG_PIDS+=($pid)
profile_until_done "$T/callers.folded" $pid --off-cpu -p $pid
again=$(sed -n 's/.*; \([0-9]*\) user stacks as at the thread.s last wait.*/\1/p' "$T/callers.err")
left=$(sed -n 's/^bpfprof: off-CPU: threads left the CPU \([0-9]*\) times.*/\1/p' "$T/callers.err")
check "callers: the last walk taken again for the second wait of each pair ($again of $left)" \
	'[ "${again:-0}" -gt 0 ] && [ "$again" -lt "$left" ]'
one=$(sum_matching "$T/callers.folded" ';one_part;')
three=$(sum_matching "$T/callers.folded" ';three_parts;')
want=$(ratio "$(measured "$T/callers.measured" three)" "$(measured "$T/callers.measured" one)")
got=$(ratio "$three" "$one")
check "callers: three_parts / one_part = $got ($three / $one us), as measured $want (within 5 %): no walk taken for the other caller's" \
	'within "$(ratio "$got" "$want")" 0.95 1.05'

# 6. Thread churn: waves of 200 threads that sleep 50 us 20 times and exit,
# thousands a second, a thread's last switch out as it exits among them.
(wait_go; exec "$WL/churn" 3 200 2> "$T/churn.measured") &
pid=$!
BG_PIDS+=($pid)
profile_until_done "$T/churn.folded" $pid --off-cpu -p $pid
made=$(measured "$T/churn.measured" threads)
ids=$(measured "$T/churn.measured" ids)
tids=$(sed -n 's/^bpfprof: [0-9]* processes, \([0-9]*\) threads.*/\1/p' "$T/churn.err")
check "churn: each of the $ids thread ids of the $made threads it made is in the profile ($tids with the main one)" \
	'[ "${tids:-0}" = $((ids + 1)) ]'
read -r left counted lost <<< "$(sed -n 's/^bpfprof: off-CPU: threads left the CPU \([0-9]*\) times; \([0-9]*\) waits counted .*; lost \([0-9]*\) .*/\1 \2 \3/p' "$T/churn.err")"
check "churn: every wait counted ($counted of $left times a thread left the CPU, less those away at the end), none lost ($lost)" \
	'[ "$lost" = 0 ] && [ "$counted" -le "$left" ] && [ $((left - counted)) -le 201 ]'

# ... and the kernel keeps nothing for a thread gone: machine-wide, after a
# first wave has filled the maps, a second one's thousands of exited threads
# add far less unreclaimable slab than a task storage value each would.
slab_kb() { awk '/^SUnreclaim:/ { print $2 }' /proc/meminfo; }
$BPFPROF -v --off-cpu -o "$T/churn2.folded" 2> "$T/churn2.err" &
prof=$!
wait_attached "$T/churn2.err" $prof
"$WL/churn" 1.5 200 2> /dev/null
sleep 1
s0=$(slab_kb)
"$WL/churn" 2 200 2> "$T/churn2.measured"
sleep 1
s1=$(slab_kb)
value=$(bpftool map show name offcpu_tasks | sed -n 's/.* value \([0-9]*\)B .*/\1/p' | head -1)
kill -TERM $prof
wait $prof
made=$(measured "$T/churn2.measured" threads)
leak=$((made * ${value:-0} / 1024))
check "churn: $made threads exited, unreclaimable slab grew $((s1 - s0)) kB, less than half the $leak kB of a ${value}-byte value each" \
	'[ "${value:-0}" -gt 0 ] && [ $((s1 - s0)) -lt $((leak / 2)) ]'

# 7. Options that cannot go together, each with a one-line reason and exit 2.
for args in "--wall" "--off-cpu --wall -p 1" "--off-cpu --unwind dwarf" "--min-block 10" \
	    "--off-cpu -I" "--off-cpu --min-block abc"; do
	$BPFPROF $args -d 1 > /dev/null 2> "$T/err"
	rc=$?
	check "bpfprof $args -> exit 2: $(head -1 "$T/err")" \
		'[ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ]'
done
