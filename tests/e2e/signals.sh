# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# An interrupted run still writes a complete profile of what it sampled; a
# signal once sampling is over stops the writing and leaves no torn file; a
# closed stdout ends the run; targets that all vanish end it too. Nothing
# stays attached on any of these paths.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

# whole_pprof FILE / whole_svg FILE: their own readers take them without a word.
whole_pprof() { go tool pprof -raw "$1" > /dev/null 2> "$T/pprof.err" && [ ! -s "$T/pprof.err" ]; }
whole_svg() { xmllint --noout "$1" 2> /dev/null; }
# watch PID: what it holds in the kernel once sampling (its programs, and links for its
# trackers and a perf event: start-up is slower under sanitizers), into $T/held, and its
# perf fds into $nperf.
watch() {
	local i
	for ((i = 0; i < 200; i++)); do
		bpf_held "$1" > "$T/held"
		[ "$(grep -c '^link_id' "$T/held")" -ge 3 ] || ! kill -0 "$1" 2> /dev/null && break
		sleep 0.05
	done
	nperf=$(perf_fds "$1")
}
# left_nothing WHAT: after the watched run, every object it held is gone.
left_nothing() {
	local still
	still=$(bpf_still "$T/held")
	if [ "$(grep -c '^prog_id' "$T/held")" -ge 3 ] && [ "$nperf" -ge 1 ] && [ -z "$still" ]; then
		ok "$1: the $(grep -c prog "$T/held") programs, $(grep -c link "$T/held") links and $nperf perf events it held are gone"
	else
		not_ok "$1: held $(tr '\n' ' ' < "$T/held"), $nperf perf fds; still there: $still"
	fi
}

start_workload spin 60 sig 1
target=$!
sleep 0.3

# 1. During sampling: exit 0, every output whole.
for sig in INT TERM HUP; do
	$BPFPROF -F 499 -p $target -o "$T/$sig.folded" -o "$T/$sig.svg" -o "$T/$sig.pb.gz" \
		2> "$T/$sig.err" &
	prof=$!
	sleep 1.5
	watch $prof
	kill -$sig $prof
	wait $prof
	rc=$?
	total=$(folded_total "$T/$sig.folded")
	summary=$(sed -n 's/^bpfprof: .* Hz on .*: \([0-9]*\) samples.*/\1/p' "$T/$sig.err")
	if [ $rc = 0 ] && [ -n "$total" ] && [ "$total" = "$summary" ] && within "$total" 100 1000; then
		ok "SIG$sig after 1.5 s: exit 0, a valid profile of all $total samples taken"
	else
		not_ok "SIG$sig after 1.5 s: exit $rc, total '$total', the summary says '$summary'"
		diag "$T/$sig.err"
	fi
	check "SIG$sig: the SVG and pprof files of the same run are whole" \
		'whole_svg "$T/$sig.svg" && whole_pprof "$T/$sig.pb.gz"'
	check "SIG$sig: the summary is printed" 'grep -q "^bpfprof: lost 0 samples" "$T/$sig.err"'
	left_nothing "SIG$sig during sampling"
done

# Without -d, to stdout: Ctrl-C ends it and stdout holds the whole profile.
$BPFPROF -F 499 -p $target > "$T/stdout.folded" 2> /dev/null &
prof=$!
sleep 1
kill -INT $prof
wait $prof
check "SIGINT with stdout: a valid profile on stdout" '[ "$(folded_total "$T/stdout.folded")" -gt 0 ]'

# No temporary file is left behind, and none is renamed into place early.
check "no temporary files left in the output directory" \
	"! ls -A '$T' | grep -q '^\.'"

# The end of -d: the same.
$BPFPROF -F 499 -p $target -d 1.5 -o "$T/d.folded" 2> /dev/null &
prof=$!
sleep 1
watch $prof
wait $prof
rc=$?
check "-d 1.5: exit 0, a valid profile" '[[ $rc = 0 && "$(folded_total "$T/d.folded")" -gt 0 ]]'
left_nothing "the end of -d"

# 2. While writing: many distinct stacks, so there is much to write.
start_workload stacks -n 3000 -d 40
stacks=$!
sleep 0.5
last=$(bpf_last_prog)

