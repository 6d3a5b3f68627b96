# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Nothing is silently dropped: stack collisions and full maps go through the
# ring buffer; when that is full too the loss is counted and shown.
. tests/lib.sh

start_workload spin 12 busy 2
start_workload syscall 12
sleep 0.3

# Tiny maps: most samples need the ring buffer, sized here to hold the whole run (2 s of both
# CPUs' samples, some 1.3 KiB each), so that nothing is lost even when the reader gets no CPU
# for a while (a sanitizer build beside two busy loops lost some with the default 1 MiB).
$BPFPROF -F 999 -d 2 -v --stack-storage-size 8 --max-stacks 4 --ring-buffer-size 16384 \
	-o "$T/small.folded" 2> "$T/small.err"
total=$(folded_total "$T/small.folded")
saved=$(sed -n 's/.* \([0-9]*\) saved through the ring buffer.*/\1/p' "$T/small.err")
if [ -n "$total" ] && [ "${saved:-0}" -gt 100 ] && grep -q '^bpfprof: lost 0 samples' "$T/small.err"; then
	ok "tiny maps: $saved samples saved through the ring buffer, none lost"
else
	not_ok "tiny maps: saved '$saved', total '$total'"; diag "$T/small.err"
fi
check "tiny maps: the books balance" "! grep -q 'does not add up' '$T/small.err'"
check "tiny maps: no [lost: ...] frame" "! grep -q 'lost:' '$T/small.folded'"

# Tiny maps and a one-page ring buffer: samples are lost, and say so.
$BPFPROF -F 999 -d 2 -v --stack-storage-size 8 --max-stacks 4 --ring-buffer-size 4 \
	-o "$T/lost.folded" 2> "$T/lost.err"
total=$(folded_total "$T/lost.folded")
lost=$(sed -n 's/^bpfprof: lost \([0-9]*\) samples.*/\1/p' "$T/lost.err")
shown=$(sum_matching "$T/lost.folded" '^\[lost: ')
rec=$(sed -n 's/^bpfprof: .* Hz on .*: \([0-9]*\) samples.*/\1/p' "$T/lost.err")
if [ -n "$total" ] && [ "${lost:-0}" -gt 0 ] && [ "$shown" = "$lost" ]; then
	ok "one-page ring buffer: $lost samples lost, all shown as [lost: ...] frames"
else
	not_ok "one-page ring buffer: lost '$lost', shown '$shown'"; diag "$T/lost.err"
fi
check "one-page ring buffer: output total $total = recorded $rec" '[ "$total" = "$rec" ]'
check "one-page ring buffer: the summary says how to avoid it" 'grep -q "raise --stack-storage-size" "$T/lost.err"'

# --unwind dwarf fills the ring with every sample: the summary says to raise the ring, not the maps.
$BPFPROF --unwind dwarf -F 9999 -d 1 --ring-buffer-size 64 -o "$T/dlost.folded" 2> "$T/dlost.err"
check "--unwind dwarf, small ring: the loss is the ring's, and the summary says so" \
	'grep -q "^bpfprof: lost [1-9][0-9]* samples (the ring buffer was full; raise --ring-buffer-size" "$T/dlost.err"'
