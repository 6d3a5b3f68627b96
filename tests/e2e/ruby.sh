# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Ruby frames (issue 25), mixed with native ones, for Debian's CRuby 3.1
# (ruby3.1, libruby-3.1.so stripped): a split of Ruby methods as the
# workload's own clock split it; two threads each in a method of its own
# and a third digesting with OpenSSL; rdoc over part of the standard
# library; a storm of short `ruby -e` processes. Each workload measures
# itself over the window profiled (it waits for $T/go, made once bpfprof
# samples; bpfprof -p stops when the workload ends).
#
# A Ruby frame is "LABEL (FILE:FIRSTLINE)", a C method its name; they
# replace the VM's native vm_exec_core frame of each entry into the VM.
. tests/lib.sh
export HOME=$T

F=4999
RUN_S=4
SPLIT_S=6
RW=tests/workloads
RUBY=$(command -v ruby3.1 || command -v ruby)

if [ -z "$RUBY" ]; then
	not_ok "ruby: ruby3.1 not installed (sudo make deps installs it)"
	exit 0
fi

FR='\(rb_split\.rb:[0-9]+\)'

# split_run NAME RUBY...: rb_split.rb run and profiled as NAME; sets a and b (alpha's and
# beta's samples), want (the ratio the workload measured), total and whole (of them, whole
# from _start through <main>).
split_run() {
	local name=$1 wa wb
	shift
	start_window "$name" $SPLIT_S "$@" $RW/rb_split.rb
	profile_window "$name" -F $F
	read -r wa wb < "$T/$name.out"
	a=$(sum_matching "$T/$name.folded" ";alpha $FR(;|\$)")
	b=$(sum_matching "$T/$name.folded" ";beta $FR(;|\$)")
	want=$(ratio "$wa" "$wb")
	total=$(folded_total "$T/$name.folded")
	whole=$(sum_matching "$T/$name.folded" "^[^;]*;_start;(.*;)?ruby_run_node;(.*;)?<main> $FR;")
}

