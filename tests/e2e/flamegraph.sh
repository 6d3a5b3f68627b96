# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# --listen's /flamegraph?seconds=N: the interactive SVG of a window, as
# /debug/pprof/profile takes it. The 2:1 workload, started inside a 5 s
# window and measuring its own split, shows that split in the graph; the
# answer comes within a second of the window's end, as image/svg+xml;
# Chromium runs its script (all frames, search, zoom), from the file and as
# served; pid= keeps that one process, comm= one thread name, and with --wall
# mode= the CPU samples or the time off the CPU; bad parameters get 400 and
# one line; / links the page.
. tests/lib.sh
. tests/svg_lib.sh

# http OUT URL [CURL ARGS...]: the status; the body in OUT.
http() { local out=$1 url=$2; shift 2; curl -s -o "$out" -w '%{http_code}' "$@" "$url"; }
# sum_of TSV NAME: the samples of every frame called NAME (frames' output).
sum_of() { awk -F'\t' -v n="$2" '$8 == n { t += $2 } END { print t + 0 }' "$1"; }

start_workload spin 600 flamespin
spin_pid=$!
F=4999
$BPFPROF -v -F $F --listen 127.0.0.1:0 2> "$T/serve.err" &
prof=$!
BG_PIDS+=($prof)
wait_attached "$T/serve.err" $prof
url=$(sed -n 's|^bpfprof: serving on \(http://[^ ]*\)/ .*|\1|p' "$T/serve.err")
check "it says where it serves ($url)" '[ -n "$url" ]'

# 1. Graphs of one 5 s window: the whole machine's and the 2:1 workload's (pid=), and the
# machine's pprof (/debug/pprof/profile) beside them: one drain opens the three windows,
# another closes them. The workload runs all along (on a loaded machine the windows open and
# close late); its split on this host is what it measures itself, over a run of its own first.
WL_MEASURE=1 "$WL/split" 3 2> "$T/measured"
start_workload split 600
split_pid=$!
sleep 0.5
# answered NAME T0: when NAME's answer came, in ms from T0, and bpfprof's CPU time then (ns).
answered() { echo "$(( ($(now_ns) - $2) / 1000000 )) $(cpu_ns $prof)" > "$T/$1.ms"; }
t0=$(now_ns)
(curl -s -D "$T/all.head" -o "$T/all.svg" "$url/flamegraph?seconds=5"; answered all $t0) &
fetch_all=$!
(curl -s -D "$T/one.head" -o "$T/one.svg" "$url/flamegraph?seconds=5&pid=$split_pid"; answered one $t0) &
fetch_one=$!
(curl -s -D "$T/comm.head" -o "$T/comm.svg" "$url/flamegraph?seconds=5&comm=flamespin&mode=cpu"; answered comm $t0) &
fetch_comm=$!
# Asked last, the pprof is answered first (the newest window is the first the drain
# closes): its time is the drains', not the graphs' writing.
sleep 0.2
t1=$(now_ns)
(curl -s -o "$T/all.pb.gz" "$url/debug/pprof/profile?seconds=5"; answered pprof $t1) &
fetch_pprof=$!
wait $fetch_all $fetch_one $fetch_comm $fetch_pprof
read -r ms_pprof cpu_pprof < "$T/pprof.ms"
# By 6 s from the request. On a loaded machine the drains come late (the pprof of the same
# seconds shows how late: e2e/serve owns that) and bpfprof gets a slice of a CPU: then what
# the graph adds after the pprof is counted in bpfprof's CPU time, at most a second.
for g in all one; do
	read -r ms cpu < "$T/$g.ms"
	extra=$(( (cpu - cpu_pprof) / 1000000 ))
	q=$([ $g = one ] && echo "&pid=$split_pid")
	check "/flamegraph?seconds=5$q: answered in $ms ms (by 6000; the same seconds' pprof in $ms_pprof ms, the graph $extra ms of bpfprof's CPU after it)" \
		'[ "$ms" -le 6000 ] || { [ "$ms_pprof" -gt 5000 ] && [ "$extra" -le 1000 ]; }'
