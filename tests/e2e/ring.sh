# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A runtime's frames survive the ring buffer: with maps so small that most
# samples cannot be counted in them (--max-stacks 2 --stack-storage-size 2),
# a sample goes to userspace whole, and must carry its Python, Lua, Ruby, PHP or
# Java frames as a counted one does (bpf/interp.bpf.h: every path that stores a
# sample copies them through one function). Each runtime's split workload,
# profiled with -p; checked against the summary's own counts. And each
# runtime's walk is loaded once a process of it is seen (runtime_walks.bpf.h):
# its own, and no walk of a runtime no process on the machine ran.
. tests/lib.sh
export HOME=$T

F=1999
SPLIT_S=3
RW=tests/workloads
TINY=(--max-stacks 2 --stack-storage-size 2)

# ring_check NAME WHAT REGEX: of NAME's samples that reached userspace, >= 95 % carry a frame
# matching REGEX, and at least 1,000 went through the ring buffer (the summary's "saved through
# the ring buffer"): a sixth of the run or more, so the frames could not be kept without the
# ring's samples keeping theirs. (The few stacks of a JIT's hot traces may fit the tiny maps:
# some runs count most.) A sample the full ring could not take is counted and shown as
# "[lost: ...]" (the books check that): the reader stalled, a first debug file read from a busy
# disk, is not a frame lost, so those are not in the share.
ring_check() {
	local name=$1 what=$2 re=$3 total lost kept framed saved
	total=$(folded_total "$T/$name.folded")
	lost=$(sum_matching "$T/$name.folded" '^\[lost: ')
	kept=$((${total:-0} - lost))
	framed=$(sum_matching "$T/$name.folded" "$re")
	saved=$(sed -n 's/.* \([0-9]*\) saved through the ring buffer.*/\1/p' "$T/$name.err")
	if [ "$RC" = 0 ] && [ "$kept" -gt 1000 ] && within "$(share "$framed" "$kept")" 95 100; then
		ok "$name: $(share "$framed" "$kept")% of $kept samples carry $what frames (>= 95 %; $lost lost, counted)"
	else
		not_ok "$name: $framed of '$kept' samples carry $what frames (rc $RC; $lost lost, counted)"
		top "$T/$name.folded"; diag "$T/$name.err"
	fi
	check "$name: $saved of $total samples went through the ring buffer (>= 1000)" \
		'[ "${saved:-0}" -ge 1000 ]'
	check "$name: the books balance" "! grep -q 'does not add up' '$T/$name.err'"
}

# runtimes_running: the runtimes whose processes run on the machine now (bpfprof follows
# every process, -p or not, and loads a runtime's walk when it first sees one of them).
runtimes_running() {
	cat /proc/[0-9]*/maps 2> /dev/null | awk '
		/\/(lib)?python3\.[0-9]+/ { p = 1 } /luajit/ { l = 1 } /\/(lib)?ruby/ { r = 1 }
		/\/libjvm\.so/ { j = 1 } /\/php(-fpm)?[0-9.]*$/ { h = 1 }
		END { if (p) print "Python"; if (l) print "Lua"; if (r) print "Ruby"; if (j) print "Java"; if (h) print "PHP" }'
}

