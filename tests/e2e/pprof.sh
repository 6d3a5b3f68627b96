# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# pprof output read by the reference reader, go tool pprof: no warning, the
# same per-function totals as the folded output of the same run, labels
# that select one process.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

pprof() { go tool pprof "$@"; }

start_workload split 10
split_pid=$!
start_workload syscall 10
sleep 0.3
$BPFPROF -F 999 -d 4 --per-pid -o "$T/run.pb.gz" -o "$T/run.folded" 2> "$T/run.err"
check "one run writes pprof and folded" '[[ -s "$T/run.pb.gz" && -s "$T/run.folded" ]]'
total=$(folded_total "$T/run.folded")

for view in -raw -top -traces; do
	pprof $view "$T/run.pb.gz" > "$T/view.out" 2> "$T/view.err"
	rc=$?
	if [ $rc = 0 ] && [ ! -s "$T/view.err" ] && [ -s "$T/view.out" ]; then
		ok "go tool pprof $view reads it, says nothing on stderr"
	else
		not_ok "go tool pprof $view: exit $rc, or it said something"; diag "$T/view.err"
	fi
done

# Per function: flat (leaf) and cumulative samples, from the folded lines.
# The root frame (comm-PID) is not a function; unnamed frames [file+0x...]
# are named differently by pprof ([file], or <unknown> unsymbolized), so
# both sides skip them. Inlined calls are "name (inline)" in pprof.
awk '{
	n = $NF; s = $0; sub(/ [0-9]+$/, "", s)
	k = split(s, f, ";")
	delete seen
	for (i = 2; i <= k; i++) {
		name = f[i]; sub(/_\[[kji]\]$/, "", name)
		sub(/ \([^();]*:[0-9]+\)$/, "", name)	# a Python frame: pprof names it without its file
		if (name ~ /^\[/) continue
		if (i == k) flat[name] += n
		if (!(name in seen)) { cum[name] += n; seen[name] = 1 }
	}
} END { for (x in cum) printf "%s\t%d\t%d\n", x, flat[x], cum[x] }' "$T/run.folded" | sort > "$T/folded.funcs"
# -symbolize=none: pprof would demangle C++ and Rust names itself.
pprof -top -symbolize=none -sample_index=samples -nodefraction=0 -edgefraction=0 -nodecount=1000000 \
	"$T/run.pb.gz" 2> /dev/null |
	awk 'found && NF >= 6 {
		name = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", name)
		sub(/ \((partial-)?inline\)$/, "", name)	# pprof marks inlined calls; folded says _[i]
		if (name ~ /^\[/ || name == "<unknown>") next
		flat[name] += $1; cum[name] += $4
	} /flat%/ { found = 1 }
	END { for (x in cum) printf "%s\t%d\t%d\n", x, flat[x], cum[x] }' | sort > "$T/pprof.funcs"
nfuncs=$(wc -l < "$T/folded.funcs")
if [ "$nfuncs" -gt 10 ] && diff "$T/folded.funcs" "$T/pprof.funcs" > "$T/funcs.diff"; then
	ok "flat and cumulative samples of all $nfuncs named functions equal the folded output's"
else
	not_ok "per-function totals differ between pprof and folded ($nfuncs functions)"; diag "$T/funcs.diff"
fi
ptotal=$(pprof -top -sample_index=samples "$T/run.pb.gz" 2> /dev/null | sed -n 's/^Showing nodes accounting for .* of \([0-9]*\) total$/\1/p')
check "pprof total $ptotal = folded total $total" '[ "$ptotal" = "$total" ]'

# cpu/nanoseconds is the default sample type, period x count.
pprof -raw "$T/run.pb.gz" > "$T/raw" 2> /dev/null
period=$(sed -n 's/^Period: //p' "$T/raw")
check "period is 1e9/F: $period ns" '[ "$period" = $((1000000000 / 999)) ]'
check "sample types samples/count and cpu/nanoseconds, cpu the default" \
	'grep -q "^samples/count cpu/nanoseconds\[dflt\]\$" "$T/raw"'
check "a [kernel.kallsyms] mapping" 'grep -q " \[kernel.kallsyms\] " "$T/raw"'
check "the split binary's mapping carries its build ID" \
	'grep -Eq "/split [0-9a-f]{40}( |$)" "$T/raw"'

# -tagfocus=pid=N keeps exactly that process.
want=$(sum_matching "$T/run.folded" "^split-$split_pid;")
# With no node dropped, "accounting for N" is every sample the filter keeps.
focused_total() {
	pprof -top -sample_index=samples -nodefraction=0 -nodecount=1000000 "$@" "$T/run.pb.gz" \
		2> /dev/null | sed -n 's/^Showing nodes accounting for \([0-9]*\), .*/\1/p'
}
got=$(focused_total -tagfocus=pid=$split_pid)
if [ -n "$want" ] && [ "$want" -gt 200 ] && [ "$got" = "$want" ]; then
	ok "-tagfocus=pid=$split_pid selects the $want samples of that process"
else
	not_ok "-tagfocus=pid=$split_pid: pprof $got, folded $want"
fi
got=$(focused_total -tagfocus=comm=syscall)
want=$(sum_matching "$T/run.folded" '^syscall-[0-9]+;')
check "-tagfocus=comm=syscall selects $want samples" '[ "$got" = "$want" ]'
check "samples carry a cgroup label" 'grep -q "cgroup:\[/" "$T/raw"'