# 1. alpha and beta: the split the workload measured; every sample with Ruby frames, whole.
split_run split "$RUBY"
if [ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5; then
	ok "rb_split: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %)"
else
	not_ok "rb_split: alpha/beta = $(ratio "$a" "$b") ($a / $b samples, rc $RC, workload rc $WL_RC), the workload measured $want"
	top "$T/split.folded"; diag "$T/split.err"; diag "$T/split.wl"
fi
ruby=$(sum_matching "$T/split.folded" "$FR")
split_total=$total
check "rb_split: $(share "$ruby" "$total")% of $total samples carry Ruby frames (>= 95 %)" \
	'[ "$total" -gt 0 ] && within "$(share "$ruby" "$total")" 95 100'
check "rb_split: $(share "$whole" "$ruby")% of them whole from _start through <main> (>= 95 %)" \
	'[ "$ruby" -gt 0 ] && within "$(share "$whole" "$ruby")" 95 100'
vm=$(sum_matching "$T/split.folded" "$FR;(.*;)?\\[libruby[^;]*\\];(.*;)?(alpha|beta|work) $FR")
check "rb_split: no native VM frame between Ruby frames ($vm samples with one)" '[ "$vm" = 0 ]'
check "rb_split: the summary counts Ruby's samples: '$(grep -m1 '^bpfprof: ruby: [0-9]' "$T/split.err")'" \
	'grep -Eq "^bpfprof: ruby: [0-9]+ samples of Ruby processes, [0-9]+ with their Ruby frames" "$T/split.err"'

# 1a. Other Rubies of a version with a row in the table (RUBY_EXTRA="path/to/ruby ...", say a
# 3.3 built from its release with --enable-shared): the same split, with class names.
for other in ${RUBY_EXTRA:-}; do
	v=$("$other" -e 'print RUBY_VERSION' 2> /dev/null)
	split_run other "$other"
	check "Ruby ${v:-?} ($other): alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %)" \
		'[ "$RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5 && grep -q "Process.clock_gettime" "$T/other.folded"'
done

# 1d. Debian trixie's ruby3.3 in a Debian root of its own (tests/tools/newer_root.sh, run
# chrooted under the host's pids): its libruby is stripped and hides ruby_current_ec,
# rb_vm_exec and ruby_current_vm_ptr, read from the code of functions it exports. The same
# split, whole from _start through <main>.
if root=$(tests/tools/newer_root.sh 2> "$T/root.err"); then
	if [ -x "$root/usr/bin/ruby3.3" ]; then
		mkdir -p "$T/rw" && cp $RW/rb_split.rb $RW/rb_window.rb "$T/rw/"
		RW=$T/rw split_run trixie tests/tools/in_root.sh -b "$T" "$root" /usr/bin/ruby3.3
		check "trixie's ruby3.3 (stripped libruby): alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %); $(share "$whole" "$total")% of $total samples whole from _start through <main> (>= 95 %)" \
			'[ "$RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5 && within "$(share "$whole" "$total")" 95 100 && grep -q "^bpfprof: ruby: 1 VM files (0 not read)" "$T/trixie.err"'
	else
		not_ok "trixie's ruby3.3: not in the root ($root)"
	fi
else
	ok "trixie's ruby3.3 # SKIP no Debian root for it: $(tail -1 "$T/root.err")"
fi

# 1e. Ruby 3.3 built static (tests/tools/static_ruby.sh, once per machine: Debian's source,
# --disable-shared as ruby-build builds it): the VM in the ruby executable, ruby_current_ec the
# executable's own thread-local (at a fixed offset from the thread pointer). The split, whole
# from _start through <main>; a C method (OpenSSL's digest) under its Ruby caller.
if sruby=$(tests/tools/static_ruby.sh 2> "$T/static_ruby.err"); then
	split_run static "$sruby"
	check "static Ruby 3.3 ($sruby): alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %); $(share "$whole" "$total")% of $total samples whole from _start through <main> (>= 95 %)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5 && within "$(share "$whole" "$total")" 95 100 && grep -q "^bpfprof: ruby: 1 VM files (0 not read)" "$T/static.err"'
	start_window sthreads $RUN_S "$sruby" $RW/rb_threads.rb
	profile_window sthreads -F $F
	d=$(sum_matching "$T/sthreads.folded" ';digest_it \(rb_threads\.rb:[0-9]+\)(;|$)')
	# (its symbols name rb_funcallv's body, rb_funcallv_scope, which Debian's stripped libruby does not)
	named=$(sum_matching "$T/sthreads.folded" ';digest_it \(rb_threads\.rb:[0-9]+\);Digest::Instance#digest;(.*;)?rb_funcallv(_scope)?;(.*;)?OpenSSL::Digest#update;ossl_digest_update;')
	check "static Ruby 3.3: $(share "$named" "$d")% of digest_it's $d samples show Digest::Instance#digest;..rb_funcallv_scope..;OpenSSL::Digest#update;ossl_digest_update (>= 90 %)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$d" -gt 500 ] && within "$(share "$named" "$d")" 90 100'
else
	ok "static Ruby 3.3 # SKIP not built: $(tail -1 "$T/static_ruby.err")"
fi

# 1f. libruby-3.1 embedded in a C program (rb_host.c: ruby_init, ruby_options, ruby_run_node
# from a function of its own): not named ruby; the split, and the host's main and host_run
# below the Ruby frames.
if [ -x "$WL/rb_host" ]; then
	split_run host "$WL/rb_host"
	hosted=$(sum_matching "$T/host.folded" "^rb_host;_start;(.*;)?main;host_run;ruby_run_node;(.*;)?<main> $FR;")
	check "libruby in a C host: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %); $(share "$hosted" "$total")% of $total samples read rb_host;_start;..main;host_run;ruby_run_node;..<main> (>= 95 %)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5 && within "$(share "$hosted" "$total")" 95 100'
else
	not_ok "libruby in a C host: $WL/rb_host not built (ruby3.1-dev's headers missing: sudo make deps installs them)"
fi

# 1c. YJIT (ruby --yjit): its code has no CFI; the walk goes on at the rb_vm_exec that ran it
# (from the tag that rb_vm_exec pushed), so samples in it keep their Ruby frames and their
# native callers, and the split holds.
if "$RUBY" --yjit -e 'exit(RubyVM::YJIT.enabled? ? 0 : 1)' 2> /dev/null; then
	split_run yjit "$RUBY" --yjit
	check "YJIT: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %); $(share "$whole" "$total")% of $total samples whole from _start through <main> (>= 95 %)" \
		'[ "$RC" = 0 ] && [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5 && within "$(share "$whole" "$total")" 95 100'
else
	not_ok "YJIT: $RUBY --yjit has no YJIT"
fi

