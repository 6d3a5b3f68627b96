# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A JIT's code that no runtime's walk reads, as a JVM is with --no-java: its
# compiled code runs in anonymous memory that nothing names, every sample
# "java;[truncated];[anon+0x...]". The summary says so in one line, with its
# share and what names the frames; doing what it says (jcmd PID
# Compiler.perfmap, -XX:+PreserveFramePointer) names them and the line goes.
# (Java's own frames: e2e/java.) tests/workloads/jvm_busy.java, compiled here with javac.
. tests/lib.sh
export HOME=$T	# the JVM's hsperfdata and jcmd's files

if ! command -v javac > /dev/null || ! command -v jcmd > /dev/null; then
	ok "jvm # SKIP javac or jcmd not installed (openjdk-17-jdk-headless)"
	exit 0
fi
if ! javac -d "$T" tests/workloads/jvm_busy.java 2> "$T/javac.err"; then
	not_ok "javac tests/workloads/jvm_busy.java failed"; diag "$T/javac.err"
	exit 0
fi

# jvm NAME JAVA_OPTIONS...: jvm_busy in the background (for up to 30 s once warm: jvm_end ends
# it); returns once it is warm. -Xbatch: the JIT compiles as the code runs, not when a compiler
# thread gets the CPU, so by then the code that runs is compiled, however loaded the machine.
# run() is left to the interpreter: compiled on its stack seconds after ready (after jcmd wrote
# the map, on a loaded machine), it would take alpha, beta and work inlined into code no map names.
# Sets PID; its perf map is removed at the end.
jvm() {
	local name=$1
	shift
	java -Xbatch -XX:CompileCommand=quiet -XX:CompileCommand=exclude,JvmBusy::run "$@" \
		-cp "$T" JvmBusy 30 "$T/$name.ready" > "$T/$name.out" 2> "$T/$name.wl" &
	PID=$!
	BG_PIDS+=($PID)
	MAPS+=("/tmp/perf-$PID.map")
	while [ ! -e "$T/$name.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
}
jvm_end() { kill $PID 2> /dev/null; wait $PID 2> /dev/null; return 0; }
MAPS=()
[ -z "${KEEP:-}" ] && trap 'rm -f "${MAPS[@]}"; cleanup' EXIT
# anon_line NAME: the summary's lines on PID's anonymous code.
anon_line() { grep "^bpfprof: .* (pid $PID): .* anonymous executable memory" "$T/$1.err"; }

# 1. No perf map: the line, its share the profile's, naming what would name the frames.
# (Each run wants 100 samples at least: two `yes` leave a JVM a fifth of a CPU.)
jvm bare
rm -f "/tmp/perf-$PID.map"
$BPFPROF --no-java -F 999 -d 3 -p $PID -o "$T/bare.folded" 2> "$T/bare.err"
rc=$?
total=$(folded_total "$T/bare.folded")
# Its innermost user frame [anon+0x...] (the kernel's frames above it, if any).
anon=$(sum_matching "$T/bare.folded" '\[anon\+0x[0-9a-f]+\](;[^;]*_\[k\])*$')
line=$(anon_line bare)
said=$(echo "$line" | sed -n 's/.*: \([0-9]*\)% of its samples.*/\1/p')
check "no perf map: exit $rc, $anon of ${total:-no} samples ($(share "$anon" "${total:-0}") %) in [anon+0x...] (>= 80 %)" \
	'[ $rc = 0 ] && [ "${total:-0}" -gt 100 ] && within "$(share "$anon" "$total")" 80 100'
check "the summary says it in one line: '$line'" \
	'[ "$(anon_line bare | wc -l)" = 1 ] && echo "$line" | grep -q "^bpfprof: java (pid $PID): [0-9]*% of its samples"'
check "the line's share ($said %) is the profile's ($(share "$anon" "${total:-0}") %, within 1 point)" \
	'[ -n "$said" ] && within "$(awk -v s="$said" -v a="$(share "$anon" "$total")" "BEGIN { print s - a }")" -1 1'
says_all() {
	local w
	for w in "$@"; do echo "$line" | grep -qF -- "$w" || return 1; done
}
check "the line names what would name the frames: jcmd $PID Compiler.perfmap, DumpPerfMapAtExit, perf-map-agent, PreserveFramePointer" \
	'says_all "jcmd $PID Compiler.perfmap" DumpPerfMapAtExit perf-map-agent PreserveFramePointer'

# 2. As the line says: jcmd writes the map while it runs; the frames named, no line.
# (A new JVM: the first ran under bpfprof for a while, loaded, and may be nearly done.)
jvm_end
jvm map
jcmd $PID Compiler.perfmap > "$T/jcmd.out" 2>&1
$BPFPROF --no-java -F 999 -d 3 -p $PID -o "$T/map.folded" 2> "$T/map.err"
rc=$?
total=$(folded_total "$T/map.folded")
# The JIT may have inlined work into alpha and beta: the leaf is one of the three.
JB='long JvmBusy\.(alpha|beta|work)\(long(, long)?\)_\[j\]$'
named=$(sum_matching "$T/map.folded" ";$JB")
check "after jcmd $PID Compiler.perfmap: exit $rc, $named of ${total:-no} samples ($(share "$named" "${total:-0}") %) in JvmBusy's methods as JIT frames (>= 80 %)" \
	'[ $rc = 0 ] && [ "${total:-0}" -gt 100 ] && within "$(share "$named" "$total")" 80 100'
check "with its perf map: no line on anonymous memory ($(anon_line map | cut -c1-80))" '[ -z "$(anon_line map)" ]'

# 3. -XX:+PreserveFramePointer as well: whole stacks, from the thread's start to work.
jvm_end
jvm fp -XX:+PreserveFramePointer
jcmd $PID Compiler.perfmap > "$T/jcmd.out" 2>&1
$BPFPROF --no-java -F 999 -d 3 -p $PID -o "$T/fp.folded" 2> "$T/fp.err"
rc=$?
total=$(folded_total "$T/fp.folded")
whole=$(sum_matching "$T/fp.folded" "^java;__clone3;start_thread;.*;JavaMain;.*;$JB")
check "-XX:+PreserveFramePointer and the map: exit $rc, $whole of ${total:-no} samples ($(share "$whole" "${total:-0}") %) whole from start_thread to JvmBusy's methods (>= 80 %), no line" \
	'[ $rc = 0 ] && [ "${total:-0}" -gt 100 ] && within "$(share "$whole" "$total")" 80 100 && [ -z "$(anon_line fp)" ]'
jvm_end
