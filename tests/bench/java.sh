#!/bin/bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What Java frames cost: bpfprof (Java frames walked and named, the
# default) and bpfprof --no-java (native frames only: the native walk stops
# at the JVM's code cache) attached at once to two busy JVMs (-p, so that
# another JVM on the machine is not in their figures) at 999 Hz while they
# keep both CPUs busy: so both programs run on the same samples. Three workloads, each two JVMs:
#   split  tests/workloads/JavaSplit.java (alpha and beta compiled by C2,
#          kept out of line; some 5 Java frames a sample)
#   deep   tests/workloads/JavaDeep.java, DEPTH calls deep over a C2 loop
#          (DEPTH + 2 Java frames a sample)
#   deepfp the same JVMs run with -XX:+PreserveFramePointer: there
#          --no-java's native walk goes through every Java frame by its
#          frame pointer to the thread's start, so both walk the same frames
#          (the native-only walk of the whole stack, where the others' stops
#          at the first Java frame)
#   big    a code cache of some 100,000 nmethods, as a big service has:
#          BIG_CLASSES generated classes of BIG_METHODS small methods each,
#          compiled by javac at bench time, all compiled by C1 at their
#          first call (-Xcomp -XX:TieredStopAtLevel=1 -XX:-Inline, flushing
#          off, a 1 GiB code cache); then a loop calls chains of BIG_DEPTH
#          of them across the classes, so samples fall all over the cache.
#          The JVMs start once and serve every round.
#   small  the same with SMALL_CLASSES classes (a few thousand nmethods): its
#          BPF time per Java frame against big's is what a big code cache
#          costs a frame (the segment map and the blob's header read from
#          memory spread over 100 MiB).
# Per run of each: the BPF time per sample (the kernel's bpf_stats: the
# sampling program, Java's program tail-called from it included), the
# profiler's CPU (user + system) and peak RSS, the share of the JVMs'
# samples with a Java frame, the share of the program's runs that were
# not the JVMs' (other processes' and idle samples: they return at once), and from bpfprof -v's summary the Java frames
# walked per sample in Java code, the share of those whole, the methods
# and compiled frames named and the time from exec to attached. A round
# disturbed by another busy process is done again (MAX_OTHER). Cells are
# medians of the rounds with min-max. The markdown table goes to stdout and
# to RESULTS.
#
# usage (root): [O=build] [ROUNDS=3] [RUN_S=10] [DEPTH=40] [BIG_CLASSES=400] [BIG_METHODS=250]
#               [BIG_DEPTH=8] [SMALL_CLASSES=8] [MAX_OTHER=30] [NAMES="split deep deepfp small big"]
#               bash tests/bench/java.sh [RESULTS]
# RESULTS defaults to tests/bench/java.md; progress goes to stderr.

set -u -o pipefail
export LC_ALL=C

O=${O:-build}
BPFPROF=$O/bpfprof
RESULTS=${1:-tests/bench/java.md}
ROUNDS=${ROUNDS:-3}
RUN_S=${RUN_S:-10}
DEPTH=${DEPTH:-40}		# JavaDeep's calls over its loop
BIG_CLASSES=${BIG_CLASSES:-400}
BIG_METHODS=${BIG_METHODS:-250}	# a class's methods: BIG_CLASSES x BIG_METHODS nmethods
BIG_DEPTH=${BIG_DEPTH:-8}	# the big loop's chains: calls across classes
SMALL_CLASSES=${SMALL_CLASSES:-8}
MAX_OTHER=${MAX_OTHER:-30}	# % of the program's runs not the JVMs' (the profilers' own included) over which a run is done again
F=999
W=tests/workloads

. "$(dirname "$0")/lib.sh"
bench_start java

pair_ready
for c in java javac jcmd; do
	command -v $c > /dev/null || die "needs $c (make deps installs openjdk-17-jdk-headless)"
done
TIME_FMT='%U %S %M'
JAVA_V=$(java -version 2>&1 | head -1)

javac --release 17 -d "$T/cls" $W/JavaSplit.java $W/JavaDeep.java 2> "$T/javac.err" ||
	{ cat "$T/javac.err" >&2; die "javac failed"; }
NOINLINE_SPLIT="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaSplit::alpha
	-XX:CompileCommand=dontinline,JavaSplit::beta"
NOINLINE_DEEP="-XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaDeep::deep
	-XX:CompileCommand=dontinline,JavaDeep::leaf"

