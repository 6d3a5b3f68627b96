# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Whole user stacks from code built without frame pointers, with the
# binaries' CFI: walked in the BPF program with unwind tables (--unwind auto,
# the default), or unwound in userspace from each sample's stack copy
# (--unwind dwarf). Every check holds for both.
. tests/lib.sh

# 4999 Hz: at 9999 Hz a machine whose CPUs other processes load too cannot
# unwind every sample in time, and the ring buffer drops the largest first:
# samples in the signal handler, whose stack holds the signal frame.
F=4999
SECONDS_RUN=6

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }

# profile NAME MODE WORKLOAD ARGS...: profiles one run of the workload.
profile() {
	local name=$1 mode=$2
	shift 2
	start_workload "$@"
	local pid=$!
	sleep 0.3
	$BPFPROF -F $F -d $SECONDS_RUN -p $pid --unwind "$mode" -o "$T/$name.folded" 2> "$T/$name.err"
	kill $pid 2> /dev/null
}

# 1. The 2:1 workload without frame pointers: the whole chain, the split.
for mode in auto dwarf; do
	profile nofp-$mode $mode split-nofp $((SECONDS_RUN + 2))
	total=$(folded_total "$T/nofp-$mode.folded")
	full=$(sum_matching "$T/nofp-$mode.folded" '^split-nofp;_start;__libc_start_main;__libc_start_call_main;main;split_caller;split_(two_thirds|one_third)(;|$)')
	if [ "$total" -gt 10000 ] && within "$(share "$full" "$total")" 95 100; then
		ok "no frame pointers, --unwind $mode: $(share "$full" "$total")% of $total samples show _start...main;split_caller;leaf"
	else
		not_ok "no frame pointers, --unwind $mode: $full of $total samples show the whole chain"
		awk '{print $NF, $0}' "$T/nofp-$mode.folded" | sort -rn | head -5 | cut -c1-200 | sed 's/^/#   /'
	fi
	two=$(sum_matching "$T/nofp-$mode.folded" ';split_two_thirds(;|$)')
	one=$(sum_matching "$T/nofp-$mode.folded" ';split_one_third(;|$)')
	check "no frame pointers, --unwind $mode: split $(ratio "$two" "$one") (2 +- 5%)" 'within "$(ratio "$two" "$one")" 1.9 2.1'
	if [ $mode = dwarf ]; then
		check "the summary counts the unwinds, all of them complete" \
			'grep -Eq "^bpfprof: unwound ([0-9]+) user stacks: \1 complete" "$T/nofp-$mode.err"'
	else
		check "the summary counts the walks, all by CFI, all whole" \
			'grep -Eq "^bpfprof: walked ([0-9]+) user stacks in the kernel: \1 by CFI, 0 by frame pointers, 0 both; whole to the outermost frame \1," "$T/nofp-$mode.err"'
	fi
done

# The same binary with frame pointers unwinding shows why: no chain to main.
profile nofp-fp fp split-nofp $((SECONDS_RUN + 2))
total=$(folded_total "$T/nofp-fp.folded")
full=$(sum_matching "$T/nofp-fp.folded" ';main;split_caller;split_(two_thirds|one_third)(;|$)')
check "the same binary, --unwind fp: only $(share "$full" "$total")% reach main (the build has no frame pointers)" \
	'within "$(share "$full" "$total")" 0 50'

# 4. Unwind tables only in .debug_frame (built -fno-asynchronous-unwind-tables
# -g: .eh_frame has crt1's _start and the PLT alone), in the binary itself or
# only in its debuglink file (the binary stripped).
main_pc=$(nm "$WL/split-dframe" | awk '$3 == "main" { print $1 }')
# has_fde FILE SECTION: whether that section of FILE itself (not its debuglink file) covers main.
has_fde() {
	readelf -wNf "$1" 2> /dev/null | awk -v sec="$2" -v pc="$main_pc" '
		/^Contents of the / { in_sec = ($4 == sec) }
		in_sec && $4 == "FDE" { split(substr($6, 4), r, /\.\./); if (r[1] <= pc && pc < r[2]) found = 1 }
		END { exit !found }'
}
check "split-dframe: main's CFI only in .debug_frame" \
	'has_fde "$WL/split-dframe" .debug_frame && ! has_fde "$WL/split-dframe" .eh_frame'
check "split-dframe-strip: none in the binary, main's CFI in its debuglink file's .debug_frame" \
	'! has_fde "$WL/split-dframe-strip" .debug_frame && ! has_fde "$WL/split-dframe-strip" .eh_frame &&
		has_fde "$WL/split-dframe-strip.debug" .debug_frame'
