# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Java frames (issue 34), walked through HotSpot's own frames with no
# agent, flag or restart, mixed with native ones, for Debian's OpenJDK 17
# and, in a Debian root built once per machine (tests/tools/newer_root.sh),
# OpenJDK 21 and 25: a split of Java methods as the threads' own CPU clocks
# split it, compiled and interpreted; the method C2 inlined shown above its
# caller; zlib's deflate under the Java method that called it through JNI;
# two threads each in its own method; a code cache that churns; a storm of
# short JVMs. Each workload measures itself over the window profiled (it
# waits for $T/go, made once bpfprof samples; bpfprof -p stops when it ends).
#
# A Java frame is "pkg.Class.method (File.java:FIRST)"; pprof and callgrind
# carry the line of its bytecode. The VM's stubs are "[jvm: NAME]".
. tests/lib.sh
export HOME=$T	# the JVM's hsperfdata

F=4999
SPLIT_S=6
RW=tests/workloads

if ! command -v java > /dev/null || ! command -v javac > /dev/null; then
	not_ok "java: java and javac not installed (sudo make deps installs openjdk-17-jdk-headless)"
	exit 0
fi
mkdir -p "$T/cls"
if ! javac --release 17 -d "$T/cls" $RW/JavaSplit.java $RW/JavaDeflate.java $RW/JavaChurn.java \
	$RW/JavaShort.java 2> "$T/javac.err"; then
	not_ok "javac of the Java workloads failed"; diag "$T/javac.err"
	exit 0
fi

# alpha and beta (and one and two) each a compiled frame of its own, not inlined into their caller.
NOINLINE="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaSplit::alpha
	-XX:CompileCommand=dontinline,JavaSplit::beta -XX:CompileCommand=dontinline,JavaSplit::one
	-XX:CompileCommand=dontinline,JavaSplit::two"
FR='\(JavaSplit\.java:[0-9]+\)'

