# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# JIT frames: Node.js with --perf-basic-prof lists the code V8 compiles in
# /tmp/perf-PID.map; its functions must come out as JIT frames (_[j]) named
# as the script names them, carrying the script's 2:1 split, in folded and
# in pprof (where the map's own name is the system name).
. tests/lib.sh
export HOME=$T	# go keeps a cache there

SECONDS_RUN=4

if ! command -v node > /dev/null; then
	not_ok "node: not installed (sudo make deps installs nodejs)"
	exit 0
fi

# --no-turbo-inlining: else TurboFan folds the functions into their caller,
# frames and all. The V8 log goes to $T, not to the current folder.
node --perf-basic-prof --no-turbo-inlining --no-logfile-per-isolate --logfile="$T/v8.log" \
	tests/workloads/jit.js $((SECONDS_RUN + 3)) &
pid=$!
BG_PIDS+=($pid)
map=/tmp/perf-$pid.map
[ -z "${KEEP:-}" ] && trap 'rm -f "$map"; cleanup' EXIT
# Warm-up: the functions compiled (TurboFan's background compiles too) and
# listed before sampling starts.
sleep 2
check "node writes $map" '[ -s "$map" ]'
$BPFPROF -F 4999 -d $SECONDS_RUN -p $pid -o "$T/jit.folded" -o "$T/jit.pb.gz" 2> "$T/jit.err"
rc=$?
check "node: exit status 0" '[ $rc = 0 ]'
total=$(folded_total "$T/jit.folded")
check "node: output passes the strict folded checker" '[ -n "$total" ]'
total=${total:-0}

# Samples in burn, or in what it calls: V8's garbage collector takes 10-20 %
# of them, run by burn's allocations.
two=$(sum_matching "$T/jit.folded" ';hotFunctionA_\[j\];burn_\[j\](;|$)')
one=$(sum_matching "$T/jit.folded" ';hotFunctionB_\[j\];burn_\[j\](;|$)')
if within "$((two + one))" $((total * 80 / 100)) "$total"; then
	ok "node: $((two + one)) of $total samples in JIT frames hotFunctionA|B_[j];burn_[j]"
else
	not_ok "node: only $((two + one)) of $total samples in JIT frames hotFunctionA|B_[j];burn_[j]"
	diag "$T/jit.folded"
fi
# Both run the same machine code (burn), so the split is the script's; the
# JIT's own work (compiling, GC) makes it noisier than a C workload's.
r=$(ratio "$two" "$one")
if within "$r" 1.75 2.25; then
	ok "node: hotFunctionA/hotFunctionB = $r (2 +- 12.5%; $two vs $one samples)"
else
	not_ok "node: hotFunctionA/hotFunctionB = $r, want 2 +- 12.5%" "$two vs $one samples"
	diag "$T/jit.folded"
fi
check "node: the script's frames are JIT frames only" \
	"! grep -q '\\(hotFunction[AB]\\|burn\\)\\(;\\| [0-9]*\$\\)' '$T/jit.folded'"
check "node: V8's kind and tier marks are not in the names" \
	"! grep -q 'JS:\\|LazyCompile:' '$T/jit.folded'"
named=$(sum_matching "$T/jit.folded" '^node;.*\(anonymous\)_\[j\];hotFunction[AB]_\[j\];burn_\[j\](;|$)')
if within "$named" $(((two + one) * 95 / 100)) "$((two + one))"; then
	ok "node: $named of $((two + one)) walk on through JIT callers: (anonymous)_[j];hotFunction?_[j];burn_[j]"
else
	not_ok "node: only $named of $((two + one)) reach the script's top level through JIT frames"
	diag "$T/jit.folded"
fi

# pprof: the function name, the script as its file, the map's line as system name.
go tool pprof -raw -symbolize=none "$T/jit.pb.gz" > "$T/raw" 2> "$T/raw.err"
if grep -q ' hotFunctionA [^ ]*/tests/workloads/jit.js:0 s=0(JS:[~^+*]\?hotFunctionA [^ ]*/jit.js:[0-9]*:[0-9]*)$' "$T/raw"; then
	ok "pprof: hotFunctionA, its script, and V8's name as the system name"
else
	not_ok "pprof: no hotFunctionA with its script and V8's name"; diag "$T/raw.err"
	grep -m 5 hotFunction "$T/raw" | sed 's/^/#   | /'
fi
# Cumulative samples per function, as the folded output counts them.
go tool pprof -top -symbolize=none -sample_index=samples -nodefraction=0 -nodecount=1000000 \
	"$T/jit.pb.gz" > "$T/top" 2> /dev/null
for f in hotFunctionA hotFunctionB; do
	p=$(awk -v f=$f '$NF == f { print $4 }' "$T/top")
	want=$(sum_matching "$T/jit.folded" ";${f}_\\[j\\](;|\$)")
	check "pprof: $f in ${p:-no} samples, as in folded ($want)" '[ "${p:-x}" = "$want" ]'
done

# The summary's line on code in anonymous memory no perf map names: none for
# node with its map; one, with a JIT's advice (not a JVM's), for node without.
anon_line() { grep "^bpfprof: node (pid $2): .* anonymous executable memory" "$1"; }
check "node with its perf map: no summary line on anonymous memory ($(anon_line "$T/jit.err" $pid | cut -c1-80))" \
	'grep -q "^bpfprof: walked" "$T/jit.err" && [ -z "$(anon_line "$T/jit.err" $pid)" ]'
node tests/workloads/jit.js $((SECONDS_RUN + 1)) > /dev/null &
bare=$!
BG_PIDS+=($bare)
sleep 2
$BPFPROF -F 999 -d 2 -p $bare -o "$T/bare.folded" 2> "$T/bare.err"
line=$(anon_line "$T/bare.err" $bare)
check "node without a perf map: one line, naming a perf map, not a JVM's tools: '$line'" \
	'[ "$(anon_line "$T/bare.err" $bare | wc -l)" = 1 ] && echo "$line" | grep -qF "/tmp/perf-$bare.map (as node --perf-basic-prof does)" && ! echo "$line" | grep -q jcmd'
