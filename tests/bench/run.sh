#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# bpfprof against perf and bpftrace, on this machine, in one run: the cost of
# profiling (BPF time per sample, profiler CPU, workload slowdown), start and
# end latency, peak memory by distinct stacks, and completeness. Rounds take
# turns (each round runs every profiler once, in a rotated order), so a slow
# minute of the machine hits each of them alike; cells are medians with
# min-max. The markdown table goes to stdout and to RESULTS.
#
# usage (root): [O=build] [QUICK=1] [ROUNDS=N] bash tests/bench/run.sh [RESULTS]
#   QUICK=1: one round of shorter runs (some 4 minutes), for trying it out.
#   Default: 3 rounds of 20 s runs and a 60 s soak (some 25 minutes).
# RESULTS defaults to tests/bench/results.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
# Frame pointers, as perf -g and bpftrace walk them: like against like. The
# default, --unwind auto, is measured against fp in tests/bench/unwind.sh.
UNWIND="--unwind fp"
STACKS=$O/tests/workloads/stacks
RESULTS=${1:-tests/bench/results.md}
QUICK=${QUICK:-0}
if [ "$QUICK" = 1 ]; then
	ROUNDS=${ROUNDS:-1} RUN_S=5 WORK_S=6 SOAK_S=10
else
	ROUNDS=${ROUNDS:-3} RUN_S=20 WORK_S=22 SOAK_S=60
fi
RATES="99 999 9999"
NCPUS=$(nproc)
# The workload of the CPU, slowdown and completeness runs: two threads (both
# CPUs busy) over 1000 call paths, so every profiler has real stacks to name.
CPU_PATHS=1000
# Distinct stacks for memory and latency; sampled at 9999 Hz with visits of
# 1.5 periods, so every path is sampled on every sweep.
STACK_SIZES="1000 10000 100000"
STACK_RATE=9999
VISIT_US=150
# bpftrace keeps 4096 keys by default and drops what does not fit; let it
# keep every stack, as bpfprof and perf do, so all three do the same job.
export BPFTRACE_MAP_KEYS_MAX=262144
BT_PROG='profile:hz:%s { @[kstack, ustack] = count(); } interval:s:%s { exit(); }'

. "$(dirname "$0")/lib.sh"
bench_start bench

# The machine -----------------------------------------------------------------

# Debian packages of the peers; installed only when missing.
install_missing() {
	local p missing=()
	for p in linux-perf bpftrace time; do
		dpkg-query -W -f='${Status}\n' "$p" 2>/dev/null | grep -q '^install ok installed' ||
			missing+=("$p")
	done
	[ ${#missing[@]} = 0 ] && return 0
	note "installing ${missing[*]}"
	apt-get update -q >&2 && DEBIAN_FRONTEND=noninteractive \
		apt-get install -y -q --no-install-recommends "${missing[@]}" >&2
}

check_machine() {
	[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
	[ -x "$BPFPROF" ] && [ -x "$STACKS" ] || die "build first: make $BPFPROF $STACKS"
	install_missing || die "cannot install linux-perf, bpftrace and time"
	bpf_stats_on
	mkfifo "$T/never" && exec {NEVER}<>"$T/never"
}

# A sleep without a fork, for polling: a read that never gets data.
nap() { read -r -t "$1" -u "$NEVER" _; }

# Numbers ---------------------------------------------------------------------

# yes_no EXPR: "yes" or "no" as the awk expression is true; "n/a" on a "-" in it.
yes_no() {
	case $1 in *-*|"") echo "n/a"; return ;; esac
	awk "BEGIN { print ($1) ? \"yes\" : \"no\" }"
}

# Processes -------------------------------------------------------------------

start_workload() {
	"$STACKS" "$@" > /dev/null &
	WL_PID=$!
	PIDS+=("$WL_PID")
	sleep 0.6	# it calibrates its visits for 0.25 s before its threads start
}

stop_workload() {
	kill "$WL_PID" 2>/dev/null
	wait "$WL_PID" 2>/dev/null
}

# timed FILE CMD...: runs CMD under /usr/bin/time in the background (rusage of
# the whole tree CMD waited for: user, system, peak RSS); sets TIMED_PID.
timed() {
	local out=$1
	shift
	/usr/bin/time -f '%U %S %M' -o "$out" "$@" &
	TIMED_PID=$!
	PIDS+=("$TIMED_PID")
}

# time_cpu FILE / time_rss FILE: user+sys seconds, peak RSS KiB (time's last line).
time_cpu() { tail -1 "$1" | awk '{ print $1 + $2 }'; }
time_rss() { tail -1 "$1" | awk '{ print $3 }'; }

# child_of PID: sets CHILD to the process /usr/bin/time started.
child_of() {
	local i kids
	CHILD=
	for ((i = 0; i < 5000; i++)); do
		read -r kids < "/proc/$1/task/$1/children" 2>/dev/null
		CHILD=${kids%% *}
		[ -n "$CHILD" ] && return 0
		kill -0 "$1" 2>/dev/null || return 1
		nap 0.001
	done
	return 1
}

# prog_info FILE: one descriptor's fdinfo: TYPE (prog_type), ID, NS (run_time_ns), CNT (run_cnt).
prog_info() {
	local k v
	TYPE= ID= NS= CNT=
	while read -r k v; do
		case $k in
		prog_type:) TYPE=$v ;;
		prog_id:) ID=$v ;;
		run_time_ns:) NS=$v ;;
		run_cnt:) CNT=$v ;;
		esac
	done 2>/dev/null < "$1"
}

