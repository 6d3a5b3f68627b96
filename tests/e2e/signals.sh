# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# An interrupted run still writes a complete profile of what it sampled.
. tests/lib.sh

start_workload spin 30 sig 1
target=$!
sleep 0.3

for sig in INT TERM HUP; do
	$BPFPROF -F 499 -p $target -o "$T/$sig.folded" 2> "$T/$sig.err" &
	prof=$!
	sleep 1.5
	kill -$sig $prof
	wait $prof
	rc=$?
	total=$(folded_total "$T/$sig.folded")
	if [ $rc = 0 ] && [ -n "$total" ] && within "$total" 500 1000; then
		ok "SIG$sig after 1.5 s: exit 0 and a valid profile of $total samples"
	else
		not_ok "SIG$sig after 1.5 s: exit $rc, total '$total'"; diag "$T/$sig.err"
	fi
	check "SIG$sig: the summary is printed" grep -q '^bpfprof: lost 0 samples' "$T/$sig.err"
done

# Without -d, to stdout: Ctrl-C ends it and stdout holds the whole profile.
$BPFPROF -F 499 -p $target > "$T/stdout.folded" 2> /dev/null &
prof=$!
sleep 1
kill -INT $prof
wait $prof
check "SIGINT with stdout: a valid profile on stdout" [ -n "$(folded_total "$T/stdout.folded")" ]

# No temporary file is left behind, and none is renamed into place early.
check "no temporary files left in the output directory" \
	bash -c "! ls -A '$T' | grep -q '^\.'"

# The targets exiting ends the run early, with what was sampled.
start_workload spin 1 short 1
short=$!
start=$(date +%s%N)
$BPFPROF -F 499 -p $short -d 30 -o "$T/short.folded" 2> "$T/short.err"
rc=$?
elapsed=$(( ($(date +%s%N) - start) / 1000000 ))
total=$(folded_total "$T/short.folded")
if [ $rc = 0 ] && [ "$elapsed" -lt 5000 ] && within "${total:-0}" 200 600; then
	ok "-p target exits after 1 s: run ends in ${elapsed} ms with $total samples, exit 0"
else
	not_ok "-p target exits after 1 s: rc $rc, ${elapsed} ms, '$total' samples"; diag "$T/short.err"
fi
