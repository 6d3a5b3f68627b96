# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Symbols from debug information, sampled for real: a stripped binary named
# from its .gnu_debuglink file, an inlined function as a frame of its own
# with its file and line (folded, pprof), libc named through libc6-dbg.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

pprof() { go tool pprof "$@" 2> /dev/null; }

# profile NAME PID [SECONDS]: one process at 4999 Hz, folded and pprof.
profile() {
	$BPFPROF -F 4999 -d "${3:-3}" -p "$2" -o "$T/$1.folded" -o "$T/$1.pb.gz" 2> "$T/$1.err"
}

# start PROGRAM ARGS...: like start_workload, for a program given by path.
start() {
	"$@" > /dev/null &
	BG_PIDS+=($!)
}

# 1. A stripped binary whose symbols are only in its debuglink file.
stripped=$O/tests/fixtures/split-stripped
if [ -z "$(nm "$stripped" 2> /dev/null)" ] && ! nm -D "$stripped" | grep -q split_ &&
	[ -s "$stripped.debug" ]; then
	ok "split-stripped has no symbols of its own, split-stripped.debug beside it"
else
	not_ok "split-stripped is not stripped, or its debug file is missing (make test-build)"
fi
start "$stripped" 6
pid=$!
sleep 0.3
profile stripped $pid
total=$(folded_total "$T/stripped.folded")
check "stripped: output passes the strict folded checker" '[ -n "$total" ]'
full=$(sum_matching "$T/stripped.folded" '^split-stripped;(.*;)?main;split_caller;split_(two_thirds|one_third)(;|$)')
if [ -n "$total" ] && [ "$total" -gt 1000 ] && within "$full" $((total * 95 / 100)) "$total"; then
	ok "stripped: $full of $total samples show main;split_caller;leaf, named from the debug file"
else
	not_ok "stripped: only $full of $total samples show main;split_caller;leaf"
	diag "$T/stripped.folded"
fi
pprof -raw "$T/stripped.pb.gz" > "$T/stripped.raw"
check "stripped: pprof places split_two_thirds in tests/workloads/split.c (the debug file's DWARF)" \
	'grep -Eq " split_two_thirds [^ ]*/tests/workloads/split\.c:[1-9][0-9]* " "$T/stripped.raw"'

# The same binary without its debug file: the names came from there.
cp "$stripped" "$T/split-nodebug"
start "$T/split-nodebug" 3
pid=$!
sleep 0.3
profile nodebug $pid 1
n=$(folded_total "$T/nodebug.folded")
if [ -n "$n" ] && [ "$n" -gt 100 ] && ! grep -q 'split_caller' "$T/nodebug.folded" &&
	grep -q '\[split-nodebug+0x' "$T/nodebug.folded"; then
	ok "without its debug file the same binary's frames stay unnamed ([split-nodebug+0x...])"
else
	not_ok "without its debug file: $n samples, named or not as expected"; diag "$T/nodebug.folded"
fi

# 2. libc named through its debug file (libc6-dbg, by build ID), on the same stacks.
libc=$(sum_matching "$T/stripped.folded" '^split-stripped;(_start;__libc_start_main;)?__libc_start_call_main;main;')
if [ -n "$total" ] && within "$libc" $((total * 95 / 100)) "$total"; then
	ok "libc: $libc of $total samples show __libc_start_call_main;main"
else
	not_ok "libc: only $libc of $total samples show __libc_start_call_main;main"
	diag "$T/stripped.folded"
fi
check "libc: no frame left as [libc.so.6+0x...]" \
	"! grep -q '\[libc\.so\.6+0x' '$T/stripped.folded'"
check "libc: pprof gives __libc_start_call_main its source file and line" \
	'grep -Eq " __libc_start_call_main [^ ]*libc_start_call_main\.h:[1-9][0-9]* " "$T/stripped.raw"'

# 3. A function inlined into its caller: a frame of its own, _[i] in folded
# output, an inline line of its location in pprof, placed inside its body.
start_workload inline 6
pid=$!
sleep 0.3
profile inline $pid
total=$(folded_total "$T/inline.folded")
check "inline: output passes the strict folded checker" '[ -n "$total" ]'
inl=$(sum_matching "$T/inline.folded" ';main;inline_caller;inlined_fn_\[i\](;|$)')
plain=$(sum_matching "$T/inline.folded" ';main;inline_caller;plain_fn(;|$)')
r=$(ratio "$inl" "$plain")
# 15,000 samples, 10,000 with other processes on the CPUs: the ratio's
# spread (two sigma) is 4.2/sqrt(10000) = 4%.
if [ "$inl" -gt 3000 ] && within "$r" 1.8 2.2; then
	ok "inline: inline_caller;inlined_fn_[i] / inline_caller;plain_fn = $r (2 +- 10%; $inl vs $plain)"
else
	not_ok "inline: inlined_fn_[i]/plain_fn = $r, want 2 +- 10%" "$inl vs $plain samples"
	diag "$T/inline.folded"
fi
check "inline: inlined_fn never appears without its _[i] mark" \
	"! grep -Eq 'inlined_fn( |;)' '$T/inline.folded'"

first=$(grep -n 'inlined_fn: begin' tests/workloads/inline.c | cut -d: -f1)
last=$(grep -n 'inlined_fn: end' tests/workloads/inline.c | cut -d: -f1)
pprof -raw "$T/inline.pb.gz" > "$T/inline.raw"
# Locations: "N: 0xADDR M=1 inlined_fn FILE:LINE s=0", the next line its caller.
awk -v first="$first" -v last="$last" '
	prev && / inline_caller / { outer += $0 ~ / inline_caller [^ ]*\/tests\/workloads\/inline\.c:[0-9]+ s=/ }
	{ prev = 0 }
	/^ *[0-9]+: 0x[0-9a-f]+ M=[0-9]+ inlined_fn / {
		n++; prev = 1
		split($5, fl, ":")
		if (fl[1] ~ /\/tests\/workloads\/inline\.c$/ && fl[2] > first && fl[2] < last) good++
		else printf "bad: %s\n", $0
	}
	END { printf "%d %d %d\n", n, good, outer }' "$T/inline.raw" > "$T/inline.lines"
read -r n good outer < <(tail -1 "$T/inline.lines")
# The line table may give an instruction at the edge of inlined code its
# caller's line: all but one location must be inside the function's body.
if [ "$n" -gt 2 ] && [ "$good" -ge $((n - 1)) ] && [ "$outer" = "$n" ]; then
	ok "inline: pprof -raw: $good of $n locations in inlined_fn are in tests/workloads/inline.c, lines $first-$last, all inlined into inline_caller"
else
	not_ok "inline: pprof -raw: $good of $n inlined_fn locations in inline.c lines $first-$last, $outer inside inline_caller"
	diag "$T/inline.lines"
fi
pprof -traces "$T/inline.pb.gz" > "$T/inline.traces"
check "inline: pprof -traces shows inlined_fn (inline) called from inline_caller" \
	"grep -A1 ' inlined_fn (inline)\$' '$T/inline.traces' | grep -q '^ *inline_caller\$'"