# perf_prog PID: the BPF program of PID on perf events that ran most, from the
# fdinfo of its descriptors (exact, whoever else runs BPF): sets PROG_ID,
# PROG_NS (run_time_ns), PROG_CNT (run_cnt; 0 if none ran yet) and PROG_FILE.
perf_prog() {
	local f
	PROG_ID= PROG_NS=0 PROG_CNT=0 PROG_FILE=
	for f in /proc/$1/fdinfo/*; do
		prog_info "$f"
		# 7: BPF_PROG_TYPE_PERF_EVENT
		if [ "$TYPE" = 7 ] && [ -n "$CNT" ] && [ "$CNT" -ge "$PROG_CNT" ]; then
			PROG_ID=$ID PROG_NS=$NS PROG_CNT=$CNT PROG_FILE=$f
		fi
	done
}

# follow_bpf PID: until PID exits, keeps the last run time and count of its
# sampling program (fdinfo's numbers are the kernel's bpf_stats, as bpftool's):
# BPF_NS, BPF_CNT; PROG_NAME as bpftool names the program.
follow_bpf() {
	BPF_NS=0 BPF_CNT=0 PROG_NAME=
	while kill -0 "$1" 2>/dev/null; do
		perf_prog "$1"
		if [ "$PROG_CNT" -gt 0 ]; then
			BPF_NS=$PROG_NS BPF_CNT=$PROG_CNT
			[ -z "$PROG_NAME" ] && PROG_NAME=$(bpftool prog show id "$PROG_ID" --json 2>/dev/null |
				grep -o '"name":"[^"]*"' | head -1 | cut -d'"' -f4)
		fi
		nap 0.5
	done
}

# wait_sampling PID: until PID's BPF program on perf events has run once (or 60 s).
wait_sampling() {
	local i
	for ((i = 0; i < 6000; i++)); do
		perf_prog "$1"
		[ "$PROG_CNT" -gt 0 ] && return 0
		nap 0.01
	done
	return 1
}

# bpfprof's stderr: the summary and -v's timing lines.
bp_samples() { sed -n 's/^bpfprof: .* CPUs\{0,1\}: \([0-9]*\) samples.*/\1/p' "$1"; }
bp_idle() { sed -n 's/^bpfprof: user .*; idle \([0-9]*\) .*/\1/p' "$1"; }
bp_lost() { sed -n 's/^bpfprof: lost \([0-9]*\) samples.*/\1/p' "$1"; }
bp_stacks() { sed -n 's/^bpfprof: .*, \([0-9]*\) distinct stacks.*/\1/p' "$1"; }
bp_seconds() { sed -n 's/^bpfprof: timing: sampled \([0-9.]*\) s$/\1/p' "$1"; }
bp_attached() { sed -n 's/^bpfprof: timing: attached .* at \([0-9.]*\) s wall clock$/\1/p' "$1"; }
bp_drained() { sed -n 's/^bpfprof: timing: first samples drained \([0-9]*\) ms after exec$/\1/p' "$1"; }
bp_written() { sed -n 's/^bpfprof: timing: outputs written \([0-9.]*\) ms after .*/\1/p' "$1"; }
# bp_taken FILE: samples the program took, recorded or idle; nothing if the run failed.
bp_taken() {
	local s i
	s=$(bp_samples "$1") i=$(bp_idle "$1")
	[ -n "$s" ] && [ -n "$i" ] && echo $((s + i))
}

# fraction COUNT RATE SECONDS: COUNT / (RATE x CPUs x SECONDS).
fraction() {
	awk -v c="$1" -v f="$2" -v s="$3" -v n="$NCPUS" 'BEGIN { if (c != "" && s > 0) printf "%.5f\n", c / (f * n * s) }'
}

# ms_between T0 T1: milliseconds between two epoch stamps in seconds.
ms_between() { awk -v a="$1" -v b="$2" 'BEGIN { if (a != "" && b != "") printf "%.1f\n", (b - a) * 1000 }'; }

# Rounds take turns: round R starts at the R-th of the names.
rotate() {
	local r=$1 i n
	shift
	n=$#
	for ((i = 0; i < n; i++)); do
		echo "${@:$(((r + i) % n + 1)):1}"
	done
}

# 1, 2, 6. Profiler CPU, BPF time per sample, completeness --------------------

# cpu_run PROFILER RATE: one RUN_S system-wide run with both CPUs busy.
cpu_run() {
	local prof=$1 f=$2 d=$T/run cpu samples
	rm -rf "$d" && mkdir -p "$d"
	start_workload -n $CPU_PATHS -t 2 -d $((RUN_S + 60))
	case $prof in
	bpfprof-folded|bpfprof-pprof)
		local out=$d/out.folded
		[ "$prof" = bpfprof-pprof ] && out=$d/out.pb.gz
		timed "$d/time" "$BPFPROF" $UNWIND -v -F "$f" -d "$RUN_S" -o "$out" 2> "$d/err" ;;
	perf)
		timed "$d/time" perf record -B -e cpu-clock -a -g -F "$f" -o "$d/perf.data" \
			-- sleep "$RUN_S" 2> "$d/err" ;;
	bpftrace)
		# shellcheck disable=SC2059
		timed "$d/time" bpftrace -e "$(printf "$BT_PROG" "$f" "$RUN_S")" > "$d/out" 2> "$d/err" ;;
	esac
	if [ "$prof" != perf ] && child_of "$TIMED_PID"; then
		follow_bpf "$CHILD"
	fi
	if ! wait "$TIMED_PID"; then
		note "$prof at $f Hz failed: $(tail -3 "$d/err" | tr '\n' ' ')"
		stop_workload
		return 1
	fi
	stop_workload
	cpu=$(time_cpu "$d/time")
	case $prof in
	bpfprof-*)
		[ "$PROG_NAME" = on_sample ] || note "bpfprof's sampling program is '$PROG_NAME', not on_sample"
		samples=$(bp_taken "$d/err")
		put "comp.$prof.$f" "$(fraction "$samples" "$f" "$(bp_seconds "$d/err")")"
		put "lost.$prof.$f" "$(bp_lost "$d/err")" ;;
	perf)
		# Writing the samples out is part of perf's job, as writing the profile is bpfprof's.
		timed "$d/time2" perf script -i "$d/perf.data" > "$d/out" 2> "$d/err2"
		wait "$TIMED_PID" || { note "perf script failed: $(tail -3 "$d/err2")"; return 1; }
		cpu=$(awk -v a="$cpu" -v b="$(time_cpu "$d/time2")" 'BEGIN { print a + b }')
		samples=$(grep -c '^[^[:space:]]' "$d/out")
		put "comp.$prof.$f" "$(fraction "$samples" "$f" "$RUN_S")" ;;
	bpftrace)
		samples=$(awk '/\]: [0-9]+$/ { s += $NF } END { print s + 0 }' "$d/out")
		put "comp.$prof.$f" "$(fraction "$samples" "$f" "$RUN_S")" ;;
	esac
	put "cpu.$prof.$f" "$cpu"
	if [ "$prof" != perf ] && [ "${BPF_CNT:-0}" -gt 0 ]; then
		put "bpfns.${prof%-*}.$f" "$((BPF_NS / BPF_CNT))"
	fi
	note "  $prof at $f Hz: ${cpu}s CPU, ${samples:-?} samples"
	rm -rf "$d"
}