for mode in auto dwarf; do
	# 2. A hot path through libc (qsort with a callback), no frame pointers.
	profile qsort-$mode $mode qsort-nofp $((SECONDS_RUN + 2))
	total=$(folded_total "$T/qsort-$mode.folded")
	twice=$(sum_matching "$T/qsort-$mode.folded" '^qsort-nofp;_start;__libc_start_main;__libc_start_call_main;main;sort_twice;')
	once=$(sum_matching "$T/qsort-$mode.folded" '^qsort-nofp;_start;__libc_start_main;__libc_start_call_main;main;sort_once;')
	if within "$(share $((twice + once)) "$total")" 95 100; then
		ok "qsort through libc, --unwind $mode: $(share $((twice + once)) "$total")% of $total samples from _start to main;sort_*"
	else
		not_ok "qsort through libc: $((twice + once)) of $total samples reach main;sort_*"
		awk '{print $NF, $0}' "$T/qsort-$mode.folded" | sort -rn | head -3 | cut -c1-200 | sed 's/^/#   /'
	fi
	check "qsort: sort_twice/sort_once = $(ratio "$twice" "$once") (2 +- 5%)" 'within "$(ratio "$twice" "$once")" 1.9 2.1'
	check "qsort: the callback is seen under libc's qsort" 'grep -q ";qsort_r;.*;by_value" "$T/qsort-$mode.folded"'

	# 3. Hot code in a signal handler: through libc's signal trampoline (its CFI
	# marked 'S', the interrupted pc not a return address) back to main.
	profile signal-$mode $mode signal-nofp $((SECONDS_RUN + 2))
	handler=$(sum_matching "$T/signal-$mode.folded" ';handler_spin(;|$)')
	through=$(sum_matching "$T/signal-$mode.folded" '^signal-nofp;_start;__libc_start_main;__libc_start_call_main;main;main_spin;(unit;)?__restore_rt;on_signal;handler_spin(;|$)')
	if [ "$handler" -gt 2000 ] && within "$(share "$through" "$handler")" 95 100; then
		ok "signal handler, --unwind $mode: $(share "$through" "$handler")% of $handler handler samples go _start...main;main_spin;unit;__restore_rt;on_signal"
	else
		not_ok "signal handler: $through of $handler handler samples unwind through __restore_rt to main"
		grep handler_spin "$T/signal-$mode.folded" | awk '{print $NF, $0}' | sort -rn | head -3 | cut -c1-200 | sed 's/^/#   /'
	fi
	spin=$(sum_matching "$T/signal-$mode.folded" ';main;main_spin;unit$')
	check "signal handler: main_spin/handler_spin = $(ratio "$spin" "$handler") (2 +- 10%: the timer's signals add kernel time to main's side)" \
		'within "$(ratio "$spin" "$handler")" 1.8 2.2'

	for w in split-dframe split-dframe-strip; do
		profile $w-$mode $mode $w $((SECONDS_RUN + 2))
		total=$(folded_total "$T/$w-$mode.folded")
		full=$(sum_matching "$T/$w-$mode.folded" '^split-dframe[^;]*;_start;__libc_start_main;__libc_start_call_main;main;split_caller;split_(two_thirds|one_third)(;|$)')
		if [ "$total" -gt 10000 ] && within "$(share "$full" "$total")" 95 100; then
			ok "$w (.debug_frame only), --unwind $mode: $(share "$full" "$total")% of $total samples show _start...main;split_caller;leaf"
		else
			not_ok "$w (.debug_frame only): $full of $total samples show the whole chain"
			awk '{print $NF, $0}' "$T/$w-$mode.folded" | sort -rn | head -3 | cut -c1-200 | sed 's/^/#   /'
		fi
	done

	# 5. A storm of processes of 10-50 ms built without frame pointers, two at
	# a time, most gone before their samples are read: with auto, mappings
	# come from the kernel's VMAs at exec; with dwarf, from the process
	# tracking (a sample of a process just forked or exec'd waits for the
	# side-band to say so).
	(wait_go; for i in $(seq 150); do
		"$WL/burst-nofp" $((10 + RANDOM % 40)) & "$WL/burst-nofp" $((10 + RANDOM % 40)); wait
	done) &
	storm=$!
	BG_PIDS+=($storm)
	profile_until_done "$T/storm-$mode.folded" $storm --unwind $mode -F 999
	all=$(sum_matching "$T/storm-$mode.folded" '^burst-nofp;')
	work=$(sum_matching "$T/storm-$mode.folded" '^burst-nofp;(.*;)?burst_work(;|$)')
	whole=$(sum_matching "$T/storm-$mode.folded" '^burst-nofp;_start;__libc_start_main;__libc_start_call_main;main;burst_work(;|$)')
	unknown=$(sum_matching "$T/storm-$mode.folded" '^burst-nofp;.*\[unknown\]')
	if [ "$work" -gt 1000 ] && within "$(share "$whole" "$work")" 95 100 && within "$(share "$unknown" "$all")" 0 2; then
		ok "storm of short processes, --unwind $mode: $(share "$whole" "$work")% of $work samples in burst_work whole from _start, $(share "$unknown" "$all")% in no known mapping"
	else
		not_ok "storm: $whole of $work burst_work samples whole, $unknown of $all in no known mapping"
		grep '^burst-nofp;' "$T/storm-$mode.folded" | awk '{print $NF, $0}' | sort -rn | head -3 | cut -c1-200 | sed 's/^/#   /'
	fi

