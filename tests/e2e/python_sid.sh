# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Python 3.14, and sid's 3.13 (GCC 16: its eval loop split in a hot and an
# unnamed cold part), from Debian's sid in a root built once per machine
# (tests/tools/newer_root.sh sid), run chrooted under the host's pids
# (tests/tools/in_root.sh). Their layouts come from the files' own
# _Py_DebugOffsets. Each: a workload's Python split as it measured it
# itself, its frames merged in place of the eval calls; Python over
# OpenSSL; a storm of 150 ms processes. Then copies of 3.14 whose file says
# a version bpfprof does not know, or whose _Py_DebugOffsets are junk; a copy of 3.13 whose
# _Py_DebugOffsets differ from bpfprof's table line (said at -v, the file's taken).
. tests/lib.sh

F=4999
RUN_S=4

if ! root=$(tests/tools/newer_root.sh sid 2> "$T/root.err"); then
	ok "sid's python3.14 and python3.13 # SKIP no Debian sid root: $(tail -1 "$T/root.err")"
	exit 0
fi
# The workloads where the root sees them: $T is bound at the same path inside.
mkdir -p "$T/pw" && cp tests/workloads/py_split.py tests/workloads/py_hash.py tests/workloads/py_storm.py "$T/pw/"

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
top() { awk '{print $NF, $0}' "$1" | sort -rn | head -3 | sed 's/^[0-9]* //; s/.*PyEval_EvalCode;//' | cut -c1-200 | sed 's/^/#   /'; }
# near_pct A B WANT PCT: A/B is WANT within PCT per cent of it.
near_pct() { awk -v a="$1" -v b="$2" -v w="$3" -v p="$4" 'BEGIN { r = b && w ? a / b / w : 0; exit !(r >= 1 - p / 100 && r <= 1 + p / 100) }'; }
# run_py NAME PYTHON ARGS...: PYTHON (a path inside the root) in the background; sets PID (its own).
run_py() {
	local name=$1 py=$2
	shift 2
	tests/tools/in_root.sh -b "$T" "$root" "$py" "$@" > "$T/$name.out" 2> "$T/$name.pyerr" &
	PID=$!
	BG_PIDS+=($PID)
}
wait_ready() { while [ ! -e "$1" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done; }

CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-pysid-$$
mkdir "$CGROUP_DIR"
for v in 3.14 3.13; do
	py=/usr/bin/python$v
	if [ ! -x "$root$py" ]; then
		not_ok "sid's python$v: not in the root ($root)"
		continue
	fi
	# 1. alpha and beta call the same work() 2n and n times: the samples under each
	# split as the workload's own clock split its time, within 5 %.
	name=split$v
	run_py $name $py "$T/pw/py_split.py" $((RUN_S + 2)) "$T/$name.ready"
	wait_ready "$T/$name.ready"
	$BPFPROF -v -F $F -d $RUN_S -p $PID -o "$T/$name.folded" 2> "$T/$name.err"
	rc=$?
	wait $PID
	read -r a_ns b_ns < "$T/$name.out"
	total=$(folded_total "$T/$name.folded")
	alpha=$(sum_matching "$T/$name.folded" ';alpha \(py_split\.py:[0-9]+\)(;|$)')
	beta=$(sum_matching "$T/$name.folded" ';beta \(py_split\.py:[0-9]+\)(;|$)')
	want=$(ratio "$a_ns" "$b_ns")
	if [ $rc = 0 ] && [ "$beta" -gt 500 ] && near_pct "$alpha" "$beta" "$want" 5; then
		ok "sid's python$v: alpha/beta = $(ratio "$alpha" "$beta") in $alpha + $beta samples, the workload measured $want (within 5 %)"
	else
		not_ok "sid's python$v: alpha/beta = $(ratio "$alpha" "$beta") ($alpha / $beta samples, rc $rc), the workload measured $want ($a_ns / $b_ns ns)"
		top "$T/$name.folded"
		diag "$T/$name.err"
	fi
	# Merged in place: the interpreter's native frames from _start to PyEval_EvalCode, then
	# the script's functions where the eval calls were; none put at the root above _start.
	whole=$(sum_matching "$T/$name.folded" "^python$v;_start;.*;Py_BytesMain;.*;PyEval_EvalCode;<module> \\(py_split\\.py:[0-9]+\\);main \\(py_split\\.py:[0-9]+\\);(alpha|beta) \\(py_split\\.py:[0-9]+\\);work \\(py_split\\.py:[0-9]+\\)(;|$)")
	at_root=$(sum_matching "$T/$name.folded" "^python$v;[^;]* \\(py_split\\.py:[0-9]+\\)")
	check "sid's python$v: $(share "$whole" "$total")% of $total samples whole from _start through PyEval_EvalCode to work() (>= 90 %), $at_root with Python frames at the root" \
		'within "$(share "$whole" "$total")" 90 100 && [ "$at_root" = 0 ] && grep -q "; 0 with their Python frames at the root" "$T/$name.err"'

	# 2. Python over OpenSSL: hashing()'s samples show libcrypto below it.
	name=hash$v
	run_py $name $py "$T/pw/py_hash.py" $((RUN_S + 2))
	sleep 0.5
	$BPFPROF -F $F -d $RUN_S -p $PID -o "$T/$name.folded" 2> "$T/$name.err"
	wait $PID
	in_hash=$(sum_matching "$T/$name.folded" ';hashing \(py_hash\.py:[0-9]+\)(;|$)')
	openssl=$(sum_matching "$T/$name.folded" ';hashing \(py_hash\.py:[0-9]+\);.*(libcrypto|SHA256|sha256|EVP_Digest)')
	if [ "$in_hash" -gt 500 ] && within "$(share "$openssl" "$in_hash")" 90 100; then
		ok "sid's python$v, hashlib: $(share "$openssl" "$in_hash")% of $in_hash samples in hashing() show OpenSSL's frames below it"
	else
		not_ok "sid's python$v, hashlib: $openssl of $in_hash samples in hashing() show OpenSSL's frames"
		top "$T/$name.folded"
	fi

	# 3. A storm of 150 ms processes, all in one chroot: named while they live. In a
	# cgroup of their own, so other Pythons of that name on the machine are not counted.
	cat > "$T/storm$v.sh" <<-EOF
		for i in \$(seq 20); do
			for j in 1 2; do
				$py -c "\$(cat $T/pw/py_storm.py)" &
			done
			wait
		done
	EOF
	mkdir -p "$CGROUP_DIR/$v"
	(wait_go; exec tests/tools/in_root.sh -b "$T" "$root" sh "$T/storm$v.sh") &
	storm=$!
	BG_PIDS+=($storm)
	echo $storm > "$CGROUP_DIR/$v/cgroup.procs"
	profile_until_done "$T/storm$v.folded" $storm -F 999 --cgroup "$CGROUP_DIR/$v"
	# Of the samples running the -c code: under Py_RunMain (after the start, whose imports
	# run Python code too) in PyEval_EvalCode (the command; stripped, the file names nothing
	# between them).
	all=$(sum_matching "$T/storm$v.folded" "^python$v;")
	running=$(sum_matching "$T/storm$v.folded" "^python$v;_start;.*;Py_RunMain;.*;PyEval_EvalCode(;|\$)")
	named=$(sum_matching "$T/storm$v.folded" "^python$v;_start;.*;Py_RunMain;.*;PyEval_EvalCode;<module> \\(<string>:1\\);storm_fn \\(<string>:[0-9]+\\)(;|\$)")
	check "sid's python$v, a storm of 150 ms processes: $(share "$named" "$running")% of $running samples running their code named with storm_fn (>= 90 %; $(share "$named" "$all")% of all $all)" \
		'[ "$running" -gt 1000 ] && within "$(share "$named" "$running")" 90 100'
done

# 4. Bad input, in copies of python3.14 (the file is what bpfprof reads): one whose
# Py_Version and _Py_DebugOffsets say 3.15, a version neither the table nor a known
# _Py_DebugOffsets layout describes; one whose _Py_DebugOffsets are junk where a frame's
# offsets are. Each: one warning line saying why, its samples counted as of a version not
# read, no Python frames, its native stacks kept, bpfprof exits 0.
# patch FILE SYMBOL WORD VALUE...: the u64 words from WORD on at SYMBOL's address become
# VALUEs (Py_Version's: its one u32).
patch() {
	python3 - "$@" <<-'EOF'
		import struct, subprocess, sys
		path, sym, word, values = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4:]
		syms = subprocess.check_output(["readelf", "-W", "--dyn-syms", path], text=True)
		addr = next(int(l.split()[1], 16) for l in syms.splitlines() if l.split()[-1:] == [sym])
		for l in subprocess.check_output(["readelf", "-W", "-l", path], text=True).splitlines():
		    f = l.split()
		    if f[:1] == ["LOAD"] and int(f[2], 16) <= addr < int(f[2], 16) + int(f[4], 16):
		        off = int(f[1], 16) + addr - int(f[2], 16)
		with open(path, "r+b") as fh:
		    fh.seek(off + 8 * word)
		    for v in values:
		        fh.write(struct.pack("<I" if sym == "Py_Version" else "<Q", int(v, 0)))
	EOF
}
if [ -x "$root/usr/bin/python3.14" ]; then
	mkdir -p "$T/v315" "$T/junk"
	cp "$root/usr/bin/python3.14" "$T/v315/python3.14"
	cp "$root/usr/bin/python3.14" "$T/junk/python3.14"
	patch "$T/v315/python3.14" Py_Version 0 0x030f00f0 &&
		patch "$T/v315/python3.14" _PyRuntime 1 0x030f00f0 &&
		patch "$T/junk/python3.14" _PyRuntime 31 0x4141414141414141 0x4141414141414141 0x4141414141414141 \
			0x4141414141414141 0x4141414141414141 0x4141414141414141 0x4141414141414141 0x4141414141414141 ||
		not_ok "bad input: cannot patch copies of python3.14"
	for bad in v315 junk; do
		case $bad in
		v315) want_v=3.15 why='bpfprof reads CPython 3\.8 to 3\.14' ;;
		junk) want_v=3.14 why="its _Py_DebugOffsets at _PyRuntime are not sane" ;;
		esac
		run_py $bad "$T/$bad/python3.14" "$T/pw/py_split.py" $RUN_S "$T/$bad.ready"
		wait_ready "$T/$bad.ready"
		$BPFPROF -v -F 999 -d 2 -p $PID -o "$T/$bad.folded" 2> "$T/$bad.err"
		rc=$?
		wait $PID
		prc=$?
		warned=$(grep -c "^bpfprof: warning: Python $want_v ('.*/$bad/python3\.14'): its frames are not read ($why" "$T/$bad.err")
		unread=$(sed -n 's/^bpfprof: python: .* \([0-9]*\) of a version not read;.*/\1/p' "$T/$bad.err")
		total=$(folded_total "$T/$bad.folded")
		native=$(sum_matching "$T/$bad.folded" '^python3\.14;_start;.*Py_BytesMain;.*PyEval_EvalCode;')
		bad_ok() {
			[ $rc = 0 ] && [ $prc = 0 ] && [ "$warned" = 1 ] && [ "${unread:-0}" -gt 50 ] &&
				within "$(share "${unread:-0}" "$total")" 90 100 &&
				[ "$(sum_matching "$T/$bad.folded" 'py_split\.py')" = 0 ] &&
				within "$(share "$native" "$total")" 90 100
		}
		check "bad input ($bad): one warning '$(grep -m1 "^bpfprof: warning: Python $want_v ('.*/$bad/" "$T/$bad.err" | sed 's/^.*): its frames/its frames/')', ${unread:-no} of its $total samples counted as of a version not read (>= 90 %), no Python frames, $(share "$native" "$total")% of $total native stacks from _start to PyEval_EvalCode, exit 0" \
			'bad_ok'
		bad_ok || { echo "#   rc $rc, workload rc $prc, $warned warnings, ${unread:-no} unread"; top "$T/$bad.folded"; diag "$T/$bad.err"; }
	done