cpu_round() {
	local f prof
	for f in $RATES; do
		for prof in $(rotate "$1" bpfprof-folded bpfprof-pprof perf bpftrace); do
			# A failed run (a busy machine) gets one more try.
			cpu_run "$prof" "$f" || cpu_run "$prof" "$f" || note "$prof at $f Hz: no figures"
		done
	done
}

# 3. Workload slowdown at 999 Hz ---------------------------------------------

# slow_run PROFILER: the fixed work timed while PROFILER samples at 999 Hz.
slow_run() {
	local prof=$1 d=$T/run secs pid= sig=INT
	rm -rf "$d" && mkdir -p "$d"
	case $prof in
	bpfprof)
		"$BPFPROF" $UNWIND -F 999 -o "$d/out.folded" 2> "$d/err" & pid=$! ;;
	perf)
		perf record -B -e cpu-clock -a -g -F 999 -o "$d/perf.data" 2> "$d/err" & pid=$! ;;
	bpftrace)
		# Its output is not timed here, and printing its map takes it tens of seconds.
		bpftrace -e 'profile:hz:999 { @[kstack, ustack] = count(); }' > "$d/out" 2> "$d/err" &
		pid=$! sig=KILL ;;
	esac
	if [ -n "$pid" ]; then
		PIDS+=("$pid")
		# perf has no BPF program to watch: it is set up well within 2 s.
		if [ "$prof" = perf ]; then sleep 2; else wait_sampling "$pid"; fi
		sleep 1	# start-up work done before the clock starts
	fi
	secs=$("$STACKS" -n $CPU_PATHS -t 2 -w "$WORK_UNITS")
	if [ -n "$pid" ]; then
		# The figure counts only if the profiler sampled all along.
		if ! kill -0 "$pid" 2>/dev/null; then
			note "$prof died during the fixed work: $(tail -3 "$d/err" | tr '\n' ' ')"
			secs=
		fi
		kill -"$sig" "$pid" 2>/dev/null
		wait "$pid" 2>/dev/null
	fi
	put "slow.$prof" "$secs"
	note "  fixed work with $prof: ${secs:-?}s"
	rm -rf "$d"
}