done
for g in all one comm; do
	check "$g: 200, Content-Type: $(sed -n 's/^Content-Type: \([^\r]*\).*/\1/ip' "$T/$g.head")" \
		'head -1 "$T/$g.head" | grep -q " 200 " && grep -qi "^Content-Type: image/svg+xml\s*$" "$T/$g.head"'
	check "$g: xmllint finds $(wc -c < "$T/$g.svg") bytes well-formed" 'xmllint --noout "$T/$g.svg" 2> "$T/$g.xmllint"'
	frames "$T/$g.svg" > "$T/$g.tsv"
done

# The split the workload measured itself.
m2=$(sed -n 's/^measured: split_two_thirds //p' "$T/measured")
m1=$(sed -n 's/^measured: split_one_third //p' "$T/measured")
want=$(ratio "$m2" "$m1")
two=$(sum_of "$T/one.tsv" split_two_thirds)
one=$(sum_of "$T/one.tsv" split_one_third)
spread=$(ratio_spread "$two" "$one")
allow=$(awk -v s="$spread" 'BEGIN { print (s > 5 ? s : 5) }')
check "pid=: split_two_thirds / split_one_third = $(ratio "$two" "$one") ($two / $one samples), the workload's measured $want within $allow % (5, or 4 standard deviations of these counts: $spread)" \
	'[ "$two" -gt 0 ] && [ "$one" -gt 0 ] && within "$(awk -v a="$two" -v b="$one" -v w="$want" "BEGIN { print a / b / w }")" "$(awk -v d="$allow" "BEGIN { print 1 - d / 100 }")" "$(awk -v d="$allow" "BEGIN { print 1 + d / 100 }")"'
threads=$(awk -F'\t' '$1 == "thread" { print $8 }' "$T/one.tsv" | sort -u | tr '\n' ' ')
check "pid=$split_pid: one process's threads only ($threads), all the graph's samples" \
	'[ "$threads" = "split " ] && [ "$(sum_of "$T/one.tsv" split)" = "$(sum_of "$T/one.tsv" all)" ]'
threads=$(awk -F'\t' '$1 == "thread" { print $8 }' "$T/comm.tsv" | sort -u | tr '\n' ' ')
check "comm=flamespin&mode=cpu: that thread name's samples only ($threads), all $(sum_of "$T/comm.tsv" all) of the graph's" \
	'[ "$threads" = "flamespin " ] && [ "$(sum_of "$T/comm.tsv" all)" -gt 0 ] &&
	 [ "$(sum_of "$T/comm.tsv" flamespin)" = "$(sum_of "$T/comm.tsv" all)" ]'
# The machine's graph holds the same workload and the rest: spin, at least.
a2=$(sum_of "$T/all.tsv" split_two_thirds)
a1=$(sum_of "$T/all.tsv" split_one_third)
check "the whole machine's graph: split's leaves $a2 / $a1 = $(ratio "$a2" "$a1") (2 within $(ratio_spread "$a2" "$a1") %), at least pid='s $two / $one, and spin's thread too" \
	'near_ratio "$a2" "$a1" 2 && [ "$a2" -ge "$two" ] && [ "$a1" -ge "$one" ] && grep -q "<title>flamespin (" "$T/all.svg"'

# 2. A browser: as e2e/svg checks a written SVG; then as served, over HTTP.
browser_checks "$T/one.svg" "pid= graph"
# Up to 5 minutes: under the sanitizers on a loaded machine, the window's drains are slow.
CHROME_TIMEOUT=300 chrome --dump-dom "$url/flamegraph?seconds=1&pid=$spin_pid" > "$T/served.dom"
ready=$(sed -n 's/^<svg [^>]*data-ready="\([0-9]*\)".*/\1/p' "$T/served.dom" | head -1)
n=$(grep -c '^<g class="' "$T/served.dom")
check "chromium opens $url/flamegraph?seconds=1&pid=$spin_pid: the script ran over its $n frames (data-ready '$ready'), flamespin's" \
	'[ "$n" -gt 0 ] && [ "$ready" = "$n" ] && grep -q "<title>flamespin (" "$T/served.dom"'
