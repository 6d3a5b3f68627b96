# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# What the benchmarks share: progress and failure messages, the BPF time
# of a profiler's program, and their numbers: measurements go into the
# file $DATA as "KEY VALUE" lines, one per run.

note() { echo "bench: $*" >&2; }

# bench_start NAME: a scratch directory $T (KEEP=1 keeps it), the numbers in
# $DATA; at exit, everything in PIDS stopped and bpf_stats as it was.
bench_start() {
	T=$(mktemp -d "/tmp/bpfprof-$1.XXXXXX")
	DATA=$T/data
	PIDS=()
	STATS_BEFORE=
	trap bench_cleanup EXIT
	trap 'exit 130' INT TERM HUP
}
bench_cleanup() {
	local p
	for p in "${PIDS[@]}"; do kill "$p" 2>/dev/null; done
	wait 2>/dev/null
	[ -n "$STATS_BEFORE" ] && sysctl -qw kernel.bpf_stats_enabled="$STATS_BEFORE"
	[ -n "${KEEP:-}" ] && note "kept $T" || rm -rf "$T"
}
# bpf_stats_on: the kernel counts BPF programs' run time only while this is on.
bpf_stats_on() {
	STATS_BEFORE=$(sysctl -n kernel.bpf_stats_enabled) || die "no kernel.bpf_stats_enabled"
	sysctl -qw kernel.bpf_stats_enabled=1 || die "cannot enable kernel.bpf_stats_enabled"
}
die() { note "$*"; exit 1; }
wait_for_pids() { local p; for p in "$@"; do while kill -0 "$p" 2>/dev/null; do sleep 0.2; done; done; }

# bpf_ns PID [TYPE]: until PID exits, the run time per run of its busiest
# program of TYPE (7, perf events, by default; 26, tracing) from its
# fdinfo, the kernel's bpf_stats; sets BPF_NS.
bpf_ns() {
	local f k v type ns cnt most
	BPF_NS=
	while kill -0 "$1" 2>/dev/null; do
		most=0
		for f in /proc/$1/fdinfo/*; do
			type= ns= cnt=
			while read -r k v; do
				case $k in
				prog_type:) type=$v ;;
				run_time_ns:) ns=$v ;;
				run_cnt:) cnt=$v ;;
				esac
			done 2>/dev/null < "$f"
			if [ "$type" = "${2:-7}" ] && [ "${cnt:-0}" -gt "$most" ]; then
				most=$cnt
				BPF_NS=$((ns / cnt))
			fi
		done
		sleep 0.5
	done
}

# pair_ready: what pair_run needs (root, the built bpfprof, /usr/bin/time), bpf_stats on.
pair_ready() {
	[ "$(id -u)" = 0 ] || die "run as root: the profilers load BPF programs (sudo make bench)"
	[ -x "$BPFPROF" ] || die "build first: make O=$O"
	[ -x /usr/bin/time ] || die "needs time (make deps)"
	bpf_stats_on
}

# pair_run DIR NOFLAG [ARGS...]: bpfprof (a runtime's frames read, the default) and bpfprof
# NOFLAG (native frames only) attached at once to the whole machine at $F Hz for $RUN_S s, so
# both run on the same samples: DIR/frames.* and DIR/native.* (.folded, .err, .time: user and
# system CPU; TIME_FMT='%U %S %M' adds the peak RSS in KiB), the BPF time per sample in DIR/0.ns
# and DIR/1.ns. Fails if a profile is missing.
pair_run() {
	local d=$1 noflag=$2 m pids=()
	shift 2
	for m in frames native; do
		/usr/bin/time -f "${TIME_FMT:-%U %S}" -o "$d/$m.time" "$BPFPROF" -F $F -d "$RUN_S" "$@" \
			$([ $m = native ] && echo "$noflag") -o "$d/$m.folded" 2> "$d/$m.err" &
		pids+=($!)
	done
	sleep 0.2
	for m in 0 1; do
		(bpf_ns "$(pgrep -P "${pids[$m]}" bpfprof)"; echo "$BPF_NS" > "$d/$m.ns") &
	done
	wait_for_pids "${pids[@]}"
	wait "${pids[@]}"
	sleep 0.6
	for m in frames native; do
		[ -s "$d/$m.folded" ] || { note "$m: no profile"; cat "$d/$m.err" >&2; return 1; }
	done
}
# cpu_of DIR/M.time: the user + system seconds /usr/bin/time wrote.
cpu_of() { awk '{ print $1 + $2 }' "$1" | tail -1; }

# put KEY VALUE: one measurement; a run that gave no value adds none.
put() { [ -z "${2:-}" ] || echo "$1 $2" >> "$DATA"; }

# stats KEY: "median min max" of KEY's values, nothing if it has none.
stats() {
	awk -v k="$1" '$1 == k { print $2 }' "$DATA" 2>/dev/null | sort -g |
		awk '{ v[NR] = $1 } END { if (NR) print (NR % 2 ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2), v[1], v[NR] }'
}
median() { stats "$1" | cut -d' ' -f1; }

# cell KEY DECIMALS [SCALE]: "median (min-max)", the values times SCALE; "-" if none.
cell() {
	stats "$1" | awk -v d="$2" -v s="${3:-1}" '
		{ f = "%." d "f"; m = sprintf(f, $1 * s); lo = sprintf(f, $2 * s); hi = sprintf(f, $3 * s)
		  print lo == hi ? m : m " (" lo "-" hi ")"; found = 1 }
		END { if (!found) print "-" }'
}

# ratio KEY_A KEY_B: median(A) / median(B) to two places, "-" if either is missing.
ratio() {
	awk -v a="$(median "$1")" -v b="$(median "$2")" \
		'BEGIN { if (a == "" || b == "" || b == 0) print "-"; else printf "%.2f\n", a / b }'
}