slow_round() {
	local prof
	for prof in $(rotate "$1" none bpfprof perf bpftrace); do
		slow_run "$prof"
	done
}

# 4, 5. Latency and peak memory by distinct stacks ---------------------------

# stacks_run PATHS: bpfprof at STACK_RATE until every path was sampled about
# twice, stopped by SIGINT; start and end latency, peak RSS.
stacks_run() {
	local n=$1 d=$T/run dur t0 t_prev t_first= t_kill t_end
	rm -rf "$d" && mkdir -p "$d"
	# Two threads starting half a sweep apart sample every path once in n/2 visits.
	dur=$(awk -v n="$n" -v v=$VISIT_US 'BEGIN { printf "%.1f\n", n * v / 1e6 + 2 }')
	start_workload -n "$n" -t 2 -u $VISIT_US -d "$(awk -v d="$dur" 'BEGIN { print d + 30 }')"
	# The stamp is taken in the shell that then becomes /usr/bin/time, which forks bpfprof.
	(
		echo "$EPOCHREALTIME" > "$d/t0"
		exec /usr/bin/time -f '%U %S %M' -o "$d/time" "$BPFPROF" $UNWIND -v -F $STACK_RATE \
			-o "$d/out.folded" 2> "$d/err"
	) &
	TIMED_PID=$!
	PIDS+=("$TIMED_PID")
	if child_of "$TIMED_PID"; then
		# First sample: the program's run_cnt moves. The time between the
		# last poll that saw none and the first that did is the resolution.
		# Once the program is loaded only its own fdinfo is read, to poll fast;
		# and this shell alone runs at a higher priority meanwhile, so the busy
		# CPUs do not stretch the polls.
		renice -n -10 -p $$ > /dev/null
		t_prev=$EPOCHREALTIME PROG_FILE=
		while kill -0 "$CHILD" 2>/dev/null; do
			if [ -z "$PROG_FILE" ]; then
				perf_prog "$CHILD"
			else
				prog_info "$PROG_FILE"
				PROG_CNT=${CNT:-0}
			fi
			[ "$PROG_CNT" -gt 0 ] && { t_first=$EPOCHREALTIME; break; }
			t_prev=$EPOCHREALTIME
			nap 0.0005
		done
		renice -n 0 -p $$ > /dev/null
		put "firstres.$n" "$(ms_between "$t_prev" "$t_first")"
		sleep "$dur"
		t_kill=$EPOCHREALTIME
		kill -INT "$CHILD"
	fi
	wait "$TIMED_PID" || note "bpfprof at $n paths failed: $(tail -3 "$d/err" | tr '\n' ' ')"
	t_end=$EPOCHREALTIME
	stop_workload
	read -r t0 < "$d/t0"
	put "stacks.$n" "$(bp_stacks "$d/err")"
	put "rss.$n" "$(time_rss "$d/time")"
	put "lost.stacks.$n" "$(bp_lost "$d/err")"
	put "end.$n" "$(ms_between "$t_kill" "$t_end")"
	put "written.$n" "$(bp_written "$d/err")"
	put "attach.$n" "$(ms_between "$t0" "$(bp_attached "$d/err")")"
	put "first.$n" "$(ms_between "$t0" "$t_first")"
	put "drained.$n" "$(bp_drained "$d/err")"
	note "  $n paths: $(bp_stacks "$d/err") stacks, $(time_rss "$d/time") KiB peak," \
	     "end $(ms_between "$t_kill" "$t_end") ms"
	rm -rf "$d"
}