# 1b. The same split under stackprof (Ruby's own sampling profiler) in the same process:
# each method's share of the samples from both, within 5 points. stackprof's SIGPROF
# (ITIMER_PROF) fires only at a scheduler tick (HZ) that finds the process running: some 250
# samples a CPU second at best, fewer under load, and then its split drifts from the
# workload's own clock (alpha 74-77 % against the clock's 65-66 % with three busy loops on two
# CPUs, 900-1,000 samples in 6 s; bpfprof 65.2-65.9 %). Where stackprof is more than 5 points off
# the clock the comparison says so and is skipped: bpfprof against the clock is check 1.
start_window stackprof $SPLIT_S "$RUBY" $RW/rb_stackprof.rb
profile_window stackprof -F $F
read -r spa spb owa owb < "$T/stackprof.out"
st_total=$(folded_total "$T/stackprof.folded")
bpa=$(share "$(sum_matching "$T/stackprof.folded" ";alpha $FR(;|\$)")" "$st_total")
bpb=$(share "$(sum_matching "$T/stackprof.folded" ";beta $FR(;|\$)")" "$st_total")
close5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 5 && d >= -5) }'; }
sp_n=$(sed -n 's/^rb_stackprof: \([0-9]*\) samples.*/\1/p' "$T/stackprof.wl")
if [ -n "$owb" ] && ! { close5 "$spa" "$owa" && close5 "$spb" "$owb"; }; then
	ok "stackprof # SKIP stackprof's own split, alpha $spa % and beta $spb % of $sp_n samples, is off the workload's clock ($owa % and $owb %) by more than 5 points (bpfprof: $bpa % and $bpb %)"
else
	check "stackprof: alpha $bpa % and beta $bpb % of $st_total samples in bpfprof, ${spa:-?} % and ${spb:-?} % of ${sp_n:-?} samples in stackprof (within 5 points; the workload's clock ${owa:-?} % and ${owb:-?} %)" \
		'[ "$RC" = 0 ] && [ "$st_total" -gt 10000 ] && [ -n "$owb" ] && close5 "$bpa" "$spa" && close5 "$bpb" "$spb"'
fi

# pprof: the Ruby file in Functions, the line in Lines.
start_window pprof 3 "$RUBY" $RW/rb_split.rb
profile_window pprof -F 999 -o "$T/split.pb.gz" -o "$T/split.svg" -o "$T/callgrind.out.split"
if command -v go > /dev/null; then
	go tool pprof -raw "$T/split.pb.gz" > "$T/raw.txt" 2> "$T/raw.err"
	check "pprof: go tool pprof -raw reads it, work's Function in rb_split.rb" \
		'[ ! -s "$T/raw.err" ] && grep -Eq " work (.*/)?tests/workloads/rb_split\.rb:[0-9]+ " "$T/raw.txt"'
fi

# callgrind: fl= the Ruby file, and callgrind_annotate reads it.
check "callgrind: fl= names the Ruby file" 'grep -Eq "^c?fl=\([0-9]+\) (.*/)?tests/workloads/rb_split\.rb\$" "$T/callgrind.out.split"'
callgrind_annotate "$T/callgrind.out.split" > "$T/annotate.txt" 2> "$T/annotate.err"
check "callgrind: callgrind_annotate reads it: work's samples in rb_split.rb" \
	'grep -q "rb_split\.rb:work (rb_split\.rb:[0-9]*)" "$T/annotate.txt"'

# SVG: Ruby's frames (methods and C methods) in a colour family of their own, rose (red high,
# blue from 140), which no native frame's warm colour (blue under 56) is in.
# svg_fills SVG CLASS: "R B" (decimal red and blue) of each frame of that class.
svg_fills() {
	grep -o "class=\"$2\"><title>[^<]*</title><rect [^>]*fill=\"#[0-9a-f]*\"" "$1" | sed 's/.*fill="#//' |
		awk 'function hex(s) { return 16 * (index("0123456789abcdef", substr(s, 1, 1)) - 1) + index("0123456789abcdef", substr(s, 2, 1)) - 1 }
		     { print hex(substr($0, 1, 2)), hex(substr($0, 5, 2)) }'
}
rose=$(svg_fills "$T/split.svg" ruby | awk '$1 >= 215 && $2 >= 140 { n++ } END { print n + 0 }')
rall=$(svg_fills "$T/split.svg" ruby | wc -l)
warm=$(svg_fills "$T/split.svg" user | awk '$2 >= 140 { n++ } END { print n + 0 }')
check "svg: $rose of $rall Ruby frames rose, $warm native frames of that blue; alpha's among them" \
	'[ "$rall" -gt 3 ] && [ "$rose" = "$rall" ] && [ "$warm" = 0 ] && grep -q "class=\"ruby\"><title>alpha (rb_split.rb:" "$T/split.svg"'

