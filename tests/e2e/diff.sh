# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# bpfprof diff on two runs of split, before (2:1) and after a change of its
# split (1:1, tests/workloads/split's RATIO): the difffolded form holds
# both runs' counts, and each leaf's share changes by what the two runs
# measured themselves (WL_MEASURE=1); in the SVG the one that fell is blue,
# the second red, their titles give both counts. BEFORE as pprof, AFTER as
# folded: the readers meet. One run of Python, LuaJIT and Ruby written both
# ways compares as itself, either way round: every frame named alike.
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

# One run written as folded and as pprof is the same profile: bpfprof diff of
# the two, either way round, changes no stack and no frame of the SVG. Runtime
# frames ("f (FILE:LINE)"), native ones with inlined calls, kernel frames, unnamed
# "[FILE+0xOFF]" frames, and with node JIT frames of a perf map ("_[j]").
PYW=tests/workloads
# rt_start COMMAND...: COMMAND in the background, its pid added to rt_pids.
rt_start() {
	"$@" > /dev/null 2>&1 &
	BG_PIDS+=($!)
	rt_pids+=${rt_pids:+,}$!
}
# For 20 s, ended after the run: a slow start of bpfprof (the sanitizers') must not outlast them.
rt_start python3 $PYW/py_split.py 20
rt_start luajit $PYW/lua_split.lua 20
rt_start ruby $PYW/rb_split.rb 20
rt_kinds=('work \(py_split\.py:[0-9]+\)' 'work \(lua_split\.lua:[0-9]+\)' 'work \(rb_split\.rb:[0-9]+\)'
	  '_\[i\]' '_\[k\]' '\[[^];]*\+0x[0-9a-f]+\]')
if command -v node > /dev/null; then
	rt_start node --perf-basic-prof --no-logfile-per-isolate --logfile="$T/v8.log" $PYW/jit.js 20
	[ -z "${KEEP:-}" ] && trap 'rm -f "/tmp/perf-${rt_pids##*,}.map"; cleanup' EXIT
	rt_kinds+=('burn_\[j\]')
else
	echo "# no node: JIT frames not checked"