stacks_round() {
	local n
	for n in $STACK_SIZES; do
		stacks_run "$n"
	done
}

# 6. Lost samples: SOAK_S at 9999 Hz, default options ------------------------

soak() {
	local d=$T/run
	rm -rf "$d" && mkdir -p "$d"
	start_workload -n 10000 -t 2 -d $((SOAK_S + 30))
	"$BPFPROF" $UNWIND -v -F 9999 -d "$SOAK_S" -o "$d/out.folded" 2> "$d/err" || note "soak failed"
	stop_workload
	put soak.lost "$(bp_lost "$d/err")"
	put soak.comp "$(fraction "$(bp_taken "$d/err")" 9999 "$(bp_seconds "$d/err")")"
	put soak.stacks "$(bp_stacks "$d/err")"
	note "  soak: $(grep '^bpfprof: lost' "$d/err")"
	rm -rf "$d"
}

# The table -------------------------------------------------------------------

# tree_version: the commit measured, and whether the work tree differed from it.
tree_version() {
	local c
	c=$(git rev-parse --short HEAD 2>/dev/null) || { echo "not a git tree"; return; }
	git diff --quiet HEAD -- src bpf include 2>/dev/null && echo "commit $c" ||
		echo "commit $c with uncommitted changes in src, bpf or include"
}

# worst RATIO...: the largest of the ratios given, "-" ones left out.
worst() { printf '%s\n' "$@" | awk '$1 != "-" && $1 > m { m = $1 } END { print m == "" ? "-" : m }'; }

