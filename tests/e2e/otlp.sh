# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# OTLP profiles: -o FILE.otlp.pb decoded by protoc --decode against the
# specification's messages (tests/otlp, the field numbers of
# opentelemetry-proto 1.10) and read by tests/otlp_read.py: the dictionary's
# references in range, the same stacks and counts as the pprof of the same
# run, the 2:1 split, the resource's and the samples' attributes; --wall's two
# profiles; --otlp to a stand-in for the Collector's OTLP/HTTP receiver
# (tests/otlp_receiver.py) through an outage of three intervals: every
# sample sent once, the summary and /metrics saying what was tried again.
. tests/lib.sh
export HOME=$T	# go's cache
PY=/usr/bin/python3
otlp() { $PY tests/otlp_read.py "$@"; }

port=$(( (RANDOM % 20000) + 30000 ))
receive() {
	$PY tests/otlp_receiver.py $port "$1" 2> "$1.stderr" &
	RECEIVER=$!
	BG_PIDS+=($RECEIVER)
	for i in $(seq 50); do
		curl -s -o /dev/null "http://127.0.0.1:$port/" && return
		sleep 0.1
	done
}
# ratio FOLDED: split_two_thirds' samples over split_one_third's.
ratio() {
	awk '/;split_two_thirds(;|$| )/ { two += $NF } /;split_one_third(;|$| )/ { one += $NF }
	     END { if (one) printf "%.4f", two / one }' "$1"
}
# within PCT A B: A and B within PCT percent of B.
within() { awk -v p="$1" -v a="$2" -v b="$3" 'BEGIN { exit !(b > 0 && (a - b) / b <= p / 100 && (b - a) / b <= p / 100) }'; }

start_workload split 300
split_pid=$!
sleep 0.3

# 1. One run, written as OTLP, pprof and folded.
$BPFPROF -F 999 -d 3 -p $split_pid --app-name 'web{dc=eu1}' -o "$T/run.otlp.pb" -o "$T/run.pb.gz" \
	-o "$T/run.folded" 2> "$T/run.err"
rc=$?
check "-o run.otlp.pb -o run.pb.gz: exit $rc" '[[ $rc = 0 && -s $T/run.otlp.pb ]]'
otlp "$T/run.otlp.pb" check > "$T/check.out" 2>&1
rc=$?
check "protoc --decode reads it; every index into the dictionary in range, each table's entry 0 the zero one: $(tail -1 "$T/check.out")" '[ $rc = 0 ]'
[ $rc = 0 ] || diag "$T/check.out"
otlp "$T/run.otlp.pb" folded samples > "$T/otlp.folded"
# The pprof's stacks as bpfprof's pprof reader names them: "stack N N" against itself.
$BPFPROF diff "$T/run.pb.gz" "$T/run.pb.gz" | awk '{ $NF = ""; sub(/ $/, ""); print }' > "$T/pprof.folded"
n=$(wc -l < "$T/otlp.folded")
if [ "$n" -gt 1 ] && diff "$T/otlp.folded" "$T/pprof.folded" > "$T/stacks.diff"; then
	ok "the OTLP's $n stacks and counts are the pprof's of the same run, stack for stack"
else
	not_ok "the OTLP's stacks differ from the pprof's ($n stacks)"; diag "$T/stacks.diff"
fi
total=$(folded_total "$T/run.folded")
check "the OTLP's samples add up to the run's $total" '[ "$(awk "{ n += \$NF } END { print n + 0 }" "$T/otlp.folded")" = "$total" ]'
r_otlp=$(ratio "$T/otlp.folded")
r_pprof=$(ratio "$T/pprof.folded")
check "split_two_thirds/split_one_third read from the OTLP, $r_otlp, within 1% of the pprof's $r_pprof" \
	'within 1 "$r_otlp" "$r_pprof"'
otlp "$T/run.otlp.pb" profiles > "$T/profiles"
read -r type time dur sum < "$T/profiles"
check "one profile, samples/count, a period of 1e9/F cpu nanoseconds, about 3 s long: $(cat "$T/profiles")" \
	'[ "$(wc -l < "$T/profiles")" = 1 ] && [ "$type" = samples/count ] && [ "$dur" -gt 2900000000 ] && [ "$dur" -lt 3500000000 ] &&
	 protoc -I tests/otlp --decode opentelemetry.proto.collector.profiles.v1development.ExportProfilesServiceRequest \
		opentelemetry/proto/collector/profiles/v1development/profiles_service.proto < "$T/run.otlp.pb" | grep -q "period: $((1000000000 / 999))$"'
