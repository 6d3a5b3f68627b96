# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The CPU states in a CPU profile's summary (user, kernel, irq, softirq,
# idle) against the kernel's own accounting of the same seconds: /proc/stat
# for the machine, /proc/PID/stat for a process. Three workloads keep the
# CPUs in user code (spin), in the kernel (syscall: reads of /dev/zero) and
# in softirq (loopback: UDP to itself), all on one CPU; idle is what is
# left, none at all on a machine other processes load.
. tests/lib.sh

# A state's share in bpfprof's summary line "CPU time of ...: user X%, ..." (or "CPU states").
state() { sed -n "s/^bpfprof: CPU \(time\|states\) of .*[:,] $2 \([0-9.]*\)%.*/\2/p" "$1"; }
# The shares of /proc/stat's cpu line between two readings: user (with nice),
# kernel (system), irq, softirq, idle (with iowait); steal is no one's here.
proc_stat_shares() {
	awk 'NR == 1 { for (i = 2; i <= 9; i++) a[i] = $i } NR == 2 {
		for (i = 2; i <= 9; i++) d[i] = $i - a[i]
		t = d[2] + d[3] + d[4] + d[5] + d[6] + d[7] + d[8]
		printf "user %.1f kernel %.1f irq %.1f softirq %.1f idle %.1f\n", 100 * (d[2] + d[3]) / t,
			100 * d[4] / t, 100 * d[7] / t, 100 * d[8] / t, 100 * (d[5] + d[6]) / t }' "$@"
}
# The process's user and kernel ticks (utime, stime: fields 14 and 15 of /proc/PID/stat).
proc_times() { sed 's/.*) //' /proc/$1/stat | awk '{ print $12, $13 }'; }

# All on CPU 0: the other CPU's time is idle, on a machine nothing else loads.
start_workload spin 12 states-spin
taskset -cp 0 $! > /dev/null
start_workload syscall 12
sys=$!
taskset -cp 0 $! > /dev/null
start_workload loopback 12
taskset -cp 0 $! > /dev/null
sleep 0.3

# 1. System-wide, against /proc/stat over the seconds bpfprof sampled.
$BPFPROF -v -F 999 -d 3 -o "$T/all.folded" 2> "$T/all.err" &
prof=$!
wait_attached "$T/all.err" $prof
head -1 /proc/stat > "$T/stat"
sleep 3
head -1 /proc/stat >> "$T/stat"
wait $prof
rc=$?
check "system-wide: exit 0, a valid profile" \
	'[ $rc = 0 ] && awk -f tests/check_folded.awk "$T/all.folded" > /dev/null'
kernel=$(proc_stat_shares "$T/stat")
kstate() { echo "$kernel" | awk -v s="$1" '{ for (i = 1; i < NF; i += 2) if ($i == s) print $(i + 1) }'; }
check "system-wide: the summary gives the CPU time's states" \
	'grep -q "^bpfprof: CPU time of [0-9]* CPUs\? x [0-9.]* s: user [0-9.]*%, kernel [0-9.]*%, irq [0-9.]*%, softirq [0-9.]*%, idle [0-9.]*%$" "$T/all.err"'
sum=$(awk -v a="$(state "$T/all.err" user)" -v b="$(state "$T/all.err" kernel)" \
	-v c="$(state "$T/all.err" irq)" -v d="$(state "$T/all.err" softirq)" \
	-v e="$(state "$T/all.err" idle)" 'BEGIN { print a + b + c + d + e }')
check "system-wide: the five shares add up to 100 % ($sum)" 'within "$sum" 99.7 100.3'
for s in user kernel irq softirq idle; do
	got=$(state "$T/all.err" $s)
	want=$(kstate $s)
	check "system-wide: $s $got %, /proc/stat says $want % (within 5 points)" \
		'within "$(awk -v a="$got" -v b="$want" "BEGIN { print a - b }")" -5 5'
done
check "system-wide: loopback's softirq time is there ($(state "$T/all.err" softirq) %)" \
	'within "$(state "$T/all.err" softirq)" 1 100'

# 2. One process, against its own user and system time.
$BPFPROF -v -F 999 -d 3 -p $sys -o "$T/p.folded" 2> "$T/p.err" &
prof=$!
wait_attached "$T/p.err" $prof
t0=$(proc_times $sys)
sleep 3
t1=$(proc_times $sys)
wait $prof
want=$(echo $t0 $t1 | awk '{ u = $3 - $1; s = $4 - $2; printf "%.1f", 100 * s / (u + s) }')
got=$(state "$T/p.err" kernel)
check "-p: kernel $got %, the process's own system time $want % (within 5 points)" \
	'within "$(awk -v a="$got" -v b="$want" "BEGIN { print a - b }")" -5 5'
check "-p: the states are of the process's samples, no idle" \
	'grep -q "^bpfprof: CPU states of the [0-9]* samples: user [0-9.]*%, kernel [0-9.]*%, irq [0-9.]*%, softirq [0-9.]*%$" "$T/p.err"'