[ "$n" -gt 0 ] || tail -3 "$T/chrome.err" | diag /dev/stdin

# 3. Bad parameters: 400 and one line; / links the page.
for q in "seconds=abc" "seconds=0" "pid=x" "pid=0" "pid=1.5" "cgroup=relative" "comm=" \
	"comm=a_name_over_15_chars" "mode=wall" "mode=off-cpu"; do
	code=$(http "$T/body" "$url/flamegraph?$q")
	check "/flamegraph?$q -> $code: $(head -c 150 "$T/body")" \
		'[ "$code" = 400 ] && [ "$(wc -l < "$T/body")" = 1 ]'
done
code=$(http "$T/index" "$url/")
check "/ ($code) links /flamegraph" '[ "$code" = 200 ] && grep -q "<a href=\"/flamegraph?seconds=[0-9]*\">" "$T/index"'
kill -TERM $prof
wait $prof
rc=$?
check "bpfprof exits $rc at SIGTERM" '[ $rc = 0 ]'

# 4. mode= on a --wall agent: tests/workloads/waits burns the CPU, sleeps and reads a timerfd in
# turn. mode=cpu: its CPU samples, no [off-cpu: ...] leaf; mode=off-cpu: only those leaves,
# doze's and wait_timer's among them; both from the same window.
start_workload waits 600
waits_pid=${BG_PIDS[-1]}
$BPFPROF -v -F 999 --wall -p $waits_pid --listen 127.0.0.1:0 2> "$T/wall.err" &
prof=$!
BG_PIDS+=($prof)
wait_attached "$T/wall.err" $prof
url=$(sed -n 's|^bpfprof: serving on \(http://[^ ]*\)/ .*|\1|p' "$T/wall.err")
curl -s -o "$T/cpu.svg" "$url/flamegraph?seconds=3&mode=cpu" &
fetch_cpu=$!
curl -s -o "$T/off.svg" "$url/flamegraph?seconds=3&mode=off-cpu" &
fetch_off=$!
wait $fetch_cpu $fetch_off
# off_of TSV: the samples of the [off-cpu: STATE] leaves.
off_of() { awk -F'\t' '$8 ~ /^\[off-cpu: / { t += $2 } END { print t + 0 }' "$1"; }
frames "$T/cpu.svg" > "$T/cpu.tsv"
frames "$T/off.svg" > "$T/off.tsv"
check "--wall, mode=cpu: $(sum_of "$T/cpu.tsv" all) samples, $(sum_of "$T/cpu.tsv" burn) in burn, $(off_of "$T/cpu.tsv") off the CPU" \
	'[ "$(sum_of "$T/cpu.tsv" burn)" -gt 0 ] && [ "$(off_of "$T/cpu.tsv")" = 0 ]'
check "--wall, mode=off-cpu: all $(sum_of "$T/off.tsv" all) samples off the CPU ($(off_of "$T/off.tsv")), doze's $(sum_of "$T/off.tsv" doze) and wait_timer's $(sum_of "$T/off.tsv" wait_timer) among them" \
	'[ "$(off_of "$T/off.tsv")" -gt 0 ] && [ "$(off_of "$T/off.tsv")" = "$(sum_of "$T/off.tsv" all)" ] &&
	 [ "$(sum_of "$T/off.tsv" doze)" -gt 0 ] && [ "$(sum_of "$T/off.tsv" wait_timer)" -gt 0 ]'
kill -TERM $prof
wait $prof