# big_sources DIR CLASSES: the big (small) workload's classes. Class Ci's method mj does a
# step and calls C(i+1)'s mj, d times, then Big.leaf (a short loop); Ci.all
# calls each of its methods once (that compiles them all under -Xcomp);
# Big.main calls every class's all, creates READY_FILE, then calls chains
# through every class from 8 of its methods until SECONDS have passed.
big_sources() {
	awk -v NC=$2 -v NM=$BIG_METHODS -v dir="$1" 'BEGIN {
	for (c = 0; c < NC; c++) {
		f = dir "/C" c ".java"; n = (c + 1) % NC
		printf "final class C%d {\n", c > f
		for (m = 0; m < NM; m++)
			printf "\tstatic long m%d(long x, int d) { x = x * 31 + %d; return d == 0 ? Big.leaf(x) : C%d.m%d(x, d - 1); }\n",
				m, c * NM + m, n, m > f
		printf "\tstatic long all(long x) {\n" > f
		for (m = 0; m < NM; m++)
			printf "\t\tx = m%d(x, 0);\n", m > f
		printf "\t\treturn x;\n\t}\n\tstatic long hot(int m, long x, int d) {\n\t\tswitch (m) {\n" > f
		for (m = 0; m < 8; m++)
			printf "\t\tcase %d: return m%d(x, d);\n", m, int(m * NM / 8) > f
		printf "\t\tdefault: return x;\n\t\t}\n\t}\n}\n" > f
		close(f)
	}
	f = dir "/Big.java"
	print "// usage: java Big SECONDS READY_FILE DEPTH" > f
	print "class Big {\n\tstatic volatile long sink;" > f
	print "\tstatic long leaf(long x) { for (int i = 0; i < 64; i++) { x ^= x << 13; x ^= x >>> 7; x ^= x << 17; } return x; }" > f
	print "\tstatic long all(int c, long x) {\n\t\tswitch (c) {" > f
	for (c = 0; c < NC; c++) printf "\t\tcase %d: return C%d.all(x);\n", c, c > f
	print "\t\tdefault: return x;\n\t\t}\n\t}" > f
	print "\tstatic long hot(int c, int m, long x, int d) {\n\t\tswitch (c) {" > f
	for (c = 0; c < NC; c++) printf "\t\tcase %d: return C%d.hot(m, x, d);\n", c, c > f
	print "\t\tdefault: return x;\n\t\t}\n\t}" > f
	printf "\tstatic final int NC = %d;\n", NC > f
	print "\tpublic static void main(String[] args) throws Exception {" > f
	print "\t\tdouble seconds = Double.parseDouble(args[0]);\n\t\tint depth = Integer.parseInt(args[2]);\n\t\tlong x = 1;" > f
	print "\t\tfor (int c = 0; c < NC; c++) x = all(c, x);" > f
	print "\t\tnew java.io.File(args[1]).createNewFile();" > f
	print "\t\tlong stop = System.nanoTime() + (long)(seconds * 1e9);" > f
	print "\t\tfor (int k = 0; System.nanoTime() < stop; k++)" > f
	print "\t\t\tfor (int c = 0; c < NC; c++) x = hot(c, (k + c) & 7, x, depth);" > f
	print "\t\tsink = x;\n\t}\n}" > f
	}'
}
BIG_OPTS="-Xcomp -XX:TieredStopAtLevel=1 -XX:-Inline -XX:ReservedCodeCacheSize=1g -XX:-UseCodeCacheFlushing"

# ready FILE... : wait (up to 120 s) until each exists.
ready() {
	local f i
	for f in "$@"; do
		for ((i = 0; i < 1200; i++)); do [ -e "$f" ] && break; sleep 0.1; done
		[ -e "$f" ] || return 1
	done
}

# share FILE: % of the JVMs' samples (root "java", their main threads) in FILE with a Java frame.
share() {
	awk '/^java;/ { n = $NF; t += n; if (/\.java:[0-9]+\)/) p += n }
	     END { if (t) printf "%.1f", 100 * p / t }' "$1"
}