# Deterministic: stdout is a pipe nobody reads, so the writing stops there,
# after the first file is in place and before the last is begun.
for sig in INT TERM HUP; do
	rm -f "$T/pipe" "$T/w1.folded" "$T/w2.svg"
	mkfifo "$T/pipe"
	exec 3<> "$T/pipe"	# open both ends, never read
	$BPFPROF -F 999 -d 1 -o "$T/w1.folded" -o - -o "$T/w2.svg" > "$T/pipe" 2> "$T/w.err" &
	prof=$!
	for i in $(seq 100); do [ -e "$T/w1.folded" ] && break; sleep 0.1; done
	sleep 0.3
	check "SIG$sig while writing: bpfprof is blocked on stdout, still running" 'kill -0 $prof'
	kill -$sig $prof
	wait $prof 2> /dev/null	# (bash's word on a job killed by a signal)
	rc=$?
	exec 3>&-
	want=$((128 + $(kill -l $sig)))
	# One line, besides warnings about the machine (a Python bpfprof cannot read, running now).
	if [ $rc = $want ] && [ "$(grep -vc '^bpfprof: warning: ' "$T/w.err")" = 1 ] &&
	   grep -q "^bpfprof: SIG$sig while writing the profile: outputs not yet complete were removed; let it finish" "$T/w.err"; then
		ok "SIG$sig while writing: dies of it (exit $rc), one line: $(cat "$T/w.err")"
	else
		not_ok "SIG$sig while writing: want exit $want and one line, got $rc"; diag "$T/w.err"
	fi
	check "SIG$sig while writing: the file already in place is whole" \
		"awk -f tests/check_folded.awk '$T/w1.folded' > /dev/null"
	check "SIG$sig while writing: the file not yet written is not there, nor any temporary file" \
		"[ ! -e '$T/w2.svg' ] && ! ls -A '$T' | grep -q '^\.'"
done

# In the middle of a file: caught stopped with a temporary file begun (so
# however slowly a loaded machine polls), then signalled. Some 30,000
# distinct stacks: writing them takes a few hundred milliseconds here.
start_workload stacks -n 50000 -t 2 -u 20 -d 8
big=$!
sleep 0.3
$BPFPROF -v -F 9999 -d 2 -o "$T/big.pb.gz" -o "$T/big.svg" -o "$T/big.folded" 2> "$T/big.err" &
prof=$!
# Stopped and continued only once it samples: each stop cuts the verifier
# short (EAGAIN), and a stream of them every few milliseconds would never let
# a program that takes tens of milliseconds to verify load.
wait_attached "$T/big.err" $prof
grown=
for i in $(seq 5000); do
	kill -STOP $prof 2> /dev/null || break
	if [ -n "$(find "$T" -maxdepth 1 -name '.big.*' -size +0c)" ]; then grown=1; break; fi
	kill -CONT $prof
	sleep 0.002
done
kill -INT $prof
kill -CONT $prof
wait $prof 2> /dev/null
rc=$?
kill $big
whole=0 absent=0
for f in big.pb.gz big.svg big.folded; do
	if [ ! -e "$T/$f" ]; then
		absent=$((absent + 1))
	elif case $f in *.pb.gz) whole_pprof "$T/$f" ;; *.svg) whole_svg "$T/$f" ;;
		*) awk -f tests/check_folded.awk "$T/$f" > /dev/null ;; esac; then
		whole=$((whole + 1))
	fi
done
if [ -n "$grown" ] && [ $rc = 130 ] && [ $absent -ge 1 ] && [ $((whole + absent)) = 3 ] &&
   ! ls -A "$T" | grep -q '^\.'; then
	ok "SIGINT as a file is being written: exit 130, $whole outputs whole, $absent not there, no temporary file"
else
	not_ok "SIGINT as a file is being written: grown '$grown', exit $rc, $whole whole, $absent absent"
	diag "$T/big.err"; ls -A "$T" | sed 's/^/#   /'
fi

left=$(bpf_unheld "$last")
check "killed by a signal while writing: no bpfprof program left loaded (${left:-none})" '[ -z "$left" ]'

# 3. stdout closed early: `bpfprof -d 2 | head -1` ends, with a clear word.
start=$(date +%s%N)
first=$( (timeout 20 $BPFPROF -F 999 -d 2 2> "$T/pipe.err"; echo $? > "$T/pipe.rc") | head -1)
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
rc=$(cat "$T/pipe.rc")
if [ -n "$first" ] && [ "$rc" = 1 ] && [ $elapsed -lt 6000 ] &&
   grep -q "^bpfprof: cannot write folded output to stdout: Broken pipe; its reader exited first" "$T/pipe.err"; then
	ok "bpfprof -d 2 | head -1: exit 1 in $elapsed ms: $(head -1 "$T/pipe.err")"
