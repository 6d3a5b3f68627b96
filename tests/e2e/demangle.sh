# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# C++ names as people read them: a workload whose time splits 2:1 between
# a const method of a namespaced class and a function template, profiled;
# folded and pprof show the demangled names, pprof keeps the mangled one
# as the system name.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

SECONDS_RUN=4
AREA='shapes::Circle::area() const'
COMPUTE='compute<double>(double, int)'
CALLER='shapes::run_round(unsigned long)'

start_workload cxx $((SECONDS_RUN + 3))
pid=$!
sleep 0.3
$BPFPROF -F 4999 -d $SECONDS_RUN -p $pid -o "$T/cxx.folded" -o "$T/cxx.pb.gz" 2> "$T/cxx.err"
rc=$?
check "cxx: exit status 0" '[ $rc = 0 ]'
total=$(folded_total "$T/cxx.folded")
check "cxx: output passes the strict folded checker" '[ -n "$total" ]'
total=${total:-0}

# Regular expressions (ERE) of the names: ( ) . taken literally.
re() { printf '%s' "$1" | sed 's/[]().*[]/\\&/g'; }
two=$(sum_matching "$T/cxx.folded" ";$(re "$AREA")(;|\$)")
one=$(sum_matching "$T/cxx.folded" ";$(re "$COMPUTE")(;|\$)")
r=$(ratio "$two" "$one")
if within "$r" 1.8 2.2; then
	ok "cxx: $AREA / $COMPUTE = $r (2 +- 10%; $two vs $one samples)"
else
	not_ok "cxx: $AREA / $COMPUTE = $r, want 2 +- 10%" "$two vs $one samples"
	diag "$T/cxx.folded"
fi
full=$(sum_matching "$T/cxx.folded" \
	"^cxx;(.*;)?main;$(re "$CALLER");($(re "$AREA")|$(re "$COMPUTE"))(;|\$)")
if within "$full" $((total * 95 / 100)) "$total"; then
	ok "cxx: $full of $total samples show main;$CALLER;(area|compute)"
else
	not_ok "cxx: only $full of $total samples show main;$CALLER;(area|compute)"
	diag "$T/cxx.folded"
fi
check "cxx: no mangled name of the workload left" \
	"! grep -q '_ZNK6shapes\\|_ZN6shapes\\|_Z7compute' '$T/cxx.folded'"
# A C++ name has spaces, commas, brackets: every frame of ours whole, none cut in two.
bad=$(awk '{ sub(/ [0-9]+$/, ""); n = split($0, f, ";")
	for (i = 1; i <= n; i++)
		if (f[i] ~ /shapes|compute/ && gsub(/[(<]/, "&", f[i]) != gsub(/[)>]/, "&", f[i])) print f[i] }' \
	"$T/cxx.folded" | head -3)
check "cxx: every C++ frame has its brackets balanced${bad:+ (not: $bad)}" '[ -z "$bad" ]'

# pprof: the readable name, and the symbol as the system name.
go tool pprof -raw -symbolize=none "$T/cxx.pb.gz" > "$T/raw" 2> "$T/raw.err"
for pair in "$AREA=_ZNK6shapes6Circle4areaEv" "$COMPUTE=_Z7computeIdET_S0_i" \
	"$CALLER=_ZN6shapes9run_roundEm"; do
	name=${pair%=*}
	sys=${pair#*=}
	if grep -Eq " $(re "$name") .*s=[0-9]+\\($sys\\)\$" "$T/raw"; then
		ok "pprof: '$name', system name $sys"
	else
		not_ok "pprof: no '$name' with system name $sys"; diag "$T/raw.err"
		grep -m 3 'shapes\|compute' "$T/raw" | sed 's/^/#   | /'
	fi
done
# pprof's own demangler leaves names alone that are already demangled.
go tool pprof -top -sample_index=samples -nodefraction=0 -nodecount=1000000 "$T/cxx.pb.gz" \
	> "$T/top" 2> /dev/null
for name in "$AREA" "$COMPUTE"; do
	n=$(awk -v name="$name" '{ l = $0; sub(/^ *[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +[^ ]+ +/, "", l) }
		l == name { print $4 }' "$T/top")
	want=$(sum_matching "$T/cxx.folded" ";$(re "$name")(;|\$)")
	check "pprof -top: '$name' in ${n:-no} samples, as in folded ($want)" '[ "${n:-x}" = "$want" ]'
done