# summary NAME ERR: the figures of bpfprof -v's java lines and its attach time.
summary() {
	local n=$1 e=$2 line
	line=$(grep '^bpfprof: java: [0-9]* samples in Java code' "$e")
	[ -n "$line" ] || { note "  $n: no java line"; return; }
	note "  ${line#bpfprof: }"
	put "javasamples.$n" "$(sed -E 's/.*java: ([0-9]+) samples in Java code.*/\1/' <<< "$line")"
	put "whole.$n" "$(sed -E 's/.*java: ([0-9]+) samples in Java code, ([0-9]+) with .*/\2 \1/' <<< "$line" |
		awk '$2 { printf "%.2f", 100 * $1 / $2 }')"
	put "cutfault.$n" "$(sed -E 's/.* ([0-9]+) at a frame not readable.*/\1/' <<< "$line")"
	put "methods.$n" "$(sed -E 's/.* ([0-9]+) methods and ([0-9]+) compiled frames named.*/\1/' <<< "$line")"
	put "compiled.$n" "$(sed -E 's/.* ([0-9]+) methods and ([0-9]+) compiled frames named.*/\2/' <<< "$line")"
	put "perframe.$n" "$(sed -nE 's/.* ([0-9]+) Java frames walked$/\1/p' "$e" | head -1 |
		awk -v s="$(sed -E 's/.*java: ([0-9]+) samples in Java code.*/\1/' <<< "$line")" \
		's { printf "%.1f", $1 / s }')"
	put "other.$n" "$(awk '/^bpfprof: .* at [0-9]+ Hz on .*: [0-9]+ samples/ { sub(/.*: /, ""); k = $1 }
		/^bpfprof: idle [0-9]+ skipped/ { o = $3 + $NF }
		END { if (k + o) printf "%.1f", 100 * o / (k + o) }' "$e")"
	put "attach.$n" "$(sed -nE 's/.*timing: attached ([0-9]+) ms after exec.*/\1/p' "$e" | head -1)"
	put "load.$n" "$(sed -nE 's/.*the Java walk loaded in ([0-9.]+) ms.*/\1/p' "$e" | head -1)"
}

# both NAME: the two profilers at once on the same samples of NAME's two JVMs
# (started here for split and deep, already running for big and small: GEN_PIDS).
# Returns 2, its figures dropped, if more than MAX_OTHER % of the program's runs
# were not the JVMs' (another process took the CPUs: the walks' costs rise with it).
both() {
	local n=$1 d=$T/run w=() rc i other DATA=$T/round.data
	rm -rf "$d" "$DATA" && mkdir -p "$d"
	case $n in
	split | deep | deepfp)
		rm -f "$T"/ready.*
		for i in 1 2; do
			case $n in
			split) java $NOINLINE_SPLIT -cp "$T/cls" JavaSplit $((RUN_S + 4)) "$T/ready.$i" > /dev/null & ;;
			deep) java $NOINLINE_DEEP -cp "$T/cls" JavaDeep $((RUN_S + 4)) "$T/ready.$i" $DEPTH & ;;
			deepfp) java -XX:+PreserveFramePointer $NOINLINE_DEEP -cp "$T/cls" JavaDeep \
				$((RUN_S + 4)) "$T/ready.$i" $DEPTH & ;;
			esac
			w+=($!)
		done
		PIDS+=("${w[@]}")
		ready "$T/ready.1" "$T/ready.2" || { kill "${w[@]}" 2>/dev/null; note "$n: not ready"; return 1; }
		pair_run "$d" --no-java -v -p "$(IFS=,; echo "${w[*]}")"
		rc=$?
		kill "${w[@]}" 2>/dev/null
		wait "${w[@]}" 2>/dev/null
		;;
	*)
		pair_run "$d" --no-java -v -p "$(IFS=,; echo "${GEN_PIDS[*]}")"
		rc=$?
		;;
	esac
	[ $rc = 0 ] || return 1
	put "ns.$n.java" "$(cat "$d/0.ns")"
	put "ns.$n.native" "$(cat "$d/1.ns")"
	put "cpu.$n.java" "$(cpu_of "$d/frames.time")"
	put "cpu.$n.native" "$(cpu_of "$d/native.time")"
	put "rss.$n.java" "$(awk '{ print $3 / 1024 }' "$d/frames.time" | tail -1)"
	put "rss.$n.native" "$(awk '{ print $3 / 1024 }' "$d/native.time" | tail -1)"
	put "share.$n.java" "$(share "$d/frames.folded")"
	put "share.$n.native" "$(share "$d/native.folded")"
	note "  $n: BPF $(cat "$d/0.ns") and $(cat "$d/1.ns") ns a sample; CPU" \
		"$(cpu_of "$d/frames.time") and $(cpu_of "$d/native.time") s;" \
		"$(share "$d/frames.folded")% with Java frames"
	summary "$n" "$d/frames.err"
	[ -n "${KEEP:-}" ] && cp -r "$d" "$T/run.$n.$r.$(date +%s)"
	other=$(awk '$1 == "other.'$n'" { print $2 }' "$DATA")
	if awk -v o="${other:-100}" -v m="$MAX_OTHER" 'BEGIN { exit !(o > m) }'; then
		note "  $n: ${other:-?}% of the runs not the JVMs' (> $MAX_OTHER %): another process was busy; dropped"
		return 2
	fi
	cat "$DATA" >> "$T/data"
	return 0
}
# round NAME: both NAME, again (twice at most) while another process disturbs it.
round() {
	local k
	for k in 1 2 3; do
		both "$1"
		case $? in
		0) return 0 ;;
		2) DROPPED=$((DROPPED + 1)); [ $k -lt 3 ] && sleep 5 ;;
		*) return 1 ;;
		esac
	done
	return 1
}