else
	not_ok "bad input: no python3.14 in the root ($root)"
fi

# 5. 3.13's table line is a cross-check of what a file publishes: a copy of sid's 3.13 whose
# _Py_DebugOffsets put co_qualname where co_name is (word 37: the code object's group starts
# at 34, qualname its fourth member) differs from it, which -v says; the file's are taken, so
# the frames are named by co_name (the same for these functions).
if [ -x "$root/usr/bin/python3.13" ]; then
	mkdir -p "$T/q13"
	cp "$root/usr/bin/python3.13" "$T/q13/python3.13"
	patch "$T/q13/python3.13" _PyRuntime 37 0x78 || not_ok "cross-check: cannot patch a copy of python3.13"
	run_py q13 "$T/q13/python3.13" "$T/pw/py_split.py" $RUN_S "$T/q13.ready"
	wait_ready "$T/q13.ready"
	$BPFPROF -v -F 999 -d 2 -p $PID -o "$T/q13.folded" 2> "$T/q13.err"
	rc=$?
	wait $PID
	said=$(grep -c "^bpfprof: Python 3.13 in '.*/q13/python3\.13': its _Py_DebugOffsets differ from bpfprof's table for 3.13; the file's are used" "$T/q13.err")
	named=$(sum_matching "$T/q13.folded" ';main \(py_split\.py:[0-9]+\);(alpha|beta) \(py_split\.py:[0-9]+\);work \(py_split\.py:[0-9]+\)')
	total=$(folded_total "$T/q13.folded")
	check "cross-check: a 3.13 whose _Py_DebugOffsets differ from the table said once at -v ($said), its own taken: $(share "$named" "$total")% of $total samples named through main, alpha or beta, work (>= 90 %)" \
		'[ $rc = 0 ] && [ "$said" = 1 ] && within "$(share "$named" "$total")" 90 100'
fi
