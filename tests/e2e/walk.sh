# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The default, --unwind auto: user stacks walked in the BPF program with each
# file's unwind table, frame pointers where code has none. Stacks of code
# built without frame pointers must come out whole: through PLT stubs, C++,
# Debian's Python (built without them), JIT code (frame pointers), vfork
# and clone children, a binary replaced while it runs. e2e/unwind checks
# the rest (-O2 C, qsort, signal handlers, .debug_frame, a storm of short
# processes, deep recursion) for auto and dwarf alike.
. tests/lib.sh

F=4999
SECONDS_RUN=4

share() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.1f", b ? 100 * a / b : 0 }'; }
# top FILE: the heaviest stacks, for a failure's diagnosis.
top() { awk '{print $NF, $0}' "$1" | sort -rn | head -3 | cut -c1-220 | sed 's/^/#   /'; }

# whole NAME FILE PATTERN MIN_SAMPLES: ok when >= 99 % of FILE's samples match PATTERN.
# The floors only say the program ran: a loaded machine gives it a third of F x seconds.
whole() {
	local total full
	total=$(folded_total "$2")
	full=$(sum_matching "$2" "$3")
	if [ "$total" -ge "$4" ] && within "$(share "$full" "$total")" 99 100; then
		ok "$1: $(share "$full" "$total")% of $total samples whole"
	else
		not_ok "$1: $full of $total samples whole (>= 99 % of at least $4 wanted)"
		top "$2"
	fi
}

# profile NAME PID: the process for SECONDS_RUN at F Hz, -v's summary kept.
profile() {
	$BPFPROF -F $F -d $SECONDS_RUN -p "$2" -v -o "$T/$1.folded" 2> "$T/$1.err"
}

START='_start;__libc_start_main;__libc_start_call_main'

# 1. Hot calls through the PLT: a stub's CFA depends on where in it the pc is.
start_workload plt-nofp $((SECONDS_RUN + 2))
profile plt $!
whole "PLT calls (plt-nofp)" "$T/plt.folded" "^plt-nofp;$START;main;plt_loop(;|$)" 3000
# A sample in a stub itself (its CFA moves with the pc) is rare: the stub
# is one jump. Those there are must be whole; the unit test checks the rows.
stub=$(sum_matching "$T/plt.folded" ';strlen@plt$')
stub_whole=$(sum_matching "$T/plt.folded" "^plt-nofp;$START;main;plt_loop;strlen@plt$")
check "samples in the PLT stub itself: $stub_whole of $stub whole to main;plt_loop;strlen@plt" \
	'test "$stub_whole" = "$stub"'

# 2. C++ built -O2 without frame pointers, its functions demangled.
start_workload cxx-nofp $((SECONDS_RUN + 2))
profile cxx $!
whole "C++ -O2 (cxx-nofp)" "$T/cxx.folded" "^cxx-nofp;$START;main;shapes::run_round\\(unsigned long\\);" 3000

# 3. Debian's Python 3.11, built without frame pointers: whole to Py_BytesMain.
if [ -x /usr/bin/python3.11 ]; then
	/usr/bin/python3.11 -c '
import time
def work(n):
    s = 0
    for i in range(n):
        s += i * i
    return s
end = time.time() + '$((SECONDS_RUN + 2))'
while time.time() < end:
    work(10000)' &
	BG_PIDS+=($!)
	sleep 0.3
	profile python $!
	whole "Python 3.11's interpreter" "$T/python.folded" "^python3.11;$START;Py_BytesMain;" 3000
else
	not_ok "/usr/bin/python3.11: not installed (sudo make deps installs python3.11)"
fi

# 4. JIT code: V8's frames have no CFI, frame pointers take them.
if command -v node > /dev/null; then
	node --perf-basic-prof --no-turbo-inlining --no-logfile-per-isolate --logfile="$T/v8.log" \
		tests/workloads/jit.js $((SECONDS_RUN + 3)) > /dev/null &
	BG_PIDS+=($!)
	sleep 1
	profile jit $!
	jit=$(sum_matching "$T/jit.folded" '_\[j\](;|$)')
	jit_whole=$(sum_matching "$T/jit.folded" "^node;$START;node::Start.*_\\[j\\](;|\$)")
	if [ "$jit" -gt 5000 ] && within "$(share "$jit_whole" "$jit")" 99 100; then
		ok "JIT frames: $(share "$jit_whole" "$jit")% of $jit samples with JIT frames whole from _start"
	else
		not_ok "JIT frames: $jit_whole of $jit samples with JIT frames whole"
		top "$T/jit.folded"
	fi
	check "JIT frames: the summary counts walks by CFI and frame pointers both" \
		'grep -Eq "^bpfprof: walked [0-9]+ user stacks in the kernel: [0-9]+ by CFI, [0-9]+ by frame pointers, [1-9][0-9]* both" "$T/jit.err"'
else
	not_ok "node: not installed (sudo make deps installs nodejs)"
fi

# 5. A vfork child (its parent's stack and memory) and a clone child (its
# own stack, outermost frame libc's clone).
start_workload spawn-nofp $((SECONDS_RUN + 2))
parent=$!
sleep 0.3
$BPFPROF -F $F -d $SECONDS_RUN -p "$parent,$(pgrep -P $parent | tr '\n' ',' | sed 's/,$//')" \
	-o "$T/spawn.folded" 2> "$T/spawn.err"
grep ';vfork_work' "$T/spawn.folded" > "$T/vfork.folded"
grep ';clone_work' "$T/spawn.folded" > "$T/clone.folded"
whole "vfork child" "$T/vfork.folded" "^spawn-nofp;$START;main;vfork_work(;|$)" 1500
whole "clone child" "$T/clone.folded" '^spawn-nofp;__clone;clone_work(;|$)' 1500

# 6. A binary replaced while it runs: the running one keeps its own table
# (by its inode), the new one at the same path gets another.
cp "$WL/split-nofp" "$T/prog"
"$T/prog" $((SECONDS_RUN + 3)) > /dev/null &
old=$!
BG_PIDS+=($old)
sleep 0.2
cp "$WL/qsort-nofp" "$T/prog.new" && mv "$T/prog.new" "$T/prog"
"$T/prog" $((SECONDS_RUN + 3)) > /dev/null &
new=$!
BG_PIDS+=($new)
sleep 0.3
$BPFPROF -F $F -d $SECONDS_RUN -p $old,$new --per-pid -o "$T/replaced.folded" 2> "$T/replaced.err"
grep "^prog-$old;" "$T/replaced.folded" > "$T/old.folded"
grep "^prog-$new;" "$T/replaced.folded" > "$T/new.folded"
whole "replaced binary, the one running before" "$T/old.folded" "^prog-$old;$START;main;split_caller;" 1500
whole "replaced binary, the one started after" "$T/new.folded" "^prog-$new;$START;main;sort_(once|twice);" 1500

# 7. What the tables cost, in -v's summary: built, and within 64 MiB of BPF maps.
line=$(grep '^bpfprof: unwind tables:' "$T/plt.err")
mib=$(echo "$line" | sed -n 's/.*BPF maps: \([0-9.]*\) MiB of tables.*/\1/p')
if [ -n "$mib" ] && echo "$line" | grep -Eq ': [1-9][0-9]* files built' && within "$mib" 0.1 64; then
	ok "-v says what the tables cost: ${line#bpfprof: }"
else
	not_ok "-v's tables line: '$line'"
fi