# gen_start NAME CLASSES: the generated workload's two JVMs, running until
# NAME's rounds are done; sets GEN_PIDS.
gen_start() {
	local n=$1 t0 i
	mkdir -p "$T/$n/src"
	big_sources "$T/$n/src" "$2"
	note "$n: javac of $(($2 * BIG_METHODS)) methods in $2 classes"
	javac --release 17 -d "$T/$n/cls" "$T/$n"/src/*.java 2> "$T/javac.err" ||
		{ cat "$T/javac.err" >&2; return 1; }
	GEN_PIDS=()
	t0=$(date +%s%N)
	for i in 1 2; do
		java $BIG_OPTS -cp "$T/$n/cls" Big $((ROUNDS * 3 * (RUN_S + 10) + 30)) "$T/$n.ready.$i" $BIG_DEPTH &
		GEN_PIDS+=($!)
	done
	PIDS+=("${GEN_PIDS[@]}")
	ready "$T/$n.ready.1" "$T/$n.ready.2" || { note "$n: not ready"; gen_stop; return 1; }
	put "ready.$n" "$((($(date +%s%N) - t0) / 1000000))"
	for i in "${GEN_PIDS[@]}"; do
		jcmd "$i" Compiler.codecache > "$T/codecache" 2>&1
		put "nmethods.$n" "$(sed -nE 's/.*nmethods=([0-9]+).*/\1/p' "$T/codecache")"
		put "codeused.$n" "$(sed -nE 's/.* used=([0-9]+)Kb.*/\1/p' "$T/codecache" | awk '{ print $1 / 1024 }')"
	done
	note "$n: ready after $(median ready.$n) ms; $(median nmethods.$n) nmethods, $(median codeused.$n) MiB of code"
}
gen_stop() {
	kill "${GEN_PIDS[@]}" 2>/dev/null
	wait "${GEN_PIDS[@]}" 2>/dev/null
	GEN_PIDS=()
}

NAMES=${NAMES:-split deep deepfp small big}	# the workloads run (the table has them all)
DROPPED=0
# FROM_DATA="FILE...": no runs, the table made from the data files of earlier runs (KEEP=1 keeps
# each run's in its scratch directory), their rounds together.
if [ -n "${FROM_DATA:-}" ]; then
	cat $FROM_DATA > "$DATA" || die "cannot read $FROM_DATA"
	NAMES=
	DROPPED=
fi
[ -n "$NAMES" ] && note "$ROUNDS rounds of $RUN_S s runs at $F Hz over $NAMES (some" \
	"$((ROUNDS * 5 * (RUN_S + 5) / 60 + 2)) minutes)"
for ((r = 0; r < ROUNDS; r++)); do
	for n in split deep deepfp; do
		[[ " $NAMES " == *" $n "* ]] || continue
		note "round $((r + 1)) of $ROUNDS: $n"
		round $n || note "no figures this round"
	done
done
for n in small big; do
	[[ " $NAMES " == *" $n "* ]] || continue
	[ $n = small ] && c=$SMALL_CLASSES || c=$BIG_CLASSES
	if gen_start $n $c; then
		for ((r = 0; r < ROUNDS; r++)); do
			note "round $((r + 1)) of $ROUNDS: $n"
			round $n || note "no figures this round"
		done
		gen_stop
	else
		note "$n: no figures"
	fi
done