fi
sleep 2	# the runtimes started, node's functions compiled and in its perf map
$BPFPROF -F 999 -d 3 -p $rt_pids -o "$T/rt.folded" -o "$T/rt.pb.gz" 2> "$T/rt.err"
rc=$?
kill ${rt_pids//,/ } 2> /dev/null
rt_total=$(folded_total "$T/rt.folded")
rt_counts=$(for k in "${rt_kinds[@]}"; do printf ' %s' "$(sum_matching "$T/rt.folded" "$k")"; done)
check "one run of python3, luajit, ruby${rt_kinds[6]:+, node}, -o rt.folded -o rt.pb.gz: exit $rc, ${rt_total:-no} samples; Python, Lua, Ruby, inlined, kernel, unnamed${rt_kinds[6]:+, JIT} frames in:$rt_counts" \
	'[ $rc = 0 ] && [ "${rt_total:-0}" -gt 1000 ] && ! echo "$rt_counts" | grep -qw 0'
# frames SVG: "COUNT BEFORE" of every frame's title.
frames() { grep -o '<title>[^<]*</title>' "$1" | sed -n 's/.*(\([0-9]*\) samples\{0,1\}, [^;]*; before \([0-9]*\),.*/\1 \2/p'; }
for pair in "rt.folded rt.pb.gz" "rt.pb.gz rt.folded"; do
	set -- $pair
	$BPFPROF diff "$T/$1" "$T/$2" -o "$T/self.folded" -o "$T/self.svg" 2> "$T/self.err"
	rc=$?
	changed=$(awk '$(NF - 1) != $NF' "$T/self.folded" | wc -l)
	lines=$(wc -l < "$T/self.folded")
	b_total=$(awk '{ t += $(NF - 1) } END { print t + 0 }' "$T/self.folded")
	a_total=$(awk '{ t += $NF } END { print t + 0 }' "$T/self.folded")
	check "diff $1 $2: exit $rc; $changed of $lines stacks changed (0), $(wc -l < "$T/rt.folded") stacks in the run; totals $b_total and $a_total = $rt_total" \
		'[ $rc = 0 ] && [ "$changed" = 0 ] && [ "$lines" = "$(wc -l < "$T/rt.folded")" ] && [ "$b_total" = "$rt_total" ] && [ "$a_total" = "$rt_total" ]'
	[ "$changed" = 0 ] || awk '$(NF - 1) != $NF { print $(NF - 1) + $NF, $0 }' "$T/self.folded" |
		sort -rn | head -3 | rev | cut -c1-200 | rev | sed 's/^/#   /'
	svg_frames=$(frames "$T/self.svg" | wc -l)
	svg_changed=$(frames "$T/self.svg" | awk '$1 != $2' | wc -l)
	check "diff $1 $2 -o self.svg: $svg_changed of $svg_frames frames with a count other than before (0)" \
		'[ "$svg_frames" -gt 100 ] && [ "$svg_changed" = 0 ]'
done

# --off-cpu: folded counts microseconds, pprof nanoseconds; the two compare alike,
# their "[off-cpu: STATE]" leaves too.
start_workload waits 4
off_pid=$!
sleep 0.3
$BPFPROF --off-cpu -d 2 -p $off_pid -o "$T/off.folded" -o "$T/off.pb.gz" 2> "$T/off.err"
rc=$?
off_total=$(folded_total "$T/off.folded")
$BPFPROF diff "$T/off.pb.gz" "$T/off.folded" > "$T/off.diff" 2> "$T/off.diff.err"
changed=$(awk '$(NF - 1) != $NF' "$T/off.diff" | wc -l)
check "--off-cpu, -o off.folded -o off.pb.gz: exit $rc, ${off_total:-no} us; diff off.pb.gz off.folded: $changed of $(wc -l < "$T/off.diff") stacks changed (0), [off-cpu: ...] leaves in it" \
	'[ $rc = 0 ] && [ "${off_total:-0}" -gt 0 ] && grep -q "\[off-cpu: [a-z]*\] [0-9]* [0-9]*\$" "$T/off.diff" && [ "$changed" = 0 ]'

# A system-wide run, a BPF program busy on a process's system calls (kernel frames
# of a [bpf] mapping): its folded and pprof compare as the same profile. bpfprof in
# it, left out as docs/outputs.md says (grep from folded, go tool pprof -tagignore
# from pprof): the two compare as the same profile, without bpfprof.
export HOME=$T	# go keeps a cache there
start_workload syscall 6 64
"$O/tests/bpf-busy" $! 5 &
BG_PIDS+=($!)
# Until bpf-busy holds its program attached (a link), up to 5 s.
for i in $(seq 100); do bpf_held $! | grep -q '^link_id' && break; sleep 0.05; done
$BPFPROF -F 999 -d 1.5 -o "$T/sys.folded" -o "$T/sys.pb.gz" 2> "$T/sys.err" &
prof=$!
# Another bpfprof starting meanwhile (a start is busy): bpfprof's samples are sure to be there.
wait_attached "$T/sys.err" $prof
$BPFPROF -F 99 -d 0.3 -o "$T/other.folded" 2> /dev/null
wait $prof
rc=$?
self=$(sum_matching "$T/sys.folded" '^bpfprof;')
sys_total=$(folded_total "$T/sys.folded")
busy=$(sum_matching "$T/sys.folded" ';bpf_prog_[0-9a-f]+_busy_sys_enter_\[k\](;|$)')
$BPFPROF diff "$T/sys.pb.gz" "$T/sys.folded" > "$T/sys.diff" 2> "$T/sys.diff.err"
changed=$(awk '$(NF - 1) != $NF' "$T/sys.diff" | wc -l)
check "a system-wide run: exit $rc, ${sys_total:-no} samples, $busy in a BPF program; diff sys.pb.gz sys.folded: $changed of $(wc -l < "$T/sys.diff") stacks changed (0)" \
	'[ $rc = 0 ] && [ "$busy" -gt 0 ] && [ -s "$T/sys.diff" ] && [ "$changed" = 0 ]'
[ "$changed" = 0 ] || awk '$(NF - 1) != $NF' "$T/sys.diff" | head -4 | rev | cut -c1-200 | rev | sed 's/^/#   /'
grep -Ev '^bpfprof(-[0-9]+)?;' "$T/sys.folded" > "$T/others.folded"
# -symbolize=none: else pprof shortens names it takes for C++ (Ruby's "Array#<=>" to "Array#").
go tool pprof -symbolize=none -proto -tagignore=comm=bpfprof "$T/sys.pb.gz" > "$T/others.pb.gz" 2> "$T/others.err"
$BPFPROF diff "$T/others.pb.gz" "$T/others.folded" > "$T/others.diff" 2>> "$T/others.err"
others_ok() {
	[ $rc = 0 ] && [ "$self" -gt 0 ] && [ -s "$T/others.diff" ] &&
		[ -z "$(awk '$(NF - 1) != $NF' "$T/others.diff")" ] && ! grep -q '^bpfprof' "$T/others.diff" &&
		[ "$(awk '{ t += $NF } END { print t + 0 }' "$T/others.diff")" = $((sys_total - self)) ]
}
others_ok || awk '$(NF - 1) != $NF' "$T/others.diff" | head -4 | rev | cut -c1-200 | rev | sed 's/^/#   /'
check "bpfprof's own $self of ${sys_total:-no} samples left out alike by grep -Ev '^bpfprof(-[0-9]+)?;' (folded) and go tool pprof -symbolize=none -proto -tagignore=comm=bpfprof (pprof)" \
	'others_ok'

# Its errors: one line each.
echo "not a profile" > "$T/junk"
for args in "diff" "diff $T/before.folded" "diff $T/before.folded $T/nope" \
	    "diff $T/before.folded $T/after.folded -o $T/x.pb.gz" "diff $T/junk $T/after.folded"; do
	$BPFPROF $args > /dev/null 2> "$T/err"
	rc=$?
	check "bpfprof $args -> exit $rc: $(head -1 "$T/err")" \
		'[ $rc -ge 1 ] && [ $rc -le 2 ] && [ "$(wc -l < "$T/err")" = 1 ]'
done
