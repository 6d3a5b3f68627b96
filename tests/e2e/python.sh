# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Python frames, mixed with native ones, for every CPython 3.8 to 3.13 on
# the machine: Debian's python3.11 always, bullseye's python3.9 in a Debian
# root built once per machine (tests/tools/debian_root.sh, run with
# tests/tools/in_root.sh) when it can be built, the /root/.pyenv builds when
# present. A workload's Python split as it measured it itself; Python over
# OpenSSL; threads, the GIL held or not; a storm of 150 ms processes; a
# program that scribbles on its own frame chain; a version not read; every
# output with its reader.
. tests/lib.sh

F=4999
RUN_S=4
PYW=tests/workloads

PYTHONS=(/usr/bin/python3.11)
# The versions older than Debian's, which the split, OpenSSL and storm cases run on too.
OLD=()
for v in 3.8.18 3.9.18 3.10.13 3.11.7 3.12.1 3.13.0; do
	py=/root/.pyenv/versions/$v/bin/python${v%.*}
	[ -x "$py" ] || continue
	PYTHONS+=("$py")
	case $v in 3.8.* | 3.9.*) OLD+=("$py") ;; esac
done
[ ${#PYTHONS[@]} -gt 1 ] || echo "# no /root/.pyenv builds: Debian's python3.11 only"
[ -x /root/.pyenv/versions/3.8.18/bin/python3.8 ] || echo "# no Python 3.8 (Debian has none; /root/.pyenv/versions/3.8.18 absent): 3.8 not run"
# Bullseye's python3.9 (3.9.2, linked into the executable), chrooted by a
# script of the same name (the pid stays the interpreter's), in $T, where
# the workloads are copied: the root sees $T at the same path. Its
# python3.9-dbg is for test_python_offsets (3.9.2's layout by its DWARF).
if root=$(tests/tools/debian_root.sh bullseye-root bullseye python3.9 python3.9-dbg 2> "$T/root.err") &&
	[ -x "$root/usr/bin/python3.9" ]; then
	mkdir -p "$T/bullseye/tests/workloads" && cp $PYW/py_*.py "$T/bullseye/tests/workloads/"
	cat > "$T/bullseye/python3.9" <<-EOF
		#!/bin/sh
		exec $(pwd)/tests/tools/in_root.sh -b "$T" "$root" /bin/sh -c 'cd "\$0" && exec /usr/bin/python3.9 "\$@"' "$T/bullseye" "\$@"
	EOF
	chmod +x "$T/bullseye/python3.9"
	PYTHONS+=("$T/bullseye/python3.9")
	OLD+=("$T/bullseye/python3.9")
else
	echo "# no Debian bullseye root for python3.9: $(tail -1 "$T/root.err")"
fi

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
top() { awk '{print $NF, $0}' "$1" | sort -rn | head -3 | sed 's/^[0-9]* //; s/.*PyEval_EvalCode;//' | cut -c1-200 | sed 's/^/#   /'; }
# run_py NAME PYTHON SCRIPT ARGS...: the workload in the background, once it started; sets PID.
run_py() {
	local name=$1 py=$2
	shift 2
	"$py" "$@" > "$T/$name.out" &
	PID=$!
	BG_PIDS+=($PID)
}

# 1. alpha and beta call the same work() 2n and n times: the samples under
# each split as the workload's own clock split its time (within four standard deviations, 6 %).
# Debian's python3.11 and the older ones write every output too (2.).
is_old() { local o; for o in "${OLD[@]}"; do [ "$o" = "$1" ] && return 0; done; return 1; }
OUTS=()
i=0
for py in "${PYTHONS[@]}"; do
	name=split$i
	outs=()
	if [ $i = 0 ] || is_old "$py"; then
		outs+=(-o "$T/$name.pb.gz" -o "$T/callgrind.out.$name" -o "$T/$name.svg")
		OUTS+=("$name $py")
	fi
	# Profiled over the very window the workload measures, however long bpfprof takes to attach.
	start_window $name $RUN_S "$py" $PYW/py_split.py
	profile_window $name -F $F "${outs[@]}"
	rc=$RC
	read -r a_ns b_ns < "$T/$name.out"
	total=$(folded_total "$T/$name.folded")
	alpha=$(sum_matching "$T/$name.folded" ';alpha \(py_split\.py:[0-9]+\)(;|$)')
	beta=$(sum_matching "$T/$name.folded" ';beta \(py_split\.py:[0-9]+\)(;|$)')
	py_frames=$(sum_matching "$T/$name.folded" '\(py_split\.py:[0-9]+\)')
	want=$(ratio "$a_ns" "$b_ns")
	got=$(ratio "$alpha" "$beta")
	if [ $rc = 0 ] && [ "$beta" -gt 500 ] && near_ratio "$alpha" "$beta" "$want"; then
		ok "$py: alpha/beta = $got in $alpha + $beta samples, the workload measured $want (within $(ratio_spread "$alpha" "$beta") %)"
	else
		not_ok "$py: alpha/beta = $got ($alpha / $beta samples, rc $rc), the workload measured $want ($a_ns / $b_ns ns)"
		top "$T/$name.folded"
		diag "$T/$name.err"
	fi
	check "$py: $(share "$py_frames" "$total")% of $total samples carry Python frames (>= 90 %)" \
		'within "$(share "$py_frames" "$total")" 90 100'
	i=$((i + 1))
done

# The stack, root to leaf: the interpreter's native frames, then the
# script's Python functions in place of _PyEval_EvalFrameDefault (one for
# each Python call in 3.8 to 3.10; fewer later).
check "Debian's python3.11: native frames to the Python ones: _start;...;Py_BytesMain;...;main;alpha;work" \
	'grep -Eq "^python3\.11;_start;__libc_start_main;__libc_start_call_main;Py_BytesMain;.*;<module> \(py_split\.py:[0-9]+\);main \(py_split\.py:[0-9]+\);alpha \(py_split\.py:[0-9]+\);work \(py_split\.py:[0-9]+\)(;| )" "$T/split0.folded"'
for out in "${OUTS[@]}"; do
	read -r name py <<< "$out"
	[ "$name" = split0 ] && continue
	check "$py: native frames to the Python ones: _start;...;Py_BytesMain;...;main;alpha;work" \
		'grep -Eq "^python3\.[0-9]+;_start;(.*;)?Py_BytesMain;.*;<module> \(py_split\.py:[0-9]+\);(.*;)?main \(py_split\.py:[0-9]+\);(.*;)?alpha \(py_split\.py:[0-9]+\);(.*;)?work \(py_split\.py:[0-9]+\)(;| )" "$T/$name.folded"'
done
for out in "${OUTS[@]}"; do
	read -r name py <<< "$out"
	check "$py: no _PyEval_EvalFrameDefault left between Python frames" \
		'test "$(sum_matching "$T/$name.folded" "\(py_split\.py:[0-9]+\);(.*;)?_PyEval_EvalFrameDefault")" = 0'
done

# 2. Every output with its reader: pprof's lines, callgrind's files, the SVG's colours.
work_line=$(grep -n 's = (s \* 31 + i)' $PYW/py_split.py | cut -d: -f1)
for out in "${OUTS[@]}"; do
	read -r name py <<< "$out"
	# The script's file as Python names it: absolute from 3.9 on (in the root's
	# working directory for bullseye's), as given on the command line in 3.8.
	src=$(pwd)/$PYW/py_split.py
	case $py in
	"$T"/bullseye/*) src=$T/bullseye/$PYW/py_split.py ;;
	*/python3.8) src=$PYW/py_split.py ;;
	esac
	go tool pprof -top -lines "$T/$name.pb.gz" > "$T/$name.lines.txt" 2> "$T/$name.lines.err"
	if [ ! -s "$T/$name.lines.err" ] && grep -Eq " work $src:($((work_line - 1))|$work_line)\$" "$T/$name.lines.txt"; then
		ok "$py pprof: go tool pprof reads it silently; work's samples at its loop's lines of $src"
	else
		not_ok "$py pprof: work at line $work_line of $src not in go tool pprof -lines"
		diag "$T/$name.lines.err"; head -12 "$T/$name.lines.txt" | diag /dev/stdin
	fi
	flat=$(awk -v f="$src" '$NF ~ f":" && $(NF-1) == "work" { s += $1 } END { print s + 0 }' "$T/$name.lines.txt")
	check "$py pprof: samples in work, by line ($flat ms)" 'test "${flat%.*}" -gt 0'
	# Nearly all of work's time is its loop's two lines (not its first, nor its setup or return).
	go tool pprof -top -lines -unit=ms -nodefraction=0 -nodecount=1000000 "$T/$name.pb.gz" 2> /dev/null |
		awk -v f="$src:" -v a=$((work_line - 1)) -v b=$work_line '
			$(NF-1) == "work" && index($NF, f) == 1 { l = substr($NF, length(f) + 1); all += $4
				if (l == a || l == b) loop += $4 }
			END { printf "%.1f %.0f\n", all ? 100 * loop / all : 0, all }' > "$T/$name.loop"
	read -r loop work_ms < "$T/$name.loop"
	check "$py pprof: $loop% of work's $work_ms ms at its loop's lines $((work_line - 1)) and $work_line (>= 90 %)" \
		'within "$loop" 90 100'
	# A file is named where it first appears (a caller's cfl= or its own fl=), then by number.
	check "$py callgrind: fl= names the Python file" 'grep -Eq "^c?fl=\([0-9]+\) (.*/)?$PYW/py_split\.py\$" "$T/callgrind.out.$name"'
	callgrind_annotate "$T/callgrind.out.$name" > "$T/$name.annotate.txt" 2> "$T/$name.annotate.err"
	check "$py callgrind: callgrind_annotate reads it: work's samples in py_split.py, its source annotated" \
		'grep -q "py_split\.py:work (py_split\.py:[0-9]*)" "$T/$name.annotate.txt"'
	# A Python frame's fill: blue over red and green.
	awk -F'"' '/<g class="python"><title>alpha \(py_split\.py:/ { for (i = 1; i < NF; i++) if ($i ~ /fill=$/) print $(i + 1) }' \
		"$T/$name.svg" | head -1 > "$T/fill"
	fill=$(cat "$T/fill")
	if [[ $fill =~ ^#[0-9a-f]{6}$ ]] && [ $((16#${fill:5:2})) -gt $((16#${fill:1:2})) ] &&
		[ $((16#${fill:5:2})) -gt $((16#${fill:3:2})) ]; then
		ok "$py svg: alpha is a frame of class python, in blue ($fill)"
	else
		not_ok "$py svg: alpha's frame not of class python in blue (fill '$fill')"
	fi
done

# 3. Python over OpenSSL: hashing()'s samples show libcrypto below it.
i=0
for py in /usr/bin/python3.11 "${OLD[@]}"; do
	name=hash$i
	run_py $name "$py" $PYW/py_hash.py $((RUN_S + 2))
	sleep 0.5
	$BPFPROF -F 999 -d $RUN_S -p $PID -o "$T/$name.folded" 2> "$T/$name.err"
	wait $PID
	in_hash=$(sum_matching "$T/$name.folded" ';hashing \(py_hash\.py:[0-9]+\)(;|$)')
	openssl=$(sum_matching "$T/$name.folded" ';hashing \(py_hash\.py:[0-9]+\);.*(libcrypto|SHA256|sha256|EVP_Digest)')
	if [ "$in_hash" -gt 300 ] && within "$(share "$openssl" "$in_hash")" 90 100; then
		ok "$py hashlib: $(share "$openssl" "$in_hash")% of $in_hash samples in hashing() show OpenSSL's frames below it"
	else
		not_ok "$py hashlib: $openssl of $in_hash samples in hashing() show OpenSSL's frames"; top "$T/$name.folded"
	fi
	i=$((i + 1))
done

# 4. Threads: each its own Python stack, with the GIL released too (hashlib, zlib).
run_py threads /usr/bin/python3.11 $PYW/py_threads.py $((RUN_S + 2))
sleep 0.5
$BPFPROF -F 999 -d $RUN_S -p $PID -o "$T/threads.folded" 2> "$T/threads.err"
wait $PID
T_='Thread\.run \(threading\.py:[0-9]+\)'
spin=$(sum_matching "$T/threads.folded" "$T_;(.*;)?spinner \\(py_threads\\.py:[0-9]+\\)")
hashed=$(sum_matching "$T/threads.folded" "$T_;(.*;)?hasher \\(py_threads\\.py:[0-9]+\\);.*(libcrypto|SHA256|EVP_Digest)")
zipped=$(sum_matching "$T/threads.folded" "$T_;(.*;)?compressor \\(py_threads\\.py:[0-9]+\\);.*(deflate|libz)")
mixed=$(sum_matching "$T/threads.folded" '(spinner|hasher|compressor) \(.*(spinner|hasher|compressor) \(')
# Enough of each to show it (on a loaded machine the threads get a few hundred samples, not thousands).
threads_ok() { [ "$spin" -gt 100 ] && [ "$hashed" -gt 100 ] && [ "$zipped" -gt 30 ] && [ "$mixed" = 0 ]; }
check "threads: spinner $spin, hasher $hashed (in OpenSSL), compressor $zipped (in zlib) samples, each under Thread.run; none in another's stack" \
	'threads_ok'

# 5. A storm of 150 ms processes: named while they live, most gone before the drain.
i=0
for py in /usr/bin/python3.11 "${OLD[@]}"; do
	name=storm$i
	rm -f "$T/go"
	(wait_go; for k in $(seq 20); do
		for j in 1 2; do
			"$py" -c "$(cat $PYW/py_storm.py)" &
		done
		wait
	done) &
	storm=$!
	BG_PIDS+=($storm)
	profile_until_done "$T/$name.folded" $storm -F 999
	# Of the samples running the -c code (after the interpreter's start, before its end).
	# The storm's by their command name (python3.11, python3.9: the system is profiled).
	comm=$(basename "$py" | sed 's/\./\\./g')
	all=$(sum_matching "$T/$name.folded" "^$comm;")
	running=$(sum_matching "$T/$name.folded" "^$comm;.*;PyRun_SimpleStringFlags;")
	named=$(sum_matching "$T/$name.folded" "^$comm;.*;PyRun_SimpleStringFlags;.*;storm_fn \\(<string>:[0-9]+\\)(;|\$)")
	storm_ok() { [ "$running" -gt 2000 ] && within "$(share "$named" "$running")" 90 100; }
	check "$py storm of 150 ms processes: $(share "$named" "$running")% of $running samples running their code named with storm_fn (>= 90 %; $(share "$named" "$all")% of all $all)" \
		'storm_ok'
	i=$((i + 1))
done

# 6. A program scribbling on its frame chain: the walk stops there, the
# native stack stays, the cause is counted; bpfprof neither crashes nor fails.
for py in /usr/bin/python3.11 /root/.pyenv/versions/3.8.18/bin/python3.8 /root/.pyenv/versions/3.10.13/bin/python3.10 /root/.pyenv/versions/3.12.1/bin/python3.12; do
	[ -x "$py" ] || continue
	for mode in fault junk; do
		name=scribble-$(basename "$py")-$mode
		run_py "$name" "$py" $PYW/py_scribble.py $((RUN_S)) $mode
		sleep 0.3
		$BPFPROF -F 999 -d 2 -p $PID -o "$T/$name.folded" 2> "$T/$name.err"
		rc=$?
		wait $PID
		prc=$?
		cut_at=$(sed -n 's/^bpfprof: python: .* (cut: [0-9]* at [0-9]* frames, \([0-9]*\) at an unreadable frame).*/\1/p' "$T/$name.err")
		total=$(folded_total "$T/$name.folded")
		native=$(sum_matching "$T/$name.folded" '^python3\.[0-9]+;_start;.*(Py_BytesMain|Py_RunMain).*;victim \(py_scribble\.py:[0-9]+\)')
		if [ $rc = 0 ] && [ $prc = 0 ] && [ "${cut_at:-0}" -gt 0 ] && [ -n "$total" ] && within "$(share "$native" "$total")" 90 100; then
			ok "$py, frame chain scribbled ($mode): $cut_at walks cut at an unreadable frame; $(share "$native" "$total")% of $total samples keep their native stack to victim()"
		else
			not_ok "$py, scribbled ($mode): bpfprof rc $rc, workload rc $prc, cut ${cut_at:-none}, $native of $total with native frames"
			top "$T/$name.folded"; diag "$T/$name.err"
		fi
	done
done

# 7. A version bpfprof does not read: said once, counted, native frames kept.
py37=/root/.pyenv/versions/3.7.16/bin/python3.7
if [ -x $py37 ]; then
	run_py old $py37 $PYW/py_split.py $((RUN_S)) "$T/old.ready"
	while [ ! -e "$T/old.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
	$BPFPROF -F 999 -d 2 -p $PID -o "$T/old.folded" 2> "$T/old.err"
	rc=$?
	wait $PID
	warned=$(grep -c "^bpfprof: warning: Python 3.7 ('.*'): its frames are not read" "$T/old.err")
	unread=$(sed -n 's/^bpfprof: python: .* \([0-9]*\) of a version not read;.*/\1/p' "$T/old.err")
	old_ok() {
		[ $rc = 0 ] && [ "$warned" = 1 ] && [ "${unread:-0}" -gt 100 ] &&
			[ "$(sum_matching "$T/old.folded" 'py_split\.py')" = 0 ]
	}
	check "3.7: one warning line, ${unread:-no} samples counted as of a version not read, no Python frames, exit 0" \
		'old_ok'
else
	echo "# no Python 3.7 build: the unsupported version is not checked"
fi

# 8. --no-python: native frames only, and no Python summary.
run_py nopy /usr/bin/python3.11 $PYW/py_split.py 3 "$T/nopy.ready"
while [ ! -e "$T/nopy.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
$BPFPROF -F 999 -d 1 -p $PID --no-python -o "$T/nopy.folded" 2> "$T/nopy.err"
wait $PID
nopy_ok() {
	[ "$(sum_matching "$T/nopy.folded" 'py_split\.py')" = 0 ] &&
		[ "$(sum_matching "$T/nopy.folded" '_PyEval_EvalFrameDefault')" -gt 0 ] &&
		! grep -q '^bpfprof: python:' "$T/nopy.err"
}
check "--no-python: no Python frames, _PyEval_EvalFrameDefault stays, no python line in the summary" 'nopy_ok'
