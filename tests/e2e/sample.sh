# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Sampling for real: workloads whose CPU split is known, profiled by the
# built bpfprof, checked by the numbers.
. tests/lib.sh

# The split is measured to +-5 %: with samples as independent draws that
# takes some 30,000 of them (the ratio's spread at n samples is 4.2/sqrt(n)).
F=9999
SECONDS_RUN=4

# 1. The 2:1 split, the full chain, the sample total of one busy thread.
start_workload split $((SECONDS_RUN + 3))
pid=$!
sleep 0.3
with_cpu_share $pid $BPFPROF -F $F -d $SECONDS_RUN -p $pid -o "$T/split.folded" 2> "$T/split.err"
rc=$?
check "split: exit status 0" '[ $rc = 0 ]'
total=$(folded_total "$T/split.folded")
check "split: output passes the strict folded checker" '[ -n "$total" ]'
two=$(sum_matching "$T/split.folded" ';split_two_thirds(;|$)')
one=$(sum_matching "$T/split.folded" ';split_one_third(;|$)')
r=$(ratio "$two" "$one")
if within "$r" 1.9 2.1; then
	ok "split: split_two_thirds/split_one_third = $r (2 +- 5%; $two vs $one samples)"
else
	not_ok "split: split_two_thirds/split_one_third = $r, want 2 +- 5%" "$two vs $one samples"
	diag "$T/split.folded"
fi
full=$(sum_matching "$T/split.folded" '^split;(.*;)?main;split_caller;split_(two_thirds|one_third)(;|$)')
if within "$full" $((total * 95 / 100)) "$total"; then
	ok "split: $full of $total samples show main;split_caller;leaf"
else
	not_ok "split: only $full of $total samples show main;split_caller;leaf"
	diag "$T/split.folded"
fi
# A sample per 1/F s of the thread's CPU time: F x seconds if it had a CPU
# to itself, less when other processes load the machine.
expect=$(awk -v f=$F -v s=$SECONDS_RUN -v c="$SHARE" 'BEGIN { printf "%d", f * s * c }')
if within "$total" $((expect * 90 / 100)) $((expect * 110 / 100)); then
	ok "split: $total samples for one busy thread, F x seconds x its CPU share ($SHARE) = $expect (+-10%)"
else
	not_ok "split: $total samples for one busy thread, want $expect +-10% (F x seconds x its CPU share $SHARE)"
fi
check "split: no other process in a -p profile" \
	'[ "$(sum_matching "$T/split.folded" "^split;")" = "$total" ]'
check "split: summary says 0 lost" 'grep -q "^bpfprof: lost 0 samples" "$T/split.err"'

# 2. Kernel frames: present with -K, absent with -U.
start_workload syscall 8
pid=$!
sleep 0.3
$BPFPROF -F $F -d 3 -p $pid -K -o "$T/k.folded" 2> "$T/k.err"
total=$(folded_total "$T/k.folded")
kern=$(sum_matching "$T/k.folded" '_\[k\]')
check "syscall -K: output passes the checker" '[ -n "$total" ]'
if within "$kern" $((total * 90 / 100)) "$total" && grep -q 'read_zero_\[k\]' "$T/k.folded"; then
	ok "syscall -K: $kern of $total samples have kernel frames, read_zero among them"
else
	not_ok "syscall -K: $kern of $total samples have kernel frames" ; diag "$T/k.folded"
fi
check "syscall -K: no user frames" "! grep -q 'syscall_read_zeros\|;main' '$T/k.folded'"
$BPFPROF -F $F -d 3 -p $pid -U -o "$T/u.folded" 2> "$T/u.err"
total=$(folded_total "$T/u.folded")
check "syscall -U: output passes the checker" '[ -n "$total" ]'
check "syscall -U: no kernel frames" "! grep -q '_\[k\]' '$T/u.folded'"
user=$(sum_matching "$T/u.folded" ';main(;|$)')
if within "$user" $((total * 90 / 100)) "$total"; then
	ok "syscall -U: $user of $total samples have user frames up to main"
else
	not_ok "syscall -U: $user of $total samples have user frames up to main"; diag "$T/u.folded"
fi
kill $pid 2>/dev/null

# 3. System-wide, both CPUs busy, frequent drains: every sample accounted for.
start_workload spin 6 busy 2
sleep 0.3
$BPFPROF -F $F -d 4 --interval 0.1 -v -o "$T/sys.folded" 2> "$T/sys.err"
total=$(folded_total "$T/sys.folded")
check "system-wide: output passes the checker" '[ -n "$total" ]'
if grep -q 'accounting: the program counted' "$T/sys.err" && ! grep -q 'does not add up' "$T/sys.err"; then
	n=$(sed -n 's/.*over \([0-9]*\) drains.*/\1/p' "$T/sys.err")
	ok "system-wide: what the program counted equals what $n drains read"
else
	not_ok "system-wide: the drains do not add up"; diag "$T/sys.err"
fi
check "system-wide: 0 lost" 'grep -q "^bpfprof: lost 0 samples" "$T/sys.err"'
rec=$(sed -n 's/^bpfprof: .* Hz on .*: \([0-9]*\) samples.*/\1/p' "$T/sys.err")
check "system-wide: the summary's $rec samples are the output's $total" '[ "$rec" = "$total" ]'
ncpu=$(nproc)
# The seconds it sampled, as it says (-d 4; a loaded machine detaches it later).
secs=$(sed -n 's/^bpfprof: timing: sampled \([0-9.]*\) s$/\1/p' "$T/sys.err")
expect=$(awk -v f=$F -v s="${secs:-0}" -v n=$ncpu 'BEGIN { printf "%.0f", f * s * n }')
if within "$total" $((expect * 90 / 100)) $((expect * 101 / 100)); then
	ok "system-wide: $total samples with every CPU busy, F x ${secs} s sampled x CPUs = $expect (-10% +1%)"
else
	not_ok "system-wide: $total samples with every CPU busy, want about $expect"
fi
check "system-wide: both spinning threads seen" \
	"grep -q '^busy-1;' '$T/sys.folded' && grep -q '^busy-2;' '$T/sys.folded'"
check "system-wide: --per-pid is off, no comm-PID roots" "! grep -q '^busy-1-[0-9]' '$T/sys.folded'"

# 4. Without --interval, drains stretch while little is new: a steady process's samples are
# drained after 1, 3 and 7 s, then at the end; with --interval 1 every second. Both runs at
# once, on the same process: the stretched one's total is the other's.
start_workload split 11
pid=$!
sleep 0.3
$BPFPROF -F 999 -d 8 -p $pid -v -o "$T/stretch.folded" 2> "$T/stretch.err" &
stretched_pid=$!
$BPFPROF -F 999 -d 8 -p $pid -v --interval 1 -o "$T/every.folded" 2> "$T/every.err"
wait $stretched_pid
drains() { sed -n 's/^bpfprof: .* distinct stacks, \([0-9]*\) drains .*/\1/p' "$1"; }
stretched=$(drains "$T/stretch.err")
every=$(drains "$T/every.err")
check "drains stretched while nothing is new: $stretched drains in 8 s (<= 5), with --interval 1: $every (>= 7)" \
	'[ "${stretched:-99}" -le 5 ] && [ "${every:-0}" -ge 7 ]'
a=$(folded_total "$T/stretch.folded")
b=$(folded_total "$T/every.folded")
check "drains stretched: $a samples, as many as every second's $b (+-5%)" \
	'[ -n "$a" ] && [ -n "$b" ] && within "$a" $((b * 95 / 100)) $((b * 105 / 100))'
