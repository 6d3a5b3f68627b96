# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# make install: the binary, the man page and a systemd unit (not enabled)
# that systemd-analyze verifies, hardened as it rates; and the unit's
# capabilities are all bpfprof needs: run under exactly its bounding set,
# with no new privileges, it serves a profile with native, kernel and
# Python frames named.
. tests/lib.sh
export HOME=$T	# go's cache

make -s install DESTDIR="$T/root" O="$O" > "$T/install.out" 2>&1
rc=$?
unit=$T/root/usr/local/lib/systemd/system/bpfprof.service
check "make install DESTDIR=...: exit $rc, the binary, the man page, the unit" \
	'[ $rc = 0 ] && [ -x "$T/root/usr/local/bin/bpfprof" ] && [ -s "$T/root/usr/local/share/man/man8/bpfprof.8" ] && [ -s "$unit" ]'
check "the unit runs the installed binary, on the loopback address" \
	'grep -q "^ExecStart=/usr/local/bin/bpfprof --listen 127.0.0.1:6060 " "$unit"'
check "nothing enabled: no WantedBy link made" \
	'! find "$T/root" -name "*.wants" | grep -q .'
# verify wants the binary where ExecStart says: the same unit, pointing at the build.
sed "s|/usr/local/bin/bpfprof|$PWD/$BPFPROF|" "$unit" > "$T/bpfprof.service"
MANPATH=$T/root/usr/local/share/man systemd-analyze verify "$T/bpfprof.service" > "$T/verify" 2>&1
rc=$?
check "systemd-analyze verify: exit $rc, no complaint" '[[ $rc = 0 && ! -s "$T/verify" ]]'
diag "$T/verify"
level=$(systemd-analyze security --offline=true "$T/bpfprof.service" 2> /dev/null |
	sed -n 's/.*Overall exposure level for bpfprof.service: \([0-9.]*\) .*/\1/p')
check "systemd-analyze security rates its exposure $level (OK is below 5; a root BPF agent cannot go far below 3)" \
	'within "${level:-10}" 0 4'

# The unit's capabilities, and no others, are enough.
caps=$(sed -n 's/^CapabilityBoundingSet=//p' "$unit" | tr 'A-Z' 'a-z' | sed 's/cap_/+/g; s/ /,/g')
python3 tests/workloads/py_split.py 20 > /dev/null &
py=$!
BG_PIDS+=($py)
start_workload split 20
sleep 0.5
setpriv --no-new-privs --bounding-set="-all,$caps" \
	"$T/root/usr/local/bin/bpfprof" -v -F 199 --listen 127.0.0.1:0 -d 8 2> "$T/caps.err" &
prof=$!
wait_attached "$T/caps.err" $prof
url=$(sed -n 's|^bpfprof: serving on \(http://[^ ]*\)/ .*|\1|p' "$T/caps.err")
code=$(curl -s -o "$T/caps.pb.gz" -w '%{http_code}' "$url/debug/pprof/profile?seconds=2")
go tool pprof -traces "$T/caps.pb.gz" > "$T/caps.txt" 2> /dev/null
kill -TERM $prof 2> /dev/null
wait $prof
check "with only $caps and no new privileges: a profile served ($code), split's frames named" \
	'[ "$code" = 200 ] && grep -q "split_two_thirds" "$T/caps.txt"'
check "... kernel frames named (/proc/kallsyms' addresses)" 'grep -Eq "entry_SYSCALL_64|asm_sysvec|do_syscall_64|__schedule" "$T/caps.txt"'
check "... Python's frames read from the process (alpha, beta of py_split.py)" \
	'grep -Eqw "(alpha|beta)" "$T/caps.txt"'