# 2. Threads: each in its own method, named; OpenSSL's SHA-256 above digest_it.
start_window threads $RUN_S "$RUBY" $RW/rb_threads.rb
profile_window threads -F $F
l=$(sum_matching "$T/threads.folded" ';spin_left \(rb_threads\.rb:[0-9]+\)(;|$)')
r=$(sum_matching "$T/threads.folded" ';spin_right \(rb_threads\.rb:[0-9]+\)(;|$)')
d=$(sum_matching "$T/threads.folded" ';digest_it \(rb_threads\.rb:[0-9]+\)(;|$)')
dsha=$(sum_matching "$T/threads.folded" ';digest_it \(rb_threads\.rb:[0-9]+\);(.*;)?[^;]*(sha256|SHA256)[^;]*(;|$)')
check "threads: spin_left $l, spin_right $r samples, each in its own thread's stack" \
	'[ "$RC" = 0 ] && [ "$l" -gt 500 ] && [ "$r" -gt 500 ]'
check "threads: $(share "$dsha" "$d")% of $d samples in digest_it show OpenSSL's SHA-256 above it (>= 90 %)" \
	'[ "$d" -gt 500 ] && within "$(share "$dsha" "$d")" 90 100'
# Digest::Instance#digest calls OpenSSL::Digest#update through rb_funcallv: each C method at
# its own C function, the second above the first's rb_funcallv.
named=$(sum_matching "$T/threads.folded" ';digest_it \(rb_threads\.rb:[0-9]+\);Digest::Instance#digest;(.*;)?rb_funcallv;(.*;)?OpenSSL::Digest#update;ossl_digest_update;')
check "threads: C methods named with their class, each at its C function: $(share "$named" "$d")% of digest_it's samples show Digest::Instance#digest;..rb_funcallv..;OpenSSL::Digest#update;ossl_digest_update (>= 90 %)" \
	'[ "$d" -gt 500 ] && within "$(share "$named" "$d")" 90 100'

# 2a. A C extension calling back into Ruby (rb_ext.c): each C method stands at its own C
# function, Ruby's C (rb_yield, rb_funcall) above it, the Ruby it called above that; the
# three methods' samples split as the workload's clock split them.
if [ -e "$WL/rb_ext.so" ]; then
	start_window ext $RUN_S "$RUBY" -I "$WL" $RW/rb_ext.rb
	profile_window ext -F $F
	read -r ey ec en < "$T/ext.out"
	FE='\(rb_ext\.rb:[0-9]+\)'
	FW='\(rb_window\.rb:[0-9]+\)'
	yall=$(sum_matching "$T/ext.folded" ";by_yield $FE;")
	call=$(sum_matching "$T/ext.folded" ";by_call $FE;")
	nall=$(sum_matching "$T/ext.folded" ";in_c $FE;")
	ys=$(sum_matching "$T/ext.folded" ";by_yield $FE;RbExt\.each_step;ext_each_step;(.*;)?rb_yield;(.*;)?block in by_yield $FE;chain $FW(;|\$)")
	cs=$(sum_matching "$T/ext.folded" ";by_call $FE;RbExt\.call_each;ext_call_each;(.*;)?rb_funcallv?;(.*;)?step $FE;chain $FW(;|\$)")
	ns=$(sum_matching "$T/ext.folded" ";in_c $FE;RbExt\.c_chain;ext_c_chain\$")
	check "C extension: $(share "$ys" "$yall")% of by_yield's $yall samples read by_yield;RbExt.each_step;ext_each_step;..rb_yield..;block in by_yield;chain (>= 90 %)" \
		'[ "$RC" = 0 ] && [ "$yall" -gt 500 ] && within "$(share "$ys" "$yall")" 90 100'
	check "C extension: $(share "$cs" "$call")% of by_call's $call samples read by_call;RbExt.call_each;ext_call_each;..rb_funcallv..;step;chain (>= 90 %)" \
		'[ "$call" -gt 500 ] && within "$(share "$cs" "$call")" 90 100'
	check "C extension: $(share "$ns" "$nall")% of in_c's $nall samples read in_c;RbExt.c_chain;ext_c_chain (>= 90 %)" \
		'[ "$nall" -gt 500 ] && within "$(share "$ns" "$nall")" 90 100'
	check "C extension: by_yield/in_c = $(ratio "$yall" "$nall"), by_call/in_c = $(ratio "$call" "$nall"); the workload measured $(ratio "$ey" "$en") and $(ratio "$ec" "$en") (within 5 %)" \
		'[ "$WL_RC" = 0 ] && near_pct "$yall" "$nall" "$(ratio "$ey" "$en")" 5 && near_pct "$call" "$nall" "$(ratio "$ec" "$en")" 5'
