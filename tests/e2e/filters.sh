# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# -p, -t and --cgroup keep exactly their targets, filtered in the kernel.
. tests/lib.sh

# Two processes, one with two threads, every thread named after itself.
start_workload spin 20 alpha 1
alpha=$!
start_workload spin 20 beta 2
beta=$!
sleep 0.5
beta_tids=($(cat "$T"/spin.*.out | sort -n | grep -v "^$alpha\$"))

# only_roots FILE ROOT...: every line starts with one of the roots, and each root appears.
only_roots() {
	local file=$1 r re=""
	shift
	for r in "$@"; do re="$re${re:+|}$r"; grep -q "^$r;" "$file" || return 1; done
	[ "$(sum_matching "$file" "^($re);")" = "$(folded_total "$file")" ]
}

$BPFPROF -F 499 -d 2 -p $alpha -o "$T/p.folded" 2> "$T/p.err"
if [ -n "$(folded_total "$T/p.folded")" ] && only_roots "$T/p.folded" alpha; then
	ok "-p: only the target process"
else
	not_ok "-p: only the target process"; diag "$T/p.folded"
fi

$BPFPROF -F 499 -d 2 -p $alpha,$beta -o "$T/p2.folded" 2> /dev/null
if only_roots "$T/p2.folded" alpha beta-1 beta-2; then
	ok "-p A,B: both processes, every thread of B"
else
	not_ok "-p A,B: both processes, every thread of B"; diag "$T/p2.folded"
fi

$BPFPROF -F 499 -d 2 -t "${beta_tids[1]}" -o "$T/t.folded" 2> /dev/null
if only_roots "$T/t.folded" beta-2; then
	ok "-t: only the target thread (beta-2, tid ${beta_tids[1]})"
else
	not_ok "-t: only the target thread (tid ${beta_tids[1]})"; diag "$T/t.folded"
fi

$BPFPROF -F 499 -d 2 -p $alpha --per-pid -o "$T/pp.folded" 2> /dev/null
check "--per-pid: root frame is comm-PID" 'only_roots "$T/pp.folded" "alpha-$alpha"'

# --cgroup: alpha goes into a child of a fresh cgroup; the parent is given.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-$$
mkdir -p "$CGROUP_DIR/inner"
echo $alpha > "$CGROUP_DIR/inner/cgroup.procs"
$BPFPROF -F 499 -d 2 --cgroup "$CGROUP_DIR" -o "$T/cg.folded" 2> "$T/cg.err"
if only_roots "$T/cg.folded" alpha; then
	ok "--cgroup: only tasks in the cgroup or below it"
else
	not_ok "--cgroup: only tasks in the cgroup or below it"; diag "$T/cg.folded"; diag "$T/cg.err"
fi
$BPFPROF -F 499 -d 1 --cgroup "bpfprof-test-$$/inner" -o "$T/cg2.folded" 2> /dev/null
check "--cgroup: a path relative to the cgroup v2 mount" 'only_roots "$T/cg2.folded" alpha'
$BPFPROF -F 499 -d 2 --cgroup "$CGROUP_DIR" -p $beta -o "$T/cg3.folded" 2> /dev/null
check "--cgroup with -p: both must hold, so nothing" '[ "$(folded_total "$T/cg3.folded")" = 0 ]'
