# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Sourced by the end-to-end tests: TAP helpers, workloads, output checks.
# Each test prints "ok - ..." or "not ok - ..." lines; tests/run.sh counts them.

O=${O:-build}
BPFPROF=$O/bpfprof
WL=$O/tests/workloads
export LC_ALL=C
T=$(mktemp -d /tmp/bpfprof-test.XXXXXX)
BG_PIDS=()

cleanup() {
	local p
	for p in "${BG_PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	rm -rf "$T"
	[ -n "${CGROUP_DIR:-}" ] && remove_cgroup "$CGROUP_DIR"
	return 0
}
trap cleanup EXIT
[ -n "${KEEP:-}" ] && trap - EXIT

ok() { echo "ok - $1"; }
# not_ok DESCRIPTION [DIAGNOSTIC LINE...]
not_ok() {
	echo "not ok - $1"
	shift
	local l
	for l in "$@"; do printf '#   %s\n' "$l"; done
}
# check DESCRIPTION 'SHELL COMMAND': ok if the command, given as one string and
# evaluated here, succeeds. One string, so `check D [ a ] && [ b ]` cannot check
# only [ a ] unseen: any other number of arguments is itself a failure. The
# string's variables expand when it runs, so this function names no variable
# a test might use.
check() {
	if [ $# != 2 ]; then
		not_ok "${1:-check}" "check takes DESCRIPTION and one command string; got $# arguments: $*"
		return
	fi
	if eval "$2"; then ok "$1"; else not_ok "$1" "failed: $2"; fi
}
# diag FILE: show a file's first lines as TAP diagnostics.
diag() { sed -e 's/^/#   | /' "$1" | head -${2:-15}; }

# start_workload NAME ARGS...: runs a workload in the background; sets $!
# and remembers it for cleanup. Its stdout goes to $T/NAME.PID.out.
start_workload() {
	local name=$1
	shift
	"$WL/$name" "$@" > "$T/$name.$BASHPID.$RANDOM.out" &
	BG_PIDS+=($!)
}

# folded_total FILE: the strict checker's total, or nothing (and status 1).
folded_total() { awk -f tests/check_folded.awk "$1"; }

# sum_matching FILE REGEX: total count of lines whose stack matches REGEX.
sum_matching() {
	awk -v re="$2" '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); if (s ~ re) t += n } END { print t + 0 }' "$1"
}

# profile_until_done OUT.folded PID [BPFPROF ARGS...]: profiles the whole
# system from before PID's work starts until PID has ended, however long a
# loaded machine makes it take. PID waits for "$T/go" before it starts.
profile_until_done() {
	local out=$1 pid=$2 prof i
	shift 2
	$BPFPROF -v "$@" -o "$out" 2> "${out%.*}.err" &
	prof=$!
	wait_attached "${out%.*}.err" $prof
	touch "$T/go"
	wait "$pid"
	# With -p it stops on its own once its targets have exited, and a signal while it
	# writes would cut its outputs (under the sanitizers, writing outlasted 0.2 s): up
	# to 10 s for that. Else a moment for the last samples.
	case " $* " in
	*" -p "*) for i in $(seq 100); do kill -0 $prof 2> /dev/null || break; sleep 0.1; done ;;
	*) sleep 0.2 ;;
	esac
	kill -TERM $prof 2> /dev/null
	wait $prof
	rm -f "$T/go"
}
wait_go() { while [ ! -e "$T/go" ]; do sleep 0.05; done; }
# wait_attached ERR PID: until bpfprof PID (run with -v, stderr to ERR) samples, or has exited.
wait_attached() {
	while kill -0 "$2" 2> /dev/null && ! grep -qs "^bpfprof: timing: attached" "$1"; do sleep 0.05; done
}

# cpu_ns PID: the CPU time the process's live threads have had, in ns (schedstat).
cpu_ns() { cat /proc/$1/task/*/schedstat 2> /dev/null | awk '{ t += $1 } END { printf "%.0f", t }'; }
now_ns() { date +%s%N; }

# with_cpu_share PID COMMAND...: runs COMMAND, with its exit status, and sets
# SHARE to the share of one CPU the process had meanwhile (1.0: running all
# along), so a test can expect samples for the CPU time the process really
# got on a machine other processes load too.
with_cpu_share() {
	local pid=$1 c0 w0 c1 w1 rc
	shift
	c0=$(cpu_ns "$pid"); w0=$(now_ns)
	"$@"
	rc=$?
	c1=$(cpu_ns "$pid"); w1=$(now_ns)
	SHARE=$(awk -v c=$((c1 - c0)) -v w=$((w1 - w0)) 'BEGIN { printf "%.4f", (w > 0 ? c / w : 0) }')
	return $rc
}

# within VALUE LOW HIGH: LOW <= VALUE <= HIGH (decimals allowed).
within() { awk -v v="$1" -v lo="$2" -v hi="$3" 'BEGIN { exit !(v >= lo && v <= hi) }'; }

ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b ? a / b : 0 }'; }

# near_ratio A B WANT: the sample counts' ratio A/B is WANT within four standard deviations.
# Samples are draws: a ratio of counts a and b spreads by sqrt(1/a + 1/b) of itself (2 % at
# 13,000 samples split 2:1), so a fixed 5 % fails one run in twenty there.
near_ratio() {
	awk -v a="$1" -v b="$2" -v w="$3" -v d="$(ratio_spread "$1" "$2")" 'BEGIN {
		r = a > 0 && b > 0 ? a / b / w : 0; exit !(r >= 1 - d / 100 && r <= 1 + d / 100) }'
}
# ratio_spread A B: that allowance, in per cent (0 without samples).
ratio_spread() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", (a > 0 && b > 0) ? 400 * sqrt(1 / a + 1 / b) : 0 }'; }

# start_churn SECONDS: two loops that start short programs without pause (a 2 ms burst, then
# a shell that execs true) for SECONDS, in the background.
start_churn() {
	local end=$(( $(date +%s) + $1 )) i

	for i in 1 2; do
		(while [ "$(date +%s)" -lt $end ]; do
			"$WL/burst" 2 > /dev/null
			sh -c /bin/true
		done) &
		BG_PIDS+=($!)
	done
	sleep 0.5
}

CGROUP_ROOT=/sys/fs/cgroup/unified
[ -d "$CGROUP_ROOT" ] || CGROUP_ROOT=/sys/fs/cgroup

# remove_cgroup DIR: moves its tasks out and removes it, children first.
remove_cgroup() {
	local d=$1 c p
	[ -d "$d" ] || return 0
	for c in "$d"/*/; do [ -d "$c" ] && remove_cgroup "${c%/}"; done
	while read -r p; do echo "$p" > "$CGROUP_ROOT/cgroup.procs" 2>/dev/null; done < "$d/cgroup.procs"
	rmdir "$d" 2>/dev/null
}

