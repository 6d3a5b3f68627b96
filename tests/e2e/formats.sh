# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Every format is written from the same profile: one system-wide run, four
# outputs, each read by its own reader, the same total in all of them.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

start_workload split 10
start_workload syscall 10
sleep 0.3
$BPFPROF -F 999 -d 3 -o "$T/run.folded" -o "$T/run.pb.gz" -o "$T/callgrind.out.run" -o "$T/run.svg" \
	2> "$T/run.err"
check "one run wrote four files" '[[ -s "$T/run.folded" && -s "$T/run.pb.gz" && \
	-s "$T/callgrind.out.run" && -s "$T/run.svg" ]]'

folded=$(folded_total "$T/run.folded")
pprof=$(go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=1000000 "$T/run.pb.gz" 2> /dev/null |
	sed -n 's/^Showing nodes accounting for \([0-9]*\), .*/\1/p')
callgrind=$(callgrind_annotate "$T/callgrind.out.run" 2> /dev/null |
	sed -n 's/^ *\([0-9,]*\) .*PROGRAM TOTALS.*/\1/p' | tr -d ,)
svg=$(xmllint --xpath 'string(//*[local-name()="g"][@class="root"]/*[local-name()="rect"]/@data-s)' "$T/run.svg")
summary=$(sed -n 's/^bpfprof: .* Hz on .*: \([0-9]*\) samples.*/\1/p' "$T/run.err")
if [ -n "$folded" ] && [ "$folded" -gt 3000 ] && [ "$pprof" = "$folded" ] && [ "$callgrind" = "$folded" ] &&
	[ "$svg" = "$folded" ] && [ "$summary" = "$folded" ]; then
	ok "the same total everywhere: folded $folded, pprof $pprof, callgrind $callgrind, svg $svg, summary $summary"
else
	not_ok "totals differ: folded '$folded', pprof '$pprof', callgrind '$callgrind', svg '$svg', summary '$summary'"
fi

# -f picks the format of stdout; a name without a known extension takes -f's.
$BPFPROF -F 99 -d 1 -f callgrind > "$T/stdout.cg" 2> /dev/null
check "-f callgrind to stdout" 'grep -q "^events: Samples\$" "$T/stdout.cg"'
$BPFPROF -F 99 -d 1 -f pprof -o "$T/profile.bin" 2> /dev/null
check "-f pprof -o NAME with no extension writes pprof" \
	"gzip -dc '$T/profile.bin' | protoc --decode_raw | grep -q '^6: \"samples\"'"
$BPFPROF -F 99 -d 1 -o "$T/plain.txt" 2> /dev/null
check "an unknown extension means folded" "awk -f tests/check_folded.awk '$T/plain.txt' > /dev/null"