otlp "$T/run.otlp.pb" resource > "$T/resource"
check "resource: host.name, host.arch, os.type, service.name from --app-name, its label: $(tr '\n' ' ' < "$T/resource")" \
	'grep -qx "host.name=$(hostname)" "$T/resource" && grep -qx "host.arch=amd64" "$T/resource" &&
	 grep -qx "os.type=linux" "$T/resource" && grep -qx "service.name=web" "$T/resource" && grep -qx "dc=eu1" "$T/resource"'
otlp "$T/run.otlp.pb" sample-attrs > "$T/attrs"
check "samples: process.pid, process.executable.name, thread.id, thread.name, process.linux.cgroup of the split process" \
	'grep -qx "process.pid=$split_pid" "$T/attrs" && grep -qx "process.executable.name=split" "$T/attrs" &&
	 grep -qx "thread.id=$split_pid" "$T/attrs" && grep -qx "thread.name=split" "$T/attrs" &&
	 grep -q "^process.linux.cgroup=0::/" "$T/attrs"'
grep -qx "process.executable.name=split" "$T/attrs" || diag "$T/attrs" 8
otlp "$T/run.otlp.pb" sample-keys > "$T/keys"
check "locations say profile.frame.type native; mappings carry process.executable.build_id.gnu" \
	'grep -qx "profile.frame.type=native" "$T/keys" && grep -qx "mapping:process.executable.build_id.gnu" "$T/keys"'
# Each runtime's frames typed as the OpenTelemetry eBPF profiler types them, in one run of
# Python's, LuaJIT's, Ruby's and PHP's 2:1 workloads (Java's: e2e/java, by the same table).
# types_of WHAT REGEX: the frame types of the frames whose name matches REGEX, sorted, once each.
types_of() { awk -F'\t' -v re="$2" '$2 ~ re { print $1 }' "$T/$1.types" | sort -u | tr '\n' ' '; }
rt_pids=
for wl in "/usr/bin/python3.11 tests/workloads/py_split.py" "luajit tests/workloads/lua_split.lua" \
	"ruby3.1 tests/workloads/rb_split.rb" "php8.2 tests/workloads/php_split.php"; do
	$wl 60 > /dev/null 2>&1 &
	BG_PIDS+=($!)
	rt_pids+=${rt_pids:+,}$!