# What a running bpfprof holds in the kernel: "prog_id N" and "link_id N"
# lines (from its fds' fdinfo), and its perf event fds.
bpf_held() { cat /proc/$1/fdinfo/* 2> /dev/null | sed -n 's/^\(prog_id\|link_id\):\s*/\1 /p' | sort -u; }
perf_fds() { ls -l /proc/$1/fd 2> /dev/null | grep -c 'anon_inode:\[perf_event\]'; }
# bpf_still FILE: those of bpf_held's lines in FILE whose object still exists.
bpf_still() {
	local kind id try still
	# The kernel frees a program once the perf events holding it are freed,
	# after an RCU grace period: give it two seconds.
	for try in $(seq 20); do
		still=$(while read -r kind id; do
			bpftool "${kind%_id}" show id "$id" > /dev/null 2>&1 && echo "$kind $id"
		done < "$1")
		[ -z "$still" ] && return 0
		sleep 0.1
	done
	echo "$still"
}
# For runs too short to watch: the id of the newest BPF program now, and
# bpf_unheld SINCE: bpfprof's programs loaded after SINCE that no process
# holds any more (a pinned or leaked attachment), seen three times over a
# second so another test run exiting meanwhile is not taken for one.
bpf_last_prog() { bpftool prog show | sed -n 's/^\([0-9]*\): .*/\1/p' | sort -n | tail -1; }
bpf_unheld() {
	local try ids held
	for try in 1 2 3; do
		ids=$(bpftool prog show | awk -F'[: ]+' -v s="$1" \
			'/^[0-9]+:/ && $1 > s && / name (on_sample|on_exec|on_fork|on_switch) / { print $1 }' | sort)
		held=$(cat /proc/[0-9]*/fdinfo/* 2> /dev/null | sed -n 's/^prog_id:\s*//p' | sort -u)
		ids=$(comm -23 <(echo "$ids") <(echo "$held") | grep .) || return 0
		sleep 0.5
	done
	echo $ids
}

# share A B: A as a per cent of B; top FILE: a folded file's three heaviest stacks, as diagnostics.
share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
top() { awk '{print $NF, $0}' "$1" | sort -rn | head -3 | sed 's/^[0-9]* //' | rev | cut -c1-240 | rev | sed 's/^/#   /'; }
# near_pct A B WANT PCT: the ratio A/B is WANT within PCT per cent.
near_pct() {
	awk -v a="$1" -v b="$2" -v w="$3" -v p="$4" 'BEGIN {
		r = a > 0 && b > 0 && w > 0 ? a / b / w : 0; exit !(r >= 1 - p / 100 && r <= 1 + p / 100) }'
}

# A workload measuring itself over the window profiled (tests/workloads/lua_window.lua,
# rb_window.rb): started, then profiled from the moment bpfprof samples to its end.
# start_window NAME SECONDS COMMAND...: COMMAND SECONDS NAME.ready $T/go in the background, stdout
# to NAME.out, stderr to NAME.wl; returns once it is ready, waiting for $T/go. Sets PID.
start_window() {
	local name=$1 secs=$2
	shift 2
	rm -f "$T/go" "$T/$name.ready"
	"$@" "$secs" "$T/$name.ready" "$T/go" > "$T/$name.out" 2> "$T/$name.wl" &
	PID=$!
	BG_PIDS+=($PID)
	while [ ! -e "$T/$name.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
}
# profile_window NAME [BPFPROF ARGS...]: bpfprof -p $PID -o NAME.folded (stderr NAME.err) over
# the workload's measured window: once it samples, $T/go; it stops when the workload has ended
# (up to 10 s to write its outputs, then SIGTERM). Sets RC (bpfprof's) and WL_RC (the workload's).
# PROFILE_PID: the pid to profile where it is not the one waited for, $PID (a container's payload).
profile_window() {
	local name=$1 prof i
	shift
	$BPFPROF -v -p "${PROFILE_PID:-$PID}" "$@" -o "$T/$name.folded" 2> "$T/$name.err" &
	prof=$!
	wait_attached "$T/$name.err" $prof
	touch "$T/go"
	wait $PID
	WL_RC=$?
	for i in $(seq 100); do kill -0 $prof 2> /dev/null || break; sleep 0.1; done
	kill -TERM $prof 2> /dev/null
	wait $prof
	RC=$?
	rm -f "$T/go"
}