# spread: the largest (max-min)/median of any figure measured more than once, in %, and its key.
spread() {
	local k m lo hi worst=0 key=-
	for k in $(awk '{ print $1 }' "$DATA" | sort | uniq -d); do
		read -r m lo hi <<< "$(stats "$k")"
		if awk -v m="$m" -v lo="$lo" -v hi="$hi" -v w="$worst" 'BEGIN { exit !(m > 0 && (hi - lo) / m > w) }'; then
			worst=$(awk -v m="$m" -v lo="$lo" -v hi="$hi" 'BEGIN { print (hi - lo) / m }')
			key=$k
		fi
	done
	awk -v w="$worst" -v k="$key" 'BEGIN { printf "%.0f %% (%s)\n", 100 * w, k }'
}

table() {
	local f r1 r2 r3 r4 cells worst_perf worst_bt bt_ratio comp_min lost_max slow_base
	local kernel cpu_model
	kernel=$(uname -r)
	cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
	echo "# bpfprof against perf and bpftrace"
	echo
	echo "Produced by \`sudo make bench\` (\`tests/bench/run.sh\`$([ "$QUICK" = 1 ] && echo ", QUICK=1")) on $(date -u +%Y-%m-%d):"
	echo "$NCPUS vCPUs ($cpu_model), software cpu-clock events only, Linux $kernel,"
	echo "$(perf version 2>/dev/null), $(bpftrace --version 2>/dev/null), $("$BPFPROF" -V 2>/dev/null | head -1) ($(tree_version))."
	echo "$ROUNDS round(s) taking turns, each running every profiler once; a cell is the median"
	echo "(min-max) over the rounds, a ratio the ratio of medians. Load average before the run: $LOAD_BEFORE."
	echo

	# Targets first, from the figures below.
	for f in $RATES; do
		cells+=" $(ratio cpu.bpfprof-folded.$f cpu.perf.$f) $(ratio cpu.bpfprof-pprof.$f cpu.perf.$f)"
	done
	# shellcheck disable=SC2086
	worst_perf=$(worst $cells)
	cells=
	for f in $RATES; do
		cells+=" $(ratio cpu.bpfprof-folded.$f cpu.bpftrace.$f) $(ratio cpu.bpfprof-pprof.$f cpu.bpftrace.$f)"
	done
	# shellcheck disable=SC2086
	worst_bt=$(worst $cells)
	bt_ratio=$(ratio bpfns.bpfprof.999 bpfns.bpftrace.999)
	comp_min=$(for f in $RATES; do median comp.bpfprof-folded.$f; median comp.bpfprof-pprof.$f; done |
		   sort -g | head -1)
	lost_max=$(for f in $RATES; do stats lost.bpfprof-folded.$f; stats lost.bpfprof-pprof.$f; done |
		   awk '$3 > m { m = $3 } END { print m + 0 }')
	local rss10k soak_lost end10k
	rss10k=$(median rss.10000)
	soak_lost=$(median soak.lost)
	end10k=$(median end.10000)
	echo "## Targets"
	echo
	echo "| target | measured | met |"
	echo "|---|---|---|"
	echo "| profiler CPU ≤ 0.1 × perf record + perf script, every rate | worst $worst_perf × | $(yes_no "$worst_perf <= 0.1") |"
	echo "| profiler CPU ≤ 0.5 × bpftrace, every rate | worst $worst_bt × | $(yes_no "$worst_bt <= 0.5") |"
	echo "| BPF time per sample ≤ 0.8 × bpftrace's at 999 Hz | $bt_ratio × | $(yes_no "$bt_ratio <= 0.8") |"
	echo "| 0 lost samples at 9999 Hz, ${SOAK_S} s, default options | ${soak_lost:--} lost | $(yes_no "${soak_lost:--} == 0") |"
	echo "| completeness ≥ 99 % at every rate | lowest $(awk -v c="$comp_min" 'BEGIN { printf "%.2f %%", 100 * c }'), lost ≤ $lost_max | $(yes_no "${comp_min:--} >= 0.99 && $lost_max == 0") |"
	echo "| peak RSS ≤ 30 MB at 10k distinct stacks | $(awk -v k="$rss10k" 'BEGIN { printf "%.1f MB", k * 1024 / 1e6 }') at $(median stacks.10000) stacks | $(yes_no "${rss10k:--} * 1024 <= 30e6") |"
	echo "| end latency ≤ 200 ms at 10k distinct stacks | ${end10k:--} ms | $(yes_no "${end10k:--} <= 200") |"
	echo

	echo "## 1. BPF program time per sample"
	echo
	echo "Kernel \`bpf_stats_enabled\`: run_time_ns / run_cnt of each profiler's program on the"
	echo "perf events over its whole run in figure 2 (both CPUs busy). bpftrace runs"
	echo "\`profile:hz:F { @[kstack, ustack] = count(); }\`."
	echo
	echo "| rate | bpfprof ns | bpftrace ns | bpfprof/bpftrace |"
	echo "|---|---|---|---|"
	for f in $RATES; do
		echo "| $f Hz | $(cell bpfns.bpfprof.$f 0) | $(cell bpfns.bpftrace.$f 0) | $(ratio bpfns.bpfprof.$f bpfns.bpftrace.$f) |"
	done
	echo

	echo "## 2. Profiler CPU"
	echo
	echo "User + system seconds of the profiler's whole process tree, writing its output included,"
	echo "for a ${RUN_S} s system-wide run while \`stacks -n $CPU_PATHS -t 2\` keeps both CPUs busy."
	echo "perf: \`perf record -B -e cpu-clock -a -g -F F -- sleep ${RUN_S}\` plus \`perf script\` (\`-B\`,"
	echo "no build-id pass: perf 6.1's has crashed here on binaries of the hardening tests; it only"
	echo "makes perf cheaper); bpftrace:"
	echo "the program above ending itself after ${RUN_S} s (its start-up, compiling included, counts)."
	echo
	echo "| rate | bpfprof folded | bpfprof pprof | perf record + script | bpftrace | bpfprof/perf (folded, pprof) | bpfprof/bpftrace (folded, pprof) |"
	echo "|---|---|---|---|---|---|---|"
	for f in $RATES; do
		r1=$(ratio cpu.bpfprof-folded.$f cpu.perf.$f) r2=$(ratio cpu.bpfprof-pprof.$f cpu.perf.$f)
		r3=$(ratio cpu.bpfprof-folded.$f cpu.bpftrace.$f) r4=$(ratio cpu.bpfprof-pprof.$f cpu.bpftrace.$f)
		echo "| $f Hz | $(cell cpu.bpfprof-folded.$f 2) | $(cell cpu.bpfprof-pprof.$f 2) | $(cell cpu.perf.$f 2) | $(cell cpu.bpftrace.$f 2) | $r1, $r2 | $r3, $r4 |"
	done
	echo

	echo "## 3. Workload slowdown at 999 Hz"
	echo
	echo "\`stacks -n $CPU_PATHS -t 2 -w UNITS\`: fixed work on both CPUs, about ${WORK_S} s alone, timed by"
	echo "itself while each profiler samples the whole machine (started and settled before)."
	echo
	echo "| profiler | seconds | slowdown | bpfprof's slowdown / this one's |"
	echo "|---|---|---|---|"
	slow_base=$(median slow.none)
	for r1 in none bpfprof perf bpftrace; do
		local m s
		m=$(median slow.$r1)
		s=$(awk -v m="$m" -v b="$slow_base" 'BEGIN { if (m != "" && b > 0) printf "%+.1f %%\n", 100 * (m - b) / b }')
		echo "| $r1 | $(cell slow.$r1 2) | ${s:--} | $(case $r1 in none|bpfprof) echo - ;; *)
			awk -v a="$(median slow.bpfprof)" -v p="$m" -v b="$slow_base" \
			    'BEGIN { if (a != "" && p > b) printf "%.2f\n", (a - b) / (p - b); else print "-" }' ;; esac) |"
	done
	echo

	echo "## 4. Start and end latency (bpfprof, 10k paths at $STACK_RATE Hz)"
	echo
	echo "| from - to | ms |"
	echo "|---|---|"
	echo "| exec - BPF program attached on every CPU (\`-v\` line's wall clock) | $(cell attach.10000 1) |"
	echo "| exec - first sample counted (the program's run_cnt moves; polled every $(cell firstres.10000 2) ms) | $(cell first.10000 1) |"
	echo "| exec - first drain with samples (\`--interval\` 1 s; \`-v\`, to 10 ms) | $(cell drained.10000 0) |"
	echo "| SIGINT - outputs written (\`-v\`) | $(cell written.10000 1) |"
	echo "| SIGINT - process exited, output complete | $(cell end.10000 1) |"
	echo

	echo "## 5. Peak RSS and end latency by distinct stacks"
	echo
	echo "bpfprof \`-F $STACK_RATE\`, folded output, while \`stacks -n PATHS -t 2 -u $VISIT_US\` runs until each"
	echo "path was sampled about twice, then SIGINT. Distinct stacks as bpfprof counts them (by"
	echo "address: a path also shows up with kernel frames of the interrupt's return)."
	echo
	echo "| paths | distinct stacks | peak RSS MB | SIGINT - exit ms | lost samples |"
	echo "|---|---|---|---|---|"
	for r1 in $STACK_SIZES; do
		echo "| $r1 | $(cell stacks.$r1 0) | $(cell rss.$r1 1 0.001024) | $(cell end.$r1 0) | $(cell lost.stacks.$r1 0) |"
	done
	echo

	echo "## 6. Completeness"
	echo
	echo "Samples the profile holds / (F × $NCPUS CPUs × seconds sampled), both CPUs busy (figure 2's"
	echo "runs); bpfprof's lost samples as its summary counts them. perf: samples \`perf script\` prints"
	echo "(its events open a little before the \`sleep\` starts and close after, so it can pass 100 %);"
	echo "bpftrace: the counts in its map."
	echo
	echo "| rate | bpfprof folded | bpfprof pprof | lost (bpfprof) | perf | bpftrace |"
	echo "|---|---|---|---|---|---|"
	for f in $RATES; do
		echo "| $f Hz | $(cell comp.bpfprof-folded.$f 2 100) % | $(cell comp.bpfprof-pprof.$f 2 100) % | $(cell lost.bpfprof-folded.$f 0), $(cell lost.bpfprof-pprof.$f 0) | $(cell comp.perf.$f 2 100) % | $(cell comp.bpftrace.$f 2 100) % |"
	done
	echo
	echo "Soak: ${SOAK_S} s at 9999 Hz, default options, \`stacks -n 10000 -t 2\` ($(median soak.stacks) distinct stacks):"
	echo "$(median soak.lost) samples lost, completeness $(cell soak.comp 2 100) %."
	echo
	echo "## Noise"
	echo
	echo "Largest spread (max-min)/median of any cell here: $(spread). The VM shares its host:"
	echo "its 2 vCPUs can be descheduled (steal time), which lands in whatever runs then, BPF"
	echo "run time included. Rounds taking turns spread that over every profiler, but single"
	echo "figures move by 10-20 % between runs; ratios far from their target are what to trust."
}

# Run -------------------------------------------------------------------------

check_machine
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
WORK_UNITS=$(awk -v u="$("$STACKS" -c)" -v s="$WORK_S" 'BEGIN { printf "%.0f\n", u * s }')
note "$ROUNDS round(s); fixed work $WORK_UNITS units a thread; results to $RESULTS"
for ((round = 0; round < ROUNDS; round++)); do
	note "round $((round + 1)) of $ROUNDS: profiler CPU at $RATES Hz"
	cpu_round "$round"
	note "round $((round + 1)): workload slowdown at 999 Hz"
	slow_round "$round"
	note "round $((round + 1)): distinct stacks $STACK_SIZES"
	stacks_round
done
note "soak: ${SOAK_S} s at 9999 Hz"
soak
table > "$T/results.md"
mkdir -p "$(dirname "$RESULTS")" && cp "$T/results.md" "$RESULTS"
cat "$RESULTS"