# walks_check NAME [WALK]: NAME's run (-v's "the X walk loaded") loaded WALK's walk, and no
# other but of a runtime running on the machine before or after it ($T/NAME.before).
walks_check() {
	local name=$1 want=${2:-} walks w others=""
	walks=$(sed -n 's/^bpfprof: the \(.*\) walk loaded in .*/\1/p' "$T/$name.err")
	runtimes_running >> "$T/$name.before"
	for w in $walks; do
		[ "$w" = "$want" ] || grep -qx "$w" "$T/$name.before" || others+="$w "
	done
	[ -z "$want" ] || check "$name: $want's walk loaded" 'grep -qx "$want" <<< "$walks"'
	check "$name: no walk of a runtime no process ran ('${others% }')" '[ -z "$others" ]'
}
# Python: Debian's python3.11 (py_split.py takes SECONDS and a ready file; it starts at once).
PY=/usr/bin/python3.11
if [ -x $PY ]; then
	$PY $RW/py_split.py $((SPLIT_S + 2)) "$T/py.ready" > "$T/py.out" &
	PID=$!
	BG_PIDS+=($PID)
	while [ ! -e "$T/py.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
	runtimes_running > "$T/py.before"
	$BPFPROF -v -F $F -d $SPLIT_S -p $PID "${TINY[@]}" -o "$T/py.folded" 2> "$T/py.err"
	RC=$?
	ring_check py Python ';(alpha|beta) \(py_split\.py:[0-9]+\)(;|$)'
	walks_check py Python
	wait $PID
else
	not_ok "python: /usr/bin/python3.11 not installed (sudo make deps installs it)"
fi

# LuaJIT, the JIT on and off.
LJ=$(command -v luajit)
if [ -n "$LJ" ]; then
	for mode in on off; do
		flags=()
		[ $mode = off ] && flags=(-joff)
		start_window lua_$mode $SPLIT_S "$LJ" "${flags[@]}" $RW/lua_split.lua
		runtimes_running > "$T/lua_$mode.before"
		profile_window lua_$mode -F $F "${TINY[@]}"
		ring_check lua_$mode "Lua (JIT $mode)" ';(alpha|beta) \(lua_split\.lua:[0-9]+\)(;|$)'
		walks_check lua_$mode Lua
	done
else
	not_ok "luajit: not installed (sudo make deps installs it)"
fi

# Ruby: Debian's CRuby 3.1.
RUBY=$(command -v ruby3.1 || command -v ruby)
if [ -n "$RUBY" ]; then
	start_window rb $SPLIT_S "$RUBY" $RW/rb_split.rb
	runtimes_running > "$T/rb.before"
	profile_window rb -F $F "${TINY[@]}"
	ring_check rb Ruby ';(alpha|beta) \(rb_split\.rb:[0-9]+\)(;|$)'
	walks_check rb Ruby
else
	not_ok "ruby: ruby3.1 not installed (sudo make deps installs it)"
fi

# PHP: Debian's php8.2, opcache's JIT off.
PHP=$(command -v php8.2)
if [ -n "$PHP" ]; then
	start_window php $SPLIT_S "$PHP" $RW/php_split.php
	runtimes_running > "$T/php.before"
	profile_window php -F $F "${TINY[@]}"
	ring_check php PHP ';(alpha|beta) \(php_split\.php:[0-9]+\)(;|$)'
	walks_check php PHP
else
	not_ok "php: php8.2 not installed (sudo make deps installs it)"
fi

# Java: Debian's OpenJDK 17, JavaSplit compiled (its walk hands the native walk back: the
# stack it finished goes whole too).
if command -v javac > /dev/null && javac --release 17 -d "$T/cls" $RW/JavaSplit.java 2> "$T/javac.err"; then
	rm -f "$T/go"
	java -XX:CompileCommand=quiet -XX:CompileCommand=dontinline,JavaSplit::alpha \
		-XX:CompileCommand=dontinline,JavaSplit::beta -cp "$T/cls" JavaSplit --go "$T/go" \
		$SPLIT_S "$T/java.ready" > "$T/java.out" 2> "$T/java.wl" &
	PID=$!
	BG_PIDS+=($PID)
	while [ ! -e "$T/java.ready" ] && kill -0 $PID 2> /dev/null; do sleep 0.05; done
	runtimes_running > "$T/java.before"
	profile_window java -F $F "${TINY[@]}"
	ring_check java Java ' \(JavaSplit\.java:[0-9]+\)(;|$)'
	walks_check java Java
	whole=$(sum_matching "$T/java.folded" '^java;[^;]*;[^;]*;ThreadJavaMain;(.*;)?JavaSplit\.main \(JavaSplit\.java:[0-9]+\);')
	check "java: $(share "$whole" "$(folded_total "$T/java.folded")")% of its samples whole from the thread's start to JavaSplit.main (>= 90 %)" \
		'within "$(share "$whole" "$(folded_total "$T/java.folded")")" 90 100'
else
	not_ok "java: javac not installed, or JavaSplit does not compile (sudo make deps installs openjdk-17-jdk-headless)"
fi

# A C process: no runtime's walk loaded but of runtimes other processes run; its samples counted.
start_workload split 4
runtimes_running > "$T/c.before"
$BPFPROF -v -F 999 -d 1 -p ${BG_PIDS[-1]} -o "$T/c.folded" 2> "$T/c.err"
RC=$?
total=$(folded_total "$T/c.folded")
check "c: $total samples of split (rc $RC)" '[[ $RC = 0 && ${total:-0} -gt 100 ]]'
walks_check c

# A runtime first seen after the start (system-wide, a Python process started once bpfprof
# samples): its walk loaded then, alone, and its samples carry its frames from then on. Its
# comm is its own (a link's name), so its samples are told from other Python processes'.
if [ -x $PY ]; then
	ln -sf $PY "$T/latepy"
	runtimes_running > "$T/late.before"
	$BPFPROF -v -F 999 -d 4 -o "$T/late.folded" 2> "$T/late.err" &
	prof=$!
	wait_attached "$T/late.err" $prof
	"$T/latepy" $RW/py_split.py 2 > "$T/late.out"
	wait $prof
	RC=$?
	total=$(sum_matching "$T/late.folded" '^latepy;')
	framed=$(sum_matching "$T/late.folded" '^latepy;.*;(alpha|beta) \(py_split\.py:[0-9]+\)(;|$)')
	check "late: $framed of $total samples of the late Python process carry its frames (>= 50 %, rc $RC)" \
		'[ "$RC" = 0 ] && [ "${total:-0}" -gt 100 ] && [ $((framed * 2)) -ge "$total" ]'
	if grep -qx Python "$T/late.before"; then
		echo "# late: a Python process ran before the start: its walk was loaded with the program"
	else
		check "late: Python's walk loaded alone, after the perf events were attached" \
			'sed -n "/^bpfprof: timing: attached/,\$p" "$T/late.err" | grep -q "^bpfprof: the Python walk loaded in .* (1 in one load)"'
	fi
fi