else
	not_ok "bpfprof -d 2 | head -1: exit $rc in $elapsed ms"; diag "$T/pipe.err"
fi
# Without -d, a reader that is gone at once ends the run at the next drain.
last=$(bpf_last_prog)
start=$(date +%s%N)
(timeout 20 $BPFPROF -F 999 2> "$T/gone.err"; echo $? > "$T/gone.rc") | true
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
rc=$(cat "$T/gone.rc")
if [ "$rc" = 1 ] && [ $elapsed -lt 5000 ] && grep -q "Broken pipe" "$T/gone.err"; then
	ok "bpfprof | true: the run ends by itself in $elapsed ms, exit 1"
else
	not_ok "bpfprof | true: exit $rc in $elapsed ms"; diag "$T/gone.err"
fi
left=$(bpf_unheld "$last")
check "stdout closed: no bpfprof program left loaded (${left:-none})" '[ -z "$left" ]'

# 4. The targets vanish: the run ends with what it sampled, exit 0.
kill $stacks
# -p: every one of two processes. They end 1 and 2 s after bpfprof samples
# (its start takes a second on a loaded machine: a fixed life would be eaten).
start_workload spin 60 short 1
short=$!
start_workload spin 60 longer 1
longer=$!
$BPFPROF -v -F 499 -p $short,$longer -o "$T/short.folded" 2> "$T/short.err" &
prof=$!
watch $prof
wait_attached "$T/short.err" $prof
start=$(date +%s%N)
(sleep 1; kill $short; sleep 1; kill $longer) &
wait $prof
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
total=$(folded_total "$T/short.folded")
# At most F x (1 + 2 s) and their kills' delays: 2,000.
if [ $rc = 0 ] && [ "$elapsed" -lt 4000 ] && within "${total:-0}" 100 2000 &&
   grep -q '^longer;' "$T/short.folded"; then
	ok "-p A,B exiting 1 and 2 s into the run: it ends ${elapsed} ms in with $total samples, exit 0"
else
	not_ok "-p A,B exiting 1 and 2 s into the run: rc $rc, ${elapsed} ms, '$total' samples"; diag "$T/short.err"
fi
left_nothing "-p targets gone"

# -t: a thread, ending 1.5 s after bpfprof samples.
start_workload spin 60 thread 1
thread=$!
$BPFPROF -v -F 499 -t $thread -o "$T/tid.folded" 2> "$T/tid.err" &
prof=$!
wait_attached "$T/tid.err" $prof
start=$(date +%s%N)
(sleep 1.5; kill $thread) &
wait $prof
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
total=$(folded_total "$T/tid.folded")
# At most F x 1.5 s and the kill's delay: 1,000.
if [ $rc = 0 ] && [ "$elapsed" -lt 3500 ] && within "${total:-0}" 100 1000; then
	ok "-t target exits 1.5 s into the run: it ends ${elapsed} ms in with $total samples, exit 0"
else
	not_ok "-t target exits 1.5 s into the run: rc $rc, ${elapsed} ms, '$total' samples"; diag "$T/tid.err"
fi

# --cgroup: removed once its one process has exited.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-sig-$$
mkdir "$CGROUP_DIR"
# Its process ends 1 s after bpfprof samples, the cgroup 0.5 s later.
start_workload spin 60 incg 1
incg=$!
echo $incg > "$CGROUP_DIR/cgroup.procs"
$BPFPROF -v -F 499 --cgroup "$CGROUP_DIR" -o "$T/cg.folded" 2> "$T/cg.err" &
prof=$!
watch $prof
wait_attached "$T/cg.err" $prof
start=$(date +%s%N)
(sleep 1; kill $incg; sleep 0.5; rmdir "$CGROUP_DIR") &
wait $prof
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
total=$(folded_total "$T/cg.folded")
if [ $rc = 0 ] && [ "$elapsed" -lt 3500 ] && within "${total:-0}" 100 1250 &&
   [ "$(sum_matching "$T/cg.folded" '^incg;')" = "$total" ]; then
	ok "--cgroup removed 1.5 s into the run: it ends ${elapsed} ms in with $total samples, exit 0"
else
	not_ok "--cgroup removed 1.5 s into the run: rc $rc, ${elapsed} ms, '$total' samples"; diag "$T/cg.err"
fi
left_nothing "--cgroup gone"