else
	not_ok "C extension: $WL/rb_ext.so not built (ruby3.1-dev's headers missing: sudo make deps installs them)"
fi

# 2b. Garbage collection: "[ruby: gc]" on the samples the program found collecting (the
# summary's count, the same run), over the allocating method; next to none in rb_split.
start_window alloc $RUN_S "$RUBY" $RW/rb_alloc.rb
profile_window alloc -F $F
gc_frames=$(sum_matching "$T/alloc.folded" ';alloc \(rb_alloc\.rb:[0-9]+\);(.*;)?\[ruby: gc\](;|$)')
gc_counted=$(sed -n 's/.* \([0-9]*\) collecting garbage;.*/\1/p' "$T/alloc.err")
at=$(folded_total "$T/alloc.folded")
check "gc: $gc_frames samples with [ruby: gc] under alloc, the program counted ${gc_counted:-none} collecting (within 2 %; $(share "$gc_frames" "$at")% of $at)" \
	'[ "$RC" = 0 ] && [ "${gc_counted:-0}" -gt 50 ] && near_pct "$gc_frames" "$gc_counted" 1 2'
split_gc=$(sum_matching "$T/split.folded" '\[ruby: gc\]')
check "gc: rb_split, which makes no garbage in its loop: $split_gc samples with [ruby: gc] of $split_total (< 1 %)" \
	'within "$(share "$split_gc" "$split_total")" 0 1'

# 3. rdoc over part of the standard library: most of its samples with Ruby frames.
mkdir -p "$T/rdoc"
(cd "$T/rdoc" && exec rdoc3.1 --quiet --op "$T/rdoc/out" /usr/lib/ruby/3.1.0/net /usr/lib/ruby/3.1.0/rdoc > /dev/null 2>&1) &
rd=$!
BG_PIDS+=($rd)
sleep 0.3
$BPFPROF -F 999 -d 4 -p $rd -o "$T/rdoc.folded" 2> "$T/rdoc.err"
rt=$(folded_total "$T/rdoc.folded")
rr=$(sum_matching "$T/rdoc.folded" '\([^;()]+\.rb:[0-9]+\)')
check "rdoc: $(share "$rr" "$rt")% of $rt samples carry Ruby frames (>= 90 %)" \
	'[ "$rt" -gt 500 ] && within "$(share "$rr" "$rt")" 90 100'
kill $rd 2> /dev/null

# 4. A storm of 250 ms `ruby -e` processes, start-up included: named.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-ruby-$$
mkdir "$CGROUP_DIR"
(echo $BASHPID > "$CGROUP_DIR/cgroup.procs"; while [ ! -e "$T/go" ]; do sleep 0.05; done
 for i in $(seq 8); do "$RUBY" -e 'def short_fn; t = Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID); x = 1; x = (x * 31 + 7) & 0xffffff while Process.clock_gettime(Process::CLOCK_THREAD_CPUTIME_ID) - t < 0.25; end; short_fn'; done) &
storm=$!
$BPFPROF -v -F 999 --cgroup "$CGROUP_DIR" -o "$T/storm.folded" 2> "$T/storm.err" &
prof=$!
wait_attached "$T/storm.err" $prof
touch "$T/go"
wait $storm
kill -INT $prof
wait $prof
rm -f "$T/go"
st=$(folded_total "$T/storm.folded")
sn=$(sum_matching "$T/storm.folded" ';short_fn \(-e:[0-9]+\)(;|$)')
check "storm of 8 ruby -e processes of 250 ms: $(share "$sn" "$st")% of $st samples name short_fn (>= 60 %)" \
	'[ "$st" -gt 500 ] && within "$(share "$sn" "$st")" 60 100'
