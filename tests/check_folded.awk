# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A strict checker of collapsed stacks, the format flamegraph.pl reads:
# every line "frame;frame;... COUNT", frames non-empty and free of control
# characters, COUNT a positive integer after exactly one space, stacks
# unique and sorted (bytewise). Prints the total count; on any problem
# prints up to five of them on stderr and exits 1.
#
# usage: LC_ALL=C awk -f tests/check_folded.awk FILE
function problem(msg) {
	if (bad < 5)
		printf "%s:%d: %s: %.120s\n", FILENAME, FNR, msg, $0 > "/dev/stderr"
	bad++
}
{
	if ($0 ~ /[\001-\037\177]/) { problem("control character"); next }
	if (!match($0, / [0-9]+$/)) { problem("no ' COUNT' at the end"); next }
	stack = substr($0, 1, RSTART - 1)
	count = substr($0, RSTART + 1)
	if (count !~ /^[1-9][0-9]*$/) problem("count is not a positive integer")
	if (stack == "" || stack ~ /^;/ || stack ~ /;$/ || stack ~ /;;/) problem("empty frame")
	if (stack ~ / $/) problem("more than one space before the count")
	if (stack in seen) problem("stack repeated")
	seen[stack] = 1
	if (FNR > 1 && !(prev < stack)) problem("not sorted")
	prev = stack
	total += count
}
END {
	if (bad) {
		printf "%d problems\n", bad > "/dev/stderr"
		exit 1
	}
	print total + 0
}