done

# 6. With frame pointers, both ways of unwinding give the same stacks below main.
profile fp-fp fp split $((SECONDS_RUN + 2))
profile fp-dwarf dwarf split $((SECONDS_RUN + 2))
# below_main FILE: "stack-below-main share%" for stacks with at least 1% of the samples.
below_main() {
	awk '{ n = $NF; s = $0; sub(/ [0-9]+$/, "", s); t += n
		if (match(s, /;main(;|$)/)) { s = substr(s, RSTART + 1); c[s] += n } }
	END { for (x in c) if (c[x] * 100 >= t) printf "%s %.0f\n", x, 100 * c[x] / t }' "$1" | sort
}
below_main "$T/fp-fp.folded" > "$T/fp.stacks"
below_main "$T/fp-dwarf.folded" > "$T/dwarf.stacks"
if [ "$(cut -d' ' -f1 "$T/fp.stacks")" = "$(cut -d' ' -f1 "$T/dwarf.stacks")" ] &&
	[ "$(wc -l < "$T/fp.stacks")" -ge 2 ] &&
	paste -d' ' "$T/fp.stacks" "$T/dwarf.stacks" | awk '{ d = $2 - $4; if (d < -5 || d > 5) bad = 1 } END { exit bad }'; then
	ok "with frame pointers, fp and dwarf unwinding give the same stacks below main ($(tr '\n' ' ' < "$T/fp.stacks"))"
else
	not_ok "fp and dwarf unwinding differ below main"; diag "$T/fp.stacks"; diag "$T/dwarf.stacks"
fi

# 7. Deep recursion (300 frames): cut cleanly at 127 user frames, marked [truncated], no garbage.
# The leaf reads the clock through the vDSO, where an address before its first
# symbol (a local function, on some kernel builds) is honestly [vdso+0xOFF].
for mode in auto dwarf fp; do
	profile deep-$mode $mode deep $((SECONDS_RUN + 2)) 300
	total=$(folded_total "$T/deep-$mode.folded")
	cut_ok=$(sum_matching "$T/deep-$mode.folded" '^(deep;\[truncated\];deep_recurse;|\[lost: ring buffer full\]$)')
	garbage=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); k = split(s, f, ";")
		for (i = 3; i <= k; i++) if (f[i] !~ /^(deep_recurse|deep_leaf|now_\[i\]|clock_gettime(@plt)?|__vdso_clock_gettime|\[vdso\+0x[0-9a-f]+\]|.*_\[k\])$/) { print f[i]; exit } }' "$T/deep-$mode.folded")
	depth=$(awk '{ s = $0; sub(/ [0-9]+$/, "", s); n = gsub(/deep_recurse/, "", s); if (n > m) m = n } END { print m }' "$T/deep-$mode.folded")
	if [ "$total" -gt 5000 ] && [ "$cut_ok" = "$total" ] && [ -z "$garbage" ] && [ "$depth" -le 127 ]; then
		ok "300-deep recursion, --unwind $mode: every stack cut at $depth deep_recurse frames under [truncated], no other frame"
	else
		not_ok "300-deep recursion, --unwind $mode: $cut_ok of $total cut cleanly, depth $depth, stray frame '$garbage'"
		awk '{print $NF, $0}' "$T/deep-$mode.folded" | sort -rn | head -3 | cut -c1-200 | sed 's/^/#   /'
	fi
done