# jwindow NAME SECONDS COMMAND...: a Java workload (COMMAND [OPTIONS] CLASS [ITS OPTIONS]) run
# for SECONDS in the background once warm, stdout to NAME.out, stderr to NAME.wl; returns once it
# is warm, waiting for $T/go (profile_window makes it). Sets PID.
jwindow() {
	local name=$1 secs=$2
	shift 2
	rm -f "$T/go" "$T/$name.ready"
	"$@" --go "$T/go" "$secs" "$T/$name.ready" > "$T/$name.out" 2> "$T/$name.wl" &
	PID=$!
	BG_PIDS+=($PID)
	while [ ! -e "$T/$name.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
}

# split_run NAME JAVA [OPTIONS...]: JavaSplit run and profiled as NAME; sets a and b (alpha's
# and beta's samples), want (the ratio the threads' clocks measured), total (the main thread's
# samples), java (of them, with Java frames), whole (of those, whole from the thread's start
# through main), mixed (alpha's samples in mix, inlined), al (alpha's).
split_run() {
	local name=$1 wa wb
	shift
	jwindow "$name" $SPLIT_S "$@" $NOINLINE -cp "$T/cls" JavaSplit
	profile_window "$name" -F $F
	read -r wa wb < <(sed -n 's/^split alpha_ns=\([0-9]*\) beta_ns=\([0-9]*\)$/\1 \2/p' "$T/$name.out")
	want=$(ratio "${wa:-0}" "${wb:-0}")
	a=$(sum_matching "$T/$name.folded" ";JavaSplit\.alpha $FR(;|\$)")
	b=$(sum_matching "$T/$name.folded" ";JavaSplit\.beta $FR(;|\$)")
	grep '^java;' "$T/$name.folded" > "$T/$name.main"
	total=$(folded_total "$T/$name.main")
	java=$(sum_matching "$T/$name.main" "\\.java:[0-9]+\\)")
	# The thread's first two frames (__clone3, start_thread; a libc with no symbols in the root).
	whole=$(sum_matching "$T/$name.main" "^java;[^;]*;[^;]*;ThreadJavaMain;(.*;)?JavaCalls::call_helper[^;]*;(.*;)?JavaSplit\.main $FR;")
	al=$a
	mixed=$(sum_matching "$T/$name.folded" ";JavaSplit\.alpha $FR;JavaSplit\.mix $FR(;|\$)")
}

# split_checks WHAT: the checks on split_run's figures.
split_checks() {
	local what=$1
	if [ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ $((a + b)) -gt 3000 ] && near_pct "$a" "$b" "$want" 5; then
		ok "$what: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the threads' clocks measured $want (within 5 %)"
	else
		not_ok "$what: alpha/beta = $(ratio "$a" "$b") ($a / $b samples, rc $RC, workload rc $WL_RC), the threads' clocks measured $want"
		top "$T/$name.folded"; diag "$T/$name.err"; diag "$T/$name.wl"
	fi
	check "$what: $(share "$java" "$total")% of the main thread's $total samples carry Java frames (>= 95 %)" \
		'[ "$total" -gt 1000 ] && within "$(share "$java" "$total")" 95 100'
	check "$what: $(share "$whole" "$java")% of them whole from the thread's start (ThreadJavaMain) through JavaCalls::call_helper to JavaSplit.main (>= 95 %)" \
		'[ "$java" -gt 0 ] && within "$(share "$whole" "$java")" 95 100'
}

# 1. Compiled (the default): the split, whole stacks, mix inlined into alpha shown above it.
split_run split java
name=split split_checks "compiled"
# mix runs the very chain work runs, a quarter of alpha's steps (8,000 of 32,000).
check "compiled: mix, which C2 inlined into alpha, above alpha in $(share "$mixed" "$al")% of alpha's $al samples (a quarter of its steps: 20 to 30 %)" \
	'[ "$al" -gt 1000 ] && within "$(share "$mixed" "$al")" 20 30'
above=$(sum_matching "$T/split.folded" ";JavaSplit\.alpha $FR;JavaSplit\.(work|mix) $FR(;|\$)")
check "compiled: work or mix, which C2 inlined into alpha, above alpha in $(share "$above" "$al")% of alpha's $al samples (>= 90 %)" \
	'[ "$al" -gt 1000 ] && within "$(share "$above" "$al")" 90 100'
check "compiled: the summary counts Java's samples: '$(grep -m1 '^bpfprof: java: [0-9]' "$T/split.err")'" \
	'grep -Eq "^bpfprof: java: [0-9]+ samples in Java code, [0-9]+ with their Java frames whole" "$T/split.err"'
anon=$(sum_matching "$T/split.main" "\\[anon\\+0x[0-9a-f]+\\]")
check "compiled: no [anon+0x...] frame left in the main thread's samples ($anon)" '[ "$anon" -le $((total / 100)) ]'

# 2. Interpreted (-Xint): the same split from the interpreter's frames.
split_run xint java -Xint
name=xint split_checks "-Xint"

# 3. Outputs: pprof Functions in JavaSplit.java with Lines, callgrind's fl=, green SVG frames.
jwindow out 3 java $NOINLINE -cp "$T/cls" JavaSplit
profile_window out -F 999 -o "$T/out.pb.gz" -o "$T/out.svg" -o "$T/callgrind.out.java"
if command -v go > /dev/null; then
	go tool pprof -raw "$T/out.pb.gz" > "$T/raw.txt" 2> "$T/raw.err"
	check "pprof: go tool pprof -raw reads it, JavaSplit.alpha's Function in JavaSplit.java" \
		'[ ! -s "$T/raw.err" ] && grep -Eq " JavaSplit\.alpha JavaSplit\.java:[0-9]+ " "$T/raw.txt"'
	go tool pprof -lines -top "$T/out.pb.gz" > "$T/lines.txt" 2> /dev/null
	check "pprof -lines: work's samples at lines of JavaSplit.java" \
		'grep -Eq "JavaSplit\.work JavaSplit\.java:[0-9]+" "$T/lines.txt"'
fi
check "callgrind: fl= names JavaSplit.java" 'grep -Eq "^c?fl=\([0-9]+\) JavaSplit\.java\$" "$T/callgrind.out.java"'
callgrind_annotate "$T/callgrind.out.java" > "$T/annotate.txt" 2> "$T/annotate.err"
check "callgrind: callgrind_annotate reads it: work's samples in JavaSplit.java" \
	'grep -q "JavaSplit\.java:JavaSplit\.work (JavaSplit\.java:[0-9]*)" "$T/annotate.txt"'
check "svg: Java frames in a class of their own (java)" \
	'grep -q "class=\"java\"" "$T/out.svg" && grep -q "JavaSplit.alpha" "$T/out.svg"'

# 4. Two threads, each in its own method: each named, as the threads' clocks split them.
jwindow threads $SPLIT_S java $NOINLINE -cp "$T/cls" JavaSplit --threads
profile_window threads -F $F
read -r w1 w2 < <(sed -n 's/^threads t1_ns=\([0-9]*\) t2_ns=\([0-9]*\)$/\1 \2/p' "$T/threads.out")
s1=$(sum_matching "$T/threads.folded" "^t1;(.*;)?JavaSplit\.one $FR(;|\$)")
s2=$(sum_matching "$T/threads.folded" "^t2;(.*;)?JavaSplit\.two $FR(;|\$)")
check "threads: t1 in JavaSplit.one, t2 in JavaSplit.two: $s1 / $s2 = $(ratio "$s1" "$s2"), the threads' clocks measured $(ratio "${w1:-0}" "${w2:-0}") (within 10 %)" \
	'[ "$RC" = 0 ] && [ $((s1 + s2)) -gt 1000 ] && near_pct "$s1" "$s2" "$(ratio "${w1:-0}" "${w2:-0}")" 10'

# 4a. Off the CPU (--off-cpu): t2's waits, parked after each burst, under the Java frames that
# parked it, as a switch's walk hands over to Java's too.
jwindow offcpu 3 java $NOINLINE -cp "$T/cls" JavaSplit --threads
profile_window offcpu --off-cpu
ot=$(sum_matching "$T/offcpu.folded" '^t2;.*\[off-cpu: sleeping\]')
op=$(sum_matching "$T/offcpu.folded" '^t2;.*;JavaSplit\.lambda\$worker\$[0-9]+ \(JavaSplit\.java:[0-9]+\);(.*;)?java\.util\.concurrent\.locks\.LockSupport\.parkNanos \(LockSupport\.java:[0-9]+\);.*\[off-cpu: sleeping\]')
check "--off-cpu: $(share "$op" "$ot")% of t2's $ot us asleep under JavaSplit's worker and LockSupport.parkNanos (>= 90 %)" \
	'[ "$RC" = 0 ] && [ "$ot" -gt 100000 ] && within "$(share "$op" "$ot")" 90 100'

# 5. zlib's deflate through Deflater's JNI: the Java method that called it below it.
jwindow deflate 4 java -cp "$T/cls" JavaDeflate
profile_window deflate -F $F
Z=';(deflate|deflate_slow|deflate_fast|deflate_stored|longest_match|fill_window|compress_block|send_tree|build_tree|pqdownheap|gen_bitlen|gen_codes|scan_tree|_tr_[a-z_]+|adler32[a-z_]*|crc32[a-z_]*)(;|$)'
zl=$(sum_matching "$T/deflate.folded" "$Z")
zj=$(grep -E "$Z" "$T/deflate.folded" | sum_matching /dev/stdin "java\.util\.zip\.Deflater\.deflateBytesBytes \(Deflater\.java:[0-9]+\);(.*;)?Java_java_util_zip_Deflater_deflateBytesBytes;")
check "deflate: $(share "$zj" "$zl")% of $zl samples in zlib have Deflater.deflateBytesBytes and its JNI function below them (>= 90 %)" \
	'[ "$RC" = 0 ] && [ "$zl" -gt 1000 ] && within "$(share "$zj" "$zl")" 90 100'
zc=$(grep -E "$Z" "$T/deflate.folded" | sum_matching /dev/stdin "JavaDeflate\.compress \(JavaDeflate\.java:[0-9]+\);(.*;)?java\.util\.zip\.Deflater\.deflateBytesBytes")
check "deflate: $(share "$zc" "$zl")% of them with JavaDeflate.compress below (>= 90 %)" \
	'[ "$zl" -gt 0 ] && within "$(share "$zc" "$zl")" 90 100'

# 6. --no-java: the JVM's native frames alone, no Java frame.
jwindow nojava 2 java $NOINLINE -cp "$T/cls" JavaSplit
profile_window nojava -F 999 --no-java
nj=$(sum_matching "$T/nojava.folded" "\\.java:[0-9]+\\)")
check "--no-java: no Java frame ($nj samples with one), the samples kept ($(folded_total "$T/nojava.folded"))" \
	'[ "$RC" = 0 ] && [ "$nj" = 0 ] && [ "$(folded_total "$T/nojava.folded")" -gt 500 ]'

# 7. Bad input: a code cache that churns (classes defined and unloaded, methods deoptimised
# and compiled again while sampled). No crash; its samples kept; what could not be read counted.
jwindow churn 5 java -cp "$T/cls" JavaChurn
profile_window churn -F $F
ct=$(grep '^java;' "$T/churn.folded" | folded_total /dev/stdin)
cj=$(grep '^java;' "$T/churn.folded" | sum_matching /dev/stdin "\\.java:[0-9]+\\)")
check "churn: exit $RC, $(share "$cj" "$ct")% of the main thread's $ct samples with Java frames (>= 80 %), the summary's line there" \
	'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$ct" -gt 1000 ] && within "$(share "$cj" "$ct")" 80 100 && grep -q "^bpfprof: java: " "$T/churn.err"'

# 7a. Bad input: a libjvm.so whose vmStructs bpfprof cannot read (a copy of the JDK whose
# table names CodeHeap::_segmap otherwise; the JVM itself never reads the table). One
# warning, no load failure, its samples kept with their native frames and counted.
jdk=$(dirname "$(dirname "$(readlink -f "$(command -v java)")")")
mkdir -p "$T/jdk/bin" "$T/jdk/lib/server"
cp "$jdk/bin/java" "$T/jdk/bin/"
for f in "$jdk"/lib/* "$jdk"/conf "$jdk"/release; do
	[ "$(basename "$f")" = server ] || ln -s "$f" "$T/jdk/${f#$jdk/}"
done
for f in "$jdk"/lib/server/*; do ln -s "$f" "$T/jdk/lib/server/"; done
rm "$T/jdk/lib/server/libjvm.so"
/usr/bin/python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(d.replace(b"\0_segmap\0", b"\0_segmaX\0"))' \
	"$jdk/lib/server/libjvm.so" "$T/jdk/lib/server/libjvm.so"
jwindow spoilt 2 "$T/jdk/bin/java" -Xshare:off $NOINLINE -cp "$T/cls" JavaSplit
profile_window spoilt -F 999
spt=$(folded_total "$T/spoilt.folded")
spj=$(sum_matching "$T/spoilt.folded" "\\.java:[0-9]+\\)")
check "a libjvm.so whose vmStructs lack CodeHeap::_segmap: exit $RC, one warning naming it, $spt samples kept, none with Java frames ($spj), counted in the summary" \
	'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$(grep -c "warning: Java.*layout cannot be read" "$T/spoilt.err")" = 1 ] &&
	 [ "$spt" -gt 500 ] && [ "$spj" = 0 ] && grep -Eq "^bpfprof: java: .* [1-9][0-9]* of a JVM not read" "$T/spoilt.err"'

# 8. A storm of 1 s JVMs, start-up included: their samples named (no [anon+0x...] frame, no
# Java frame left unread).
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-java-$$
mkdir "$CGROUP_DIR"
(echo $BASHPID > "$CGROUP_DIR/cgroup.procs"; while [ ! -e "$T/go" ]; do sleep 0.05; done
 for i in $(seq 6); do java -cp "$T/cls" JavaShort 1 > /dev/null; done) &
storm=$!
$BPFPROF -v -F 999 --cgroup "$CGROUP_DIR" -o "$T/storm.folded" 2> "$T/storm.err" &
prof=$!
wait_attached "$T/storm.err" $prof
touch "$T/go"
wait $storm
kill -INT $prof
wait $prof
rm -f "$T/go"
st=$(folded_total "$T/storm.folded")
su=$(sum_matching "$T/storm.folded" '\[anon\+0x|\[java: ')
sn=$(sum_matching "$T/storm.folded" ';JavaShort\.spin \(JavaShort\.java:[0-9]+\)(;|$)')
check "storm of 6 java processes of 1 s: $(share "$((st - su))" "$st")% of $st samples named (>= 80 %), $(share "$sn" "$st")% in JavaShort.spin" \
	'[ "$st" -gt 500 ] && within "$(share "$((st - su))" "$st")" 80 100 && [ "$sn" -gt 0 ]'
rmdir "$CGROUP_DIR" 2> /dev/null

# 9. OpenJDK 21 and 25, in a Debian root of their own (built once per machine, cached), run
# chrooted under the host's pids: the same split, compiled.
if root=$(tests/tools/newer_root.sh 2> "$T/root.err"); then
	for v in 21 25; do
		jvm=/usr/lib/jvm/java-$v-openjdk-amd64/bin/java
		if [ ! -x "$root$jvm" ]; then
			not_ok "OpenJDK $v: not in the root ($root)"
			continue
		fi
		split_run jdk$v tests/tools/in_root.sh -b "$T" "$root" $jvm
		name=jdk$v split_checks "OpenJDK $v (in a Debian root)"
		split_run jdk${v}int tests/tools/in_root.sh -b "$T" "$root" $jvm -Xint
		name=jdk${v}int split_checks "OpenJDK $v -Xint (in a Debian root)"
	done
else
	ok "OpenJDK 21 and 25 # SKIP no Debian root for them: $(tail -1 "$T/root.err")"
fi