done
sleep 1
$BPFPROF -F 999 -d 2 -p $rt_pids -o "$T/rt.otlp.pb" 2> "$T/rt.err"
rc=$?
kill ${rt_pids//,/ } 2> /dev/null
otlp "$T/rt.otlp.pb" frame-types > "$T/rt.types"
# (Regular expressions with [.] and [(], not backslashes: awk -v reads escapes in them.)
for want in "cpython py_split[.]py" "luajit lua_split[.]lua" "ruby rb_split[.]rb" "php php_split[.]php"; do
	read -r type file <<< "$want"
	check "$type: the frames of $file typed '$(types_of rt "^(alpha|beta|work) [(]$file:")' (rc $rc)" \
		'[ "$(types_of rt "^(alpha|beta|work) [(]$file:")" = "$type " ]'
done
check "native: the interpreters' own frames typed '$(types_of rt "^(PyEval_EvalCode|lj_vm_[a-z_]+|rb_vm_exec|execute_ex)$")'" \
	'[ "$(types_of rt "^(PyEval_EvalCode|lj_vm_[a-z_]+|rb_vm_exec|execute_ex)$")" = "native " ]'
# syscall's leaves are in the kernel and libc: its own mapping is met last, yet comes first.
# (Workloads run long and are ended after: a loaded machine can take seconds to attach.)
start_workload syscall 60
sys_pid=$!
sleep 0.3
$BPFPROF -F 999 -d 1 -p $sys_pid -o "$T/sys.pb.gz" -o "$T/sys.otlp.pb" 2> /dev/null
kill $sys_pid
go tool pprof -raw "$T/sys.pb.gz" 2> /dev/null | sed -n '/^Mappings/{n;p;q}' > "$T/mapping1"
check "pprof: mapping 1 is the main binary, syscall ($(cut -c1-100 "$T/mapping1"))" 'grep -q "/syscall " "$T/mapping1"'
otlp "$T/sys.otlp.pb" frame-types > "$T/sys.types"
check "kernel: the kernel's frames typed '$(types_of sys "_[[]k[]]$")', the others '$(types_of sys "[^]]$")'" \
	'[ "$(types_of sys "_[[]k[]]$")" = "kernel " ] && [ "$(types_of sys "[^]]$")" = "native " ]'

# 2. --wall: two profiles, CPU samples and off-CPU nanoseconds, adding up to pprof's samples.
start_workload waits 60 2> /dev/null	# its measurements: not needed here
waits_pid=$!
sleep 0.3
$BPFPROF -F 999 -d 1.5 --wall -p $waits_pid -o "$T/wall.otlp.pb" -o "$T/wall.folded" 2> "$T/wall.err"
kill $waits_pid
otlp "$T/wall.otlp.pb" check > /dev/null 2>&1
rc=$?
otlp "$T/wall.otlp.pb" profiles > "$T/wall.profiles"
cpu=$(awk '$1 == "samples/count" { print $4 }' "$T/wall.profiles")
off=$(awk '$1 == "off_cpu/nanoseconds" { printf "%.0f", $4 / int(1e9 / 999) }' "$T/wall.profiles")
wtotal=$(folded_total "$T/wall.folded")
check "--wall: two profiles, samples/count ($cpu) and off_cpu/nanoseconds ($off periods), adding up to the run's $wtotal" \
	'[ $rc = 0 ] && [ "$(wc -l < "$T/wall.profiles")" = 2 ] && [ "${cpu:-0}" -gt 0 ] && [ "${off:-0}" -gt 0 ] && [ $((cpu + off)) = "$wtotal" ]'

# 3. --otlp every second to the receiver, gone for over 3 s of it, until a
# signal; /metrics scraped while it is gone and once the waiting have gone.
mkdir "$T/r1"
receive "$T/r1"
mport=$((port + 1))
$BPFPROF -v -F 999 -p $split_pid --otlp "http://127.0.0.1:$port" --push-interval 1 \
	--listen 127.0.0.1:$mport -o "$T/whole.pb.gz" -o "$T/whole.folded" 2> "$T/o1.err" &
prof=$!
wait_attached "$T/o1.err" $prof
metric() { sed -n "s/^$1{sink=\"otlp\"} //p" "$2"; }
# scrape FILE CONDITION: /metrics into FILE until CONDITION (of $w waiting, $r tried again, $s sent) holds, 30 s at most.
scrape() {
	local i
	for i in $(seq 150); do
		curl -s "http://127.0.0.1:$mport/metrics" > "$1"
		w=$(metric bpfprof_intervals_waiting "$1") r=$(metric bpfprof_interval_retries_total "$1")
		s=$(metric bpfprof_intervals_sent_total "$1")
		eval "$2" && return
		sleep 0.2
	done
}
sleep 1.5
kill $RECEIVER
wait $RECEIVER 2> /dev/null
t0=$(now_ns)
scrape "$T/metrics.down" '[ "${w:-0}" -ge 1 ] && [ "${r:-0}" -ge 1 ]'
check "/metrics while it is gone: $w intervals waiting, $r attempts again (sink=\"otlp\")" '[[ ${w:-0} -ge 1 && ${r:-0} -ge 1 ]]'
sleep $(awk -v t=$(( ($(now_ns) - t0) / 1000000 )) 'BEGIN { s = 3.5 - t / 1000; print (s > 0 ? s : 0) }')
scrape "$T/metrics.gone" '[ -n "$w" ]'
check "/metrics after 3.5 s without the receiver: $w intervals waiting (3 or more)" '[ "${w:-0}" -ge 3 ]'
receive "$T/r1"
scrape "$T/metrics.up" '[ "${s:-0}" -ge 4 ] && [ "$w" = 0 ]'
kill -INT $prof
wait $prof
rc=$?
check "--otlp until SIGINT: exit $rc" '[ $rc = 0 ]'
check "the receiver refused nothing" '[ ! -s "$T/r1/refused" ]'
[ -s "$T/r1/refused" ] && diag "$T/r1/refused"
bad=
: > "$T/r1.profiles"
: > "$T/r1.folded"
for f in $(ls "$T/r1" | grep '\.otlp\.pb$' | sort -n); do
	otlp "$T/r1/$f" check > /dev/null 2>&1 || bad="$bad $f"
	otlp "$T/r1/$f" profiles >> "$T/r1.profiles"
	otlp "$T/r1/$f" folded samples >> "$T/r1.folded"
done
N=$(ls "$T/r1" | grep -c '\.otlp\.pb$')
check "every one of the $N requests decodes, its indices in range${bad:+ (not:$bad)}" '[[ $N -gt 4 && -z $bad ]]'
# Each interval once, and they join: sorted by start, each ends where the next begins.
# (In bash: times in ns since 1970 are beyond awk's doubles' 53 bits.)
joins=0 prev=
while read -r type time dur n; do
	[ -n "$prev" ] && [ "$time" != "$prev" ] && joins=$((joins + 1))
	prev=$((time + dur))
done < <(sort -k2,2n "$T/r1.profiles")
dups=$(awk '{ print $2 }' "$T/r1.profiles" | sort | uniq -d | wc -l)
check "$N intervals, none twice ($dups), each ending where the next begins ($joins gaps)" '[[ $dups = 0 && $joins = 0 ]]'
sum=$(awk '{ n += $4 } END { print n + 0 }' "$T/r1.profiles")
took=$(folded_total "$T/whole.folded")
check "the requests hold every sample of the run, once: $sum = the run's $took" '[ "$sum" = "$took" ]'
$BPFPROF diff "$T/whole.pb.gz" "$T/whole.pb.gz" | awk '{ $NF = ""; sub(/ $/, ""); print }' > "$T/whole.pprof.folded"
r_otlp=$(ratio "$T/r1.folded")
r_pprof=$(ratio "$T/whole.pprof.folded")
check "the split over the requests, $r_otlp, within 1% of the whole run's pprof, $r_pprof" 'within 1 "$r_otlp" "$r_pprof"'
read -r sent again refused dropped unsent <<< "$(sed -n 's/^bpfprof: sent over OTLP \([0-9]*\) intervals to .* (\([0-9]*\) attempts again, [0-9]* perhaps twice); refused \([0-9]*\), dropped \([0-9]*\) .*, not sent at the stop \([0-9]*\)$/\1 \2 \3 \4 \5/p' "$T/o1.err")"
check "the summary says $sent sent ($N arrived), $again attempts again, $refused refused, $dropped dropped, $unsent unsent" \
	'[ "$sent" = "$N" ] && [ "${again:-0}" -gt 0 ] && [ "$refused" = 0 ] && [ "$dropped" = 0 ] && [ "$unsent" = 0 ]'
check "it said the receiver went and came back" \
	'grep -q "^bpfprof: warning: --otlp: cannot send to http://127.0.0.1:$port/v1development/profiles" "$T/o1.err" && grep -q "answers again" "$T/o1.err"'
check "/metrics once it answers again: $s sent, $w waiting, $r attempts again, as the summary's $again" \
	'[ "${s:-0}" -ge 4 ] && [ "$w" = 0 ] && [ "$r" = "$again" ]'

# 4. An answer not to try again (404 at a path the receiver does not serve): each interval dropped, said.
$BPFPROF -F 99 -d 2 --otlp "http://127.0.0.1:$port/v1/elsewhere" --push-interval 1 2> "$T/o2.err"
rc=$?
refused=$(sed -n 's/.*; refused \([0-9]*\), .*/\1/p' "$T/o2.err")
again=$(sed -n 's/.*(\([0-9]*\) attempts again, .*/\1/p' "$T/o2.err")
check "a 404: exit $rc, $refused intervals refused, $again attempts again, the answer said" \
	'[ $rc = 0 ] && [ "${refused:-0}" -ge 1 ] && [ "$again" = 0 ] && grep -q "refused (the server answered 404); dropped" "$T/o2.err"'

# 5. A 429 with Retry-After: 3: nothing sent again for 3 s (a new interval queued meanwhile
# waits too), then everything, the first attempt counted again, the pause said.
kill $RECEIVER
wait $RECEIVER 2> /dev/null
mkdir "$T/r2"
echo 3 > "$T/r2/retry_after"
receive "$T/r2"
$BPFPROF -F 99 -d 6 --otlp "http://127.0.0.1:$port" --push-interval 1 2> "$T/o3.err"
rc=$?
throttled=$(cat "$T/r2/throttled" 2> /dev/null)
next=$(awk 'NR == 1 { print $3 }' "$T/r2/log" 2> /dev/null)
gap=$(awk -v a="${throttled:-0}" -v b="${next:-0}" 'BEGIN { printf "%.2f", b - a }')
read -r sent again <<< "$(sed -n 's/^bpfprof: sent over OTLP \([0-9]*\) intervals to .* (\([0-9]*\) attempts again, .*/\1 \2/p' "$T/o3.err")"
check "Retry-After: 3: exit $rc, the next request $gap s after the 429 (>= 3), $sent sent ($(wc -l < "$T/r2/log") kept), $again attempt again, the pause said" \
	'[ $rc = 0 ] && [ -n "$throttled" ] && [ -n "$next" ] && awk -v g="$gap" "BEGIN { exit !(g >= 2.99) }" && [ "$sent" = "$(wc -l < "$T/r2/log")" ] && [ "${sent:-0}" -ge 4 ] && [ "$again" = 1 ] && grep -q "the server answered 429, asking for 3 s (Retry-After)" "$T/o3.err"'

# 6. Options that cannot go: one line saying what to give, exit 2.
while IFS='|' read -r args says; do
	eval "\$BPFPROF $args -d 1" > /dev/null 2> "$T/err" < /dev/null
	rc=$?
	check "bpfprof $args -> exit $rc: $(head -1 "$T/err")" \
		'[ $rc = 2 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -qF -- "$says" "$T/err"'
done <<EOF
--otlp otelcol:4318|give the OTLP/HTTP receiver's URL
--app-name x -o $T/x.pb.gz|add --push URL, --otlp URL or -o FILE.otlp.pb
-f otlp -o $T/x.pb.gz|is named like pprof output but -f says otlp
EOF