rmdir "$CGROUP_DIR" 2> /dev/null

# 6. Bad input. A libruby bpfprof cannot read (a copy whose .eh_frame_hdr is spoilt, so
# vm_exec_core's bounds are not found): one warning, its samples counted and whole in native
# frames. A method whose iseq points at nothing for its label and path: its frame counted as
# not readable, the rest named. Stacks that change all the time (fibers, eval'd methods freed,
# throw, GC.compact): every sample kept, what could not be read counted.
LIB=$(ldd "$RUBY" | awk '/libruby/ { print $3 }')
mkdir -p "$T/badlib"
cp "$LIB" "$T/badlib/"
hdr=$(readelf -SW "$LIB" | awk '$2 == ".eh_frame_hdr" { print $5 }')
printf '\x7f' | dd of="$T/badlib/$(basename "$LIB")" bs=1 seek=$((0x${hdr:-0})) conv=notrunc status=none
LD_LIBRARY_PATH=$T/badlib start_window badlib 2 "$RUBY" $RW/rb_split.rb
profile_window badlib -F 999
bt=$(folded_total "$T/badlib.folded")
bw=$(sum_matching "$T/badlib.folded" "^[^;]*;_start;(.*;)?ruby_run_node;(.*;)?rb_vm_exec(;|\$)")
unread=$(sed -n 's/^bpfprof: ruby: .* \([0-9]*\) of a version or build not read;.*/\1/p' "$T/badlib.err")
check "a libruby not read: $(grep -c 'warning: Ruby 3.1 in .*cannot read' "$T/badlib.err") warning, ${unread:-no} samples counted as not read, $(share "$bw" "$bt")% of $bt whole in native frames (>= 90 %), no Ruby frame, exit 0" \
	'[ "$RC" = 0 ] && [ -n "$hdr" ] && [ "$(grep -c "warning: Ruby 3.1 in .*cannot read" "$T/badlib.err")" = 1 ] && [ "${unread:-0}" -gt 500 ] && within "$(share "$bw" "$bt")" 90 100 && [ "$(sum_matching "$T/badlib.folded" "$FR")" = 0 ]'

start_window corrupt $RUN_S "$RUBY" $RW/rb_corrupt.rb
profile_window corrupt -F 999
ct=$(folded_total "$T/corrupt.folded")
cv=$(sum_matching "$T/corrupt.folded" ';<main> \(rb_corrupt\.rb:[0-9]+\);\[ruby: iseq not read\](;|$)')
cbad=$(sed -n 's/^bpfprof: ruby: .* named, \([0-9]*\) and [0-9]* not readable/\1/p' "$T/corrupt.err")
check "a corrupted iseq: $(share "$cv" "$ct")% of $ct samples read <main>;[ruby: iseq not read] (>= 90 %), ${cbad:-no} iseq counted not readable, exit 0" \
	'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$ct" -gt 500 ] && within "$(share "$cv" "$ct")" 90 100 && [ "${cbad:-0}" -ge 1 ]'

start_window churn $RUN_S "$RUBY" $RW/rb_churn.rb
profile_window churn -F $F
cht=$(folded_total "$T/churn.folded")
chr=$(sum_matching "$T/churn.folded" '\(rb_churn\.rb:[0-9]+\)')
chf=$(sum_matching "$T/churn.folded" ';block in ping_pong \(rb_churn\.rb:[0-9]+\);Kernel#loop;(.*;)?chain \(rb_window\.rb:[0-9]+\)')
check "changing stacks: $(share "$chr" "$cht")% of $cht samples with Ruby frames (>= 95 %), $chf in the fiber's own stack; '$(grep -o '[0-9]* iseqs and .* not readable' "$T/churn.err")', exit 0" \
	'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$cht" -gt 5000 ] && within "$(share "$chr" "$cht")" 95 100 && [ "$chf" -gt 100 ]'

# 5. --no-ruby: native frames only.
start_window noruby 2 "$RUBY" $RW/rb_split.rb
profile_window noruby -F 999 --no-ruby
check "--no-ruby: no Ruby frame ($(sum_matching "$T/noruby.folded" "$FR") samples with one)" \
	'[ "$RC" = 0 ] && [ "$(folded_total "$T/noruby.folded")" -gt 500 ] && [ "$(sum_matching "$T/noruby.folded" "$FR")" = 0 ]'
