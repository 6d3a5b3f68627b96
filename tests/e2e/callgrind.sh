# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The callgrind output, read by the real reader (callgrind_annotate, from
# valgrind), against the folded output of the same run: one run writes
# both, so every figure must agree exactly.
. tests/lib.sh

F=9999
SECONDS_RUN=4

if ! command -v callgrind_annotate > /dev/null; then
	not_ok "callgrind: callgrind_annotate not found; install valgrind (apt-get install valgrind)"
	exit 0
fi

# annotated FILE FUNCTION: the cost callgrind_annotate shows for SOURCE:FUNCTION
# (the source file from DWARF, or ???; "." is 0), or nothing when it does not
# list it; "PROGRAM TOTALS" for the total.
annotated() {
	awk -v fn="$2" '
		fn == "PROGRAM TOTALS" && / PROGRAM TOTALS$/ { v = $1; found = 1; exit }
		fn != "PROGRAM TOTALS" && substr($NF, length($NF) - length(fn)) == ":" fn &&
			$(NF - 1) != "=>" { v = $1; found = 1; exit }
		END { if (found) { gsub(",", "", v); print (v == "." ? 0 : v) } }' "$1"
}

# self_sum FILE: the sum of the self column over every function listed.
self_sum() {
	awk '/ file:function$/ { on = 1; next } on && /^-+$/ { next } on && !NF { on = 0 }
		on { v = $1; gsub(",", "", v); if (v != ".") t += v } END { print t + 0 }' "$1"
}

start_workload split $((SECONDS_RUN + 3))
pid=$!
sleep 0.3
$BPFPROF -F $F -d $SECONDS_RUN -p $pid -o "$T/callgrind.out.split" -o "$T/split.folded" \
	2> "$T/split.err"
rc=$?
check "callgrind: exit status 0" '[ $rc = 0 ]'
total=$(folded_total "$T/split.folded")
check "callgrind: the same run's folded output passes the strict checker" '[ -n "$total" ]'
check "callgrind: the file starts '# callgrind format'" \
	'[ "$(head -1 "$T/callgrind.out.split")" = "# callgrind format" ]'

callgrind_annotate --threshold=100 "$T/callgrind.out.split" > "$T/self.txt" 2> "$T/self.err"
rc=$?
callgrind_annotate --threshold=100 --inclusive=yes "$T/callgrind.out.split" > "$T/incl.txt" \
	2> "$T/incl.err"
rc=$((rc + $?))
if [ $rc = 0 ] && [ ! -s "$T/self.err" ] && [ ! -s "$T/incl.err" ] &&
   ! grep -qi 'warning\|error' "$T/self.txt" "$T/incl.txt"; then
	ok "callgrind: callgrind_annotate reads it without a warning, default and --inclusive=yes"
else
	not_ok "callgrind: callgrind_annotate complains (exit $rc)"
	diag "$T/self.err"
	diag "$T/incl.err"
fi

t_self=$(annotated "$T/self.txt" "PROGRAM TOTALS")
t_incl=$(annotated "$T/incl.txt" "PROGRAM TOTALS")
if [ -n "$total" ] && [ "$t_self" = "$total" ] && [ "$t_incl" = "$total" ]; then
	ok "callgrind: total $t_self (--inclusive=yes: $t_incl) = the folded total"
else
	not_ok "callgrind: total '$t_self' (--inclusive=yes: '$t_incl'), the folded total $total"
fi
listed=$(self_sum "$T/self.txt")
check "callgrind: the self costs of all functions add up to the total ($listed)" \
	'[ "$listed" = "$total" ]'

two=$(annotated "$T/self.txt" split_two_thirds)
one=$(annotated "$T/self.txt" split_one_third)
want_two=$(sum_matching "$T/split.folded" ';split_two_thirds$')
want_one=$(sum_matching "$T/split.folded" ';split_one_third$')
if [ -n "$two" ] && [ "$two" = "$want_two" ] && [ -n "$one" ] && [ "$one" = "$want_one" ]; then
	ok "callgrind: self split_two_thirds $two, split_one_third $one, as in the folded output"
else
	not_ok "callgrind: self split_two_thirds '$two', split_one_third '$one'" \
		"the folded output says $want_two and $want_one"
	diag "$T/self.txt" 40
fi
r=$(ratio "$two" "$one")
if within "$r" 1.9 2.1; then
	ok "callgrind: self split_two_thirds/split_one_third = $r (2 +- 5%)"
else
	not_ok "callgrind: self split_two_thirds/split_one_third = $r, want 2 +- 5%" "$two vs $one"
fi

for fn in split_caller main; do
	got=$(annotated "$T/incl.txt" $fn)
	want=$(sum_matching "$T/split.folded" ";$fn(;|\$)")
	if [ -n "$got" ] && [ "$got" = "$want" ] && [ "$want" -gt 0 ]; then
		ok "callgrind: inclusive $fn $got = the folded lines through it"
	else
		not_ok "callgrind: inclusive $fn '$got', the folded lines through it $want"
		diag "$T/incl.txt" 40
	fi
done
got=$(annotated "$T/incl.txt" split)
check "callgrind: inclusive of the thread's root 'split' $got = the total" '[ "$got" = "$total" ]'