# perframe_ns NAME: (Java's BPF ns - native's) / Java frames walked a sample, medians.
perframe_ns() {
	awk -v a="$(median "ns.$1.java")" -v b="$(median "ns.$1.native")" -v f="$(median "perframe.$1")" \
		'BEGIN { if (a == "" || b == "" || f == "" || f == 0) print "-"; else printf "%.0f\n", (a - b) / f }'
}
# row LABEL CMD...: a table row, CMD's output with NAME appended for each workload.
row() {
	local label=$1 n line
	shift
	line="| $label |"
	for n in split deep deepfp small big; do line="$line $("$@" "$n") |"; done
	echo "$line"
}
cj() { cell "$1.$2.java" "$3"; }
cn() { cell "$1.$2.native" "$3"; }
col() { local k=$1 d=$2; shift 2; cell "$k.$1" "$d"; }
r_ns_java() { cj ns "$1" 0; }
r_ns_native() { cn ns "$1" 0; }
r_ratio() { ratio "ns.$1.java" "ns.$1.native"; }
r_cpu_java() { cj cpu "$1" 2; }
r_cpu_native() { cn cpu "$1" 2; }
r_rss_java() { cj rss "$1" 1; }
r_rss_native() { cn rss "$1" 1; }
r_share() { echo "$(cj share "$1" 1) ($(cn share "$1" 1))"; }
r_named() { echo "$(col methods 0 "$1"), $(col compiled 0 "$1")"; }
r_attach() { echo "$(col attach 0 "$1") ($(col load 0 "$1"))"; }
r_nm() { [ "$1" = small ] || [ "$1" = big ] && echo "$(col nmethods 0 "$1") ($(col codeused 0 "$1") MiB)" || echo "-"; }
{
	echo "Java frames, $(date -u +%Y-%m-%d), $(nproc) CPUs, kernel $(uname -r), $JAVA_V:"
	echo "two busy JVMs (-p both), $F Hz, $RUN_S s; bpfprof -v and bpfprof -v --no-java at once on the"
	echo "same samples; $([ -n "${FROM_DATA:-}" ] && echo "the rounds of $(wc -w <<< "$FROM_DATA") runs' data" || echo "$ROUNDS rounds"); median (min-max). split: JavaSplit (C2, alpha and beta not"
	echo "inlined); deep: JavaDeep $DEPTH calls deep; deepfp: the same, -XX:+PreserveFramePointer; small and big: $SMALL_CLASSES and $BIG_CLASSES classes of"
	echo "$BIG_METHODS generated methods each, compiled by C1 at their first call ($BIG_OPTS),"
	echo "then chains of $BIG_DEPTH calls across the classes; the JVMs ready $(col ready 0 small) and"
	echo "$(col ready 0 big) ms after exec (javac and the JVMs' start are not in the rounds). ${DROPPED:-Some}"
	echo "runs dropped and done again: over $MAX_OTHER % of the program's runs were not the JVMs'."
	echo "Command: \`sudo ROUNDS=$ROUNDS RUN_S=$RUN_S DEPTH=$DEPTH BIG_CLASSES=$BIG_CLASSES" \
		"BIG_METHODS=$BIG_METHODS BIG_DEPTH=$BIG_DEPTH SMALL_CLASSES=$SMALL_CLASSES O=$O bash tests/bench/java.sh\`."
	echo
	echo "| | split | deep | deepfp | small | big |"
	echo "|---|---|---|---|---|---|"
	row "nmethods a JVM (code used)" r_nm
	row "BPF time per sample, ns: bpfprof (Java frames)" r_ns_java
	row "BPF time per sample, ns: bpfprof --no-java" r_ns_native
	row "ratio (target <= 2)" r_ratio
	row "Java frames walked per sample in Java code" col perframe 1
	row "BPF ns per Java frame ((Java - native) / Java frames; native frames below the JVM's code in it)" perframe_ns
	row "profiler CPU, s: bpfprof (Java frames)" r_cpu_java
	row "profiler CPU, s: bpfprof --no-java" r_cpu_native
	row "peak RSS, MiB: bpfprof (Java frames)" r_rss_java
	row "peak RSS, MiB: bpfprof --no-java" r_rss_native
	row "JVMs' samples with Java frames, %: bpfprof (--no-java)" r_share
	row "the program's runs on other processes or idle, %" col other 1
	row "samples in Java code whose Java frames are whole, %" col whole 2
	row "samples cut at a frame not readable" col cutfault 0
	row "methods named, compiled frames named" r_named
	row "attached after exec, ms (the Java walk loaded in, ms)" r_attach
	echo
	for n in split deep deepfp small big; do
		awk -v n=$n -v r="$(r_ratio $n)" 'BEGIN { if (r == "-") print n ": no figures.";
			else printf "%s: BPF time ratio %s: %s the target of <= 2.\n", n, r, r <= 2 ? "meets" : "misses" }'
	done
} > "$T/table"
cat "$T/table"
cp "$T/table" "$RESULTS"
note "written to $RESULTS"
