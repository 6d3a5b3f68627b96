# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# bpfprof diff on two runs of split, before (2:1) and after a change of its
# split (1:1, tests/workloads/split's RATIO): the difffolded form holds
# both runs' counts, and each leaf's share changes by what the two runs
# measured themselves (WL_MEASURE=1); in the SVG the one that fell is blue,
# the second red, their titles give both counts. BEFORE as pprof, AFTER as
# folded: the readers meet.
. tests/lib.sh

# share FILE COLUMN NAME: % of split's two leaves' samples that are NAME's (difffolded column 1 or 2).
share() {
	awk -v c="$2" -v f="$3" '/^split;.*;split_(two|one)_thirds? [0-9]+ [0-9]+$/ {
		n = $(NF - 2 + c); t += n; if ($(NF - 2) ~ (";" f "$")) m += n }
		END { if (t) printf "%.2f", 100 * m / t }' "$1"
}
# measured RUN NAME: the CPU ns split measured in NAME (WL_MEASURE=1).
measured() { sed -n "s/^measured: $2 //p" "$T/$1.measured"; }

for run in before:2 after:1; do
	name=${run%:*}
	(wait_go; WL_MEASURE=1 exec "$WL/split" 3 "${run#*:}" > /dev/null 2> "$T/$name.measured") &
	pid=$!
	BG_PIDS+=($pid)
	profile_until_done "$T/$name.folded" $pid -F 4999 -p $pid -o "$T/$name.pb.gz"
done

$BPFPROF diff "$T/before.pb.gz" "$T/after.folded" -o "$T/d.folded" -o "$T/d.svg" 2> "$T/diff.err"
rc=$?
check "diff BEFORE.pb.gz AFTER.folded -o d.folded -o d.svg: exit $rc, nothing said" \
	'[ $rc = 0 ] && [ ! -s "$T/diff.err" ]'
bad=$(awk 'NF < 3 || $(NF) !~ /^[0-9]+$/ || $(NF - 1) !~ /^[0-9]+$/' "$T/d.folded" | head -3)
check "difffolded: every line \"stack BEFORE AFTER\"${bad:+: $bad}" '[ -z "$bad" ]'
b_total=$(awk '{ t += $(NF - 1) } END { print t }' "$T/d.folded")
a_total=$(awk '{ t += $NF } END { print t }' "$T/d.folded")
check "difffolded: its columns add up to the two runs ($b_total = $(folded_total "$T/before.folded"), $a_total = $(folded_total "$T/after.folded"))" \
	'[ "$b_total" = "$(folded_total "$T/before.folded")" ] && [ "$a_total" = "$(folded_total "$T/after.folded")" ]'
for f in split_two_thirds split_one_third; do
	before=$(share "$T/d.folded" 1 $f)
	after=$(share "$T/d.folded" 2 $f)
	got=$(awk -v a="$after" -v b="$before" 'BEGIN { printf "%.2f", a - b }')
	want=$(awk -v b1="$(measured before $f)" -v b2="$(measured before split_two_thirds)" \
		   -v b3="$(measured before split_one_third)" -v a1="$(measured after $f)" \
		   -v a2="$(measured after split_two_thirds)" -v a3="$(measured after split_one_third)" \
		   'BEGIN { printf "%.2f", 100 * (a1 / (a2 + a3) - b1 / (b2 + b3)) }')
	check "$f's share of the two changed $got points ($before % -> $after %); the runs measured $want (within 2)" \
		'within "$(awk -v g="$got" -v w="$want" "BEGIN { print g - w }")" -2 2'
	eval "${f}_change=\$got"
done
check "the right sign: split_two_thirds fell ($split_two_thirds_change), split_one_third rose ($split_one_third_change)" \
	'within "$split_two_thirds_change" -100 -5 && within "$split_one_third_change" 5 100'
title() { grep -o "<title>$1 ([^<]*</title><rect[^>]*fill=\"#[0-9a-f]*\"" "$T/d.svg" | head -1; }
two=$(title split_two_thirds)
one=$(title split_one_third)
check "svg: split_two_thirds is blue and says both counts ($(echo "$two" | sed 's/<\/title>.*fill=/ fill=/'))" \
	'echo "$two" | grep -q "; before [0-9]*, [0-9.]*%; -[0-9.]* points).*fill=\"#[0-9a-f]\{4\}ff\""'
check "svg: split_one_third is red ($(echo "$one" | sed 's/<\/title>.*fill=/ fill=/'))" \
	'echo "$one" | grep -q "; +[0-9.]* points).*fill=\"#ff[0-9a-f]\{4\}\""'
check "svg: well-formed XML (xmllint)" 'xmllint --noout "$T/d.svg"'
check "svg: the subtitle says what the colours mean" 'grep -q "red grew, blue shrank (by share)" "$T/d.svg"'

# Its errors: one line each.
echo "not a profile" > "$T/junk"
for args in "diff" "diff $T/before.folded" "diff $T/before.folded $T/nope" \
	    "diff $T/before.folded $T/after.folded -o $T/x.pb.gz" "diff $T/junk $T/after.folded"; do
	$BPFPROF $args > /dev/null 2> "$T/err"
	rc=$?
	check "bpfprof $args -> exit $rc: $(head -1 "$T/err")" \
		'[ $rc -ge 1 ] && [ $rc -le 2 ] && [ "$(wc -l < "$T/err")" = 1 ]'
done
