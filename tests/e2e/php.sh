# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# PHP frames, mixed with native ones, for the CLI: Debian's php8.2 and, in
# the Debian root built once per machine (tests/tools/newer_root.sh, run
# chrooted under the host's pids), trixie's php8.4; opcache's JIT off, and
# on in its tracing and function modes. A split of PHP functions as the
# workload's own clock split it, and as Excimer (php-excimer, sampling in
# the same process) split it; PHP calling C (hash, preg_match) and C calling
# PHP back (array_map, preg_replace_callback) from a method; a storm of
# short processes; every output with its reader; --no-php. Each workload
# measures itself over the window profiled (it waits for $T/go, made once
# bpfprof samples; bpfprof -p stops when the workload ends).
#
# A PHP function is "NAME (FILE:FIRSTLINE)", a method "Class::NAME (...)",
# the script's own code "{main} (FILE:1)", an internal function its PHP name,
# above its C code; they replace the VM's execute_ex of each entry into it.
. tests/lib.sh
export HOME=$T

F=4999
SPLIT_S=5
RUN_S=3
PW=tests/workloads
PHP=$(command -v php8.2)
if [ -z "$PHP" ]; then
	not_ok "php: php8.2 not installed (sudo make deps installs it)"
	exit 0
fi
JIT_TRACING=(-d opcache.enable_cli=1 -d opcache.jit_buffer_size=64M -d opcache.jit=tracing)
JIT_FUNCTION=(-d opcache.enable_cli=1 -d opcache.jit_buffer_size=64M -d opcache.jit=function)

# A frame's first line, found by what is written on it.
line_of() { grep -n "$1" "$PW/${2:-php_split.php}" | head -1 | cut -d: -f1; }
LA=$(line_of '^function alpha(')
LB=$(line_of '^function beta(')
FS='php_split\.php'
A="alpha \\($FS:$LA\\)"
B="beta \\($FS:$LB\\)"
# The script's main code, at its first line (docs/runtimes.md).
MAIN="\\{main\\} \\($FS:1\\)"

# split_run NAME COMM PHP...: php_split.php run by PHP... and profiled as NAME; sets name, a and b
# (alpha's and beta's samples), want (the ratio the workload measured), total, framed (of
# them, with PHP frames) and whole (of those, whole from COMM;_start through {main}).
split_run() {
	local comm=$2 wa wb
	name=$1
	shift 2
	start_window "$name" $SPLIT_S "$@" $PW/php_split.php
	profile_window "$name" -F $F
	read -r wa wb < "$T/$name.out"
	a=$(sum_matching "$T/$name.folded" ";$A(;|\$)")
	b=$(sum_matching "$T/$name.folded" ";$B(;|\$)")
	want=$(ratio "$wa" "$wb")
	total=$(folded_total "$T/$name.folded")
	framed=$(sum_matching "$T/$name.folded" "\\($FS(:[0-9]+)?\\)")
	whole=$(sum_matching "$T/$name.folded" "^$comm;_start;(.*;)?php_execute_script(_ex)?;(.*;)?$MAIN;")
	jit=$(sed -n 's/.*; JIT \(.*\)$/\1/p' "$T/$name.wl")
}
# split_checks WHAT WANT_JIT: split_run's figures checked (the JIT as the workload saw it).
split_checks() {
	local what=$1
	if [ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$jit" = "$2" ] && [ "$b" -gt 3000 ] && near_pct "$a" "$b" "$want" 5; then
		ok "$what, JIT $jit: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %)"
	else
		not_ok "$what, JIT ${jit:-?} (want $2): alpha/beta = $(ratio "$a" "$b") ($a / $b samples, rc $RC, workload rc $WL_RC), the workload measured $want"
		top "$T/$name.folded"; diag "$T/$name.err"; diag "$T/$name.wl"
	fi
	check "$what, JIT $jit: $(share "$framed" "$total")% of $total samples carry PHP frames (>= 95 %)" \
		'[ "$total" -gt 0 ] && within "$(share "$framed" "$total")" 95 100'
	check "$what, JIT $jit: $(share "$whole" "$framed")% of them whole from _start through {main} (php_split.php:1) (>= 95 %)" \
		'[ "$framed" -gt 0 ] && within "$(share "$whole" "$framed")" 95 100'
}

# 1. alpha and beta run the same chain, 2n and n times: the split the workload measured;
# every sample with PHP frames, whole. Opcache's JIT off, then on (tracing, function).
split_run split php8.2 "$PHP"
split_checks "php8.2" off
split_total=$total
vm=$(sum_matching "$T/split.folded" "$MAIN;(.*;)?execute_ex(;|\$)")
check "php8.2: no execute_ex left above {main} ($vm samples with one)" '[ "$framed" -gt 1000 ] && [ "$vm" = 0 ]'
check "php8.2: alpha at its first line in every sample of it ($(sum_matching "$T/split.folded" ";alpha \\(") named alpha at all)" \
	'[ "$(sum_matching "$T/split.folded" ";alpha \\(")" = "$a" ] && grep -Eq "^php8\.2;_start;__libc_start_main;(.*;)?php_execute_script;(.*;)?$MAIN;run_split \($FS:[0-9]+\);$A " "$T/split.folded"'
check "php8.2: the summary counts PHP's samples: '$(grep -m1 '^bpfprof: php: [0-9]' "$T/split.err")'" \
	'grep -Eq "^bpfprof: php: [0-9]+ samples of PHP processes, [0-9]+ with their PHP frames" "$T/split.err"'
split_run tracing php8.2 "$PHP" "${JIT_TRACING[@]}"
split_checks "php8.2" "on (tracing)"
split_run function php8.2 "$PHP" "${JIT_FUNCTION[@]}"
split_checks "php8.2" "on (function)"

# 1a. Debian trixie's php8.4 in the newer root, the same three ways.
if root=$(tests/tools/newer_root.sh 2> "$T/root.err"); then
	if [ -x "$root/usr/bin/php8.4" ]; then
		mkdir -p "$T/pw" && cp $PW/php_split.php $PW/php_window.php "$T/pw/"
		PW=$T/pw split_run trixie php8.4 tests/tools/in_root.sh -b "$T" "$root" /usr/bin/php8.4
		split_checks "trixie's php8.4" off
		PW=$T/pw split_run trixie-tracing php8.4 tests/tools/in_root.sh -b "$T" "$root" /usr/bin/php8.4 "${JIT_TRACING[@]}"
		split_checks "trixie's php8.4" "on (tracing)"
		PW=$T/pw split_run trixie-function php8.4 tests/tools/in_root.sh -b "$T" "$root" /usr/bin/php8.4 "${JIT_FUNCTION[@]}"
		split_checks "trixie's php8.4" "on (function)"
		root84=$root
	else
		not_ok "trixie's php8.4: not in the root ($root)"
	fi
else
	ok "trixie's php8.4 # SKIP no Debian root for it: $(tail -1 "$T/root.err")"
fi

# 1b. The same split under Excimer in the same process (CPU time, every ms): alpha's share of
# alpha and beta from both within 5 points. Excimer records an event where the VM next checks
# for an interrupt, often late on a loaded machine (outside both), so its split of the two is
# compared, not their share of all its events. Where Excimer's own split is more
# than 5 points off the workload's clock the comparison says so and is skipped: bpfprof against
# the clock is check 1. The same on trixie's php8.4 with its php-excimer.
close5() { awk -v a="$1" -v b="$2" 'BEGIN { d = a - b; exit !(d <= 5 && d >= -5) }'; }
# excimer_run NAME WHAT PHP...
excimer_run() {
	local name=$1 what=$2 wa wb ea eb en ba bb own exc bp
	shift 2
	start_window $name $SPLIT_S "$@" $PW/php_split.php excimer
	profile_window $name -F $F
	read -r wa wb ea eb en < "$T/$name.out"
	ba=$(sum_matching "$T/$name.folded" ";$A(;|\$)")
	bb=$(sum_matching "$T/$name.folded" ";$B(;|\$)")
	own=$(share "$wa" "$((wa + wb))")
	exc=$(share "${ea:-0}" "$((ea + eb))")
	bp=$(share "$ba" "$((ba + bb))")
	if [ "$WL_RC" = 0 ] && ! close5 "$exc" "$own"; then
		ok "$what excimer # SKIP Excimer's own split, alpha $exc % of alpha and beta in $ea + $eb of its $en events, is off the workload's clock ($own %) by more than 5 points (bpfprof: $bp %)"
	else
		check "$what excimer: alpha $bp % of alpha and beta in bpfprof's $ba + $bb samples, $exc % in Excimer's ${ea:-?} + ${eb:-?} events (within 5 points; the workload's clock $own %)" \
			'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$bb" -gt 3000 ] && [ "${en:-0}" -gt 1000 ] && close5 "$bp" "$exc"'
	fi
}
if "$PHP" -r 'exit(class_exists("ExcimerProfiler") ? 0 : 1);'; then
	excimer_run excimer php8.2 "$PHP"
else
	not_ok "excimer: php8.2 has no ExcimerProfiler (php-excimer: sudo make deps installs it)"
fi
# Trixie's php-excimer, added to the root once (tests/tools/root_add.sh).
if [ -n "${root84:-}" ]; then
	if tests/tools/root_add.sh "$root84" php-excimer 2> "$T/add.err"; then
		PW=$T/pw excimer_run excimer84 "trixie's php8.4" tests/tools/in_root.sh -b "$T" "$root84" /usr/bin/php8.4
	else
		ok "trixie's php8.4 excimer # SKIP php-excimer not added to the root: $(tail -1 "$T/add.err")"
	fi
fi

# 2. PHP calling C: hash('sha256') in digest(), preg_match in match_it(): the samples in their C
# code have the internal function and the PHP function calling it below (PCRE2's JIT on, as by
# default, and off: its code has no CFI to unwind by).
LD=$(line_of '^function digest(')
LM=$(line_of '^function match_it(')
for pj in 0 1; do
	name=native$pj
	start_window $name $RUN_S "$PHP" -d pcre.jit=$pj $PW/php_split.php native
	profile_window $name -F $F
	nt=$(folded_total "$T/$name.folded")
	sha=$(sum_matching "$T/$name.folded" ';[^;]*SHA256[^;]*(;|$)')
	shan=$(sum_matching "$T/$name.folded" ";$MAIN;run_native \\($FS:[0-9]+\\);digest \\($FS:$LD\\);hash;(.*;)?[^;]*SHA256[^;]*(;|\$)")
	check "pcre.jit=$pj: $(share "$shan" "$sha")% of $sha samples in SHA-256 read {main};run_native;digest;hash;..SHA256.. (>= 90 %)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$sha" -gt 1000 ] && within "$(share "$shan" "$sha")" 90 100'
	# The rest is match_it's time but for the PHP around the calls (under 1 %): PCRE2's
	# interpreter, or its JIT's code.
	pm=$(sum_matching "$T/$name.folded" ";$MAIN;run_native \\($FS:[0-9]+\\);match_it \\($FS:$LM\\);preg_match(;|\$)")
	read -r dn mn < "$T/$name.out"
	check "pcre.jit=$pj: $(share "$pm" "$((nt - sha))")% of the $((nt - sha)) samples not in SHA-256 read {main};run_native;match_it;preg_match (>= 90 %; match_it took $(share "$mn" "$((dn + mn))")% of the time by the workload's clock)" \
		'[ "$((nt - sha))" -gt 1000 ] && within "$(share "$pm" "$((nt - sha))")" 90 100'
	# PCRE2's JIT code has no CFI: walked through by its return address into php_pcre_match_impl.
	pmw=$(sum_matching "$T/$name.folded" "^php8\\.2;_start;(.*;)?php_execute_script;(.*;)?$MAIN;run_native \\($FS:[0-9]+\\);match_it \\($FS:$LM\\);preg_match;(.*;)?php_pcre_match_impl(;|\$)")
	check "pcre.jit=$pj: $(share "$pmw" "$pm")% of those whole from _start, through php_pcre_match_impl (>= 95 %)" \
		'[ "$pm" -gt 1000 ] && within "$(share "$pmw" "$pm")" 95 100'
done

# 3. C calling PHP: closures called back from Foo::bar by array_map (Foo's own closure) and
# preg_replace_callback (run_callbacks's), each above its internal function and Foo::bar; their
# split as the workload measured it. 8.2 names them Foo::{closure} and {closure}, 8.4 by their
# place, Foo::{closure:Foo::bar():LINE} and {closure:run_callbacks():LINE}.
LC1=$(line_of 'closure-map')
LC2=$(line_of 'closure-replace')
LF=$(line_of 'public function bar(')
# callbacks_run NAME WHAT CLOSURE1 CLOSURE2 PHP...: the two closures' names as regexes.
callbacks_run() {
	local name=$1 what=$2 n1=$3 n2=$4 mp rp c1 c2 c1n c2n
	shift 4
	start_window $name $RUN_S "$@" $PW/php_split.php callbacks
	profile_window $name -F $F
	read -r mp rp < "$T/$name.out"
	c1=$(sum_matching "$T/$name.folded" "\\{closure[^;]*\\} \\($FS:$LC1\\)(;|\$)")
	c2=$(sum_matching "$T/$name.folded" "\\{closure[^;]*\\} \\($FS:$LC2\\)(;|\$)")
	c1n=$(sum_matching "$T/$name.folded" ";$MAIN;run_callbacks \\($FS:[0-9]+\\);Foo::bar \\($FS:$LF\\);array_map;(.*;)?$n1 \\($FS:$LC1\\)(;|\$)")
	c2n=$(sum_matching "$T/$name.folded" ";$MAIN;run_callbacks \\($FS:[0-9]+\\);Foo::bar \\($FS:$LF\\);preg_replace_callback;(.*;)?$n2 \\($FS:$LC2\\)(;|\$)")
	check "$what callbacks: $(share "$c1n" "$c1")% of $c1 samples in Foo's closure read {main};run_callbacks;Foo::bar;array_map;..;${n1//\\/} (php_split.php:$LC1) (>= 90 %)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$c1" -gt 1000 ] && within "$(share "$c1n" "$c1")" 90 100'
	check "$what callbacks: $(share "$c2n" "$c2")% of $c2 samples in run_callbacks's closure read {main};run_callbacks;Foo::bar;preg_replace_callback;..;${n2//\\/} (php_split.php:$LC2) (>= 90 %)" \
		'[ "$c2" -gt 1000 ] && within "$(share "$c2n" "$c2")" 90 100'
	check "$what callbacks: the two closures $(ratio "$c1" "$c2"), the workload measured $(ratio "$mp" "$rp") (within 5 %)" \
		'near_pct "$c1" "$c2" "$(ratio "$mp" "$rp")" 5'
}
callbacks_run callbacks php8.2 'Foo::\\{closure\\}' '\\{closure\\}' "$PHP"
[ -n "${root84:-}" ] && PW=$T/pw callbacks_run callbacks84 "trixie's php8.4" \
	"Foo::\\{closure:Foo::bar\\(\\):$LC1\\}" "\\{closure:run_callbacks\\(\\):$LC2\\}" \
	tests/tools/in_root.sh -b "$T" "$root84" /usr/bin/php8.4

# 4. Every output with its reader: pprof's Functions in the PHP file, callgrind's fl= (read by
# callgrind_annotate), the SVG's frames.
start_window outputs 2 "$PHP" $PW/php_split.php
profile_window outputs -F 999 -o "$T/split.pb.gz" -o "$T/split.svg" -o "$T/callgrind.out.split"
check "folded: the strict checker reads it ($(folded_total "$T/outputs.folded") samples)" \
	'[ "$RC" = 0 ] && [ -n "$(folded_total "$T/outputs.folded")" ] && [ -n "$(folded_total "$T/split.folded")" ]'
if command -v go > /dev/null; then
	go tool pprof -raw "$T/split.pb.gz" > "$T/raw.txt" 2> "$T/raw.err"
	check "pprof: go tool pprof -raw reads it, alpha's Function in php_split.php from its line $LA" \
		'[ ! -s "$T/raw.err" ] && grep -Eq " alpha (.*/)?tests/workloads/php_split\.php:[0-9]+ s=$LA(\(|\$)" "$T/raw.txt"'
	# Nearly all of alpha's time is its loop's two lines (the for, the chain), none of it on
	# its first line or its measuring.
	loop=$(awk -v a=$LA 'NR > a && /\$x = \(\$x \* 31/ { print NR; exit }' $PW/php_split.php)
	go tool pprof -top -lines -unit=ms -nodefraction=0 -nodecount=1000000 "$T/split.pb.gz" 2> "$T/lines.err" |
		awk -v f="php_split.php:" -v a=$((loop - 1)) -v b=$loop '
			$(NF-1) == "alpha" && index($NF, f) { l = substr($NF, index($NF, f) + length(f)); all += $1
				if (l == a || l == b) in_loop += $1 }
			END { printf "%.1f %.0f\n", all ? 100 * in_loop / all : 0, all }' > "$T/loop"
	read -r in_loop alpha_ms < "$T/loop"
	check "pprof: go tool pprof -lines puts $in_loop% of alpha's $alpha_ms ms at its loop's lines $((loop - 1)) and $loop (>= 90 %)" \
		'[ ! -s "$T/lines.err" ] && [ "${alpha_ms:-0}" -gt 500 ] && within "$in_loop" 90 100'
else
	not_ok "pprof: no go tool to read it (golang-go: sudo make deps installs it)"
fi
check "callgrind: fl= names the PHP file" 'grep -Eq "^c?fl=\([0-9]+\) (.*/)?tests/workloads/php_split\.php\$" "$T/callgrind.out.split"'
callgrind_annotate "$T/callgrind.out.split" > "$T/annotate.txt" 2> "$T/annotate.err"
check "callgrind: callgrind_annotate reads it: alpha's samples in php_split.php" \
	'grep -q "php_split\.php:alpha (php_split\.php:$LA)" "$T/annotate.txt"'
check "svg: alpha's frame with its name and line" 'grep -q "<title>alpha (php_split\.php:$LA) " "$T/split.svg"'

# 5. A storm of 250 ms php processes, start-up included: named.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-php-$$
mkdir "$CGROUP_DIR"
(echo $BASHPID > "$CGROUP_DIR/cgroup.procs"; wait_go
 for i in $(seq 8); do "$PHP" $PW/php_short.php & "$PHP" $PW/php_short.php; wait; done) &
storm=$!
$BPFPROF -v -F 999 --cgroup "$CGROUP_DIR" -o "$T/storm.folded" 2> "$T/storm.err" &
prof=$!
wait_attached "$T/storm.err" $prof
touch "$T/go"
wait $storm
kill -INT $prof
wait $prof
rm -f "$T/go"
LS=$(line_of '^function short_fn(' php_short.php)
st=$(sum_matching "$T/storm.folded" '^php8\.2;')
sn=$(sum_matching "$T/storm.folded" "^php8\\.2;_start;(.*;)?\\{main\\} \\(php_short\\.php:1\\);short_fn \\(php_short\\.php:$LS\\)(;|\$)")
check "storm of 16 php processes of 250 ms: $(share "$sn" "$st")% of their $st samples name {main};short_fn, whole from _start (>= 80 %)" \
	'[ "$st" -gt 1000 ] && within "$(share "$sn" "$st")" 80 100'
rmdir "$CGROUP_DIR" 2> /dev/null

# 6. --no-php: native frames only, execute_ex where the PHP frames were.
start_window nophp 2 "$PHP" $PW/php_split.php
profile_window nophp -F 999 --no-php
check "--no-php: no PHP frame ($(sum_matching "$T/nophp.folded" "\\($FS(:[0-9]+)?\\)|;alpha|;beta|\\{main\\}") samples with one), execute_ex in $(share "$(sum_matching "$T/nophp.folded" ";execute_ex(;|\$)")" "$(folded_total "$T/nophp.folded")")% of $(folded_total "$T/nophp.folded")" \
	'[ "$RC" = 0 ] && [ "$(folded_total "$T/nophp.folded")" -gt 500 ] && [ "$(sum_matching "$T/nophp.folded" "\\($FS(:[0-9]+)?\\)|;alpha|;beta|\\{main\\}")" = 0 ] && within "$(share "$(sum_matching "$T/nophp.folded" ";execute_ex(;|\$)")" "$(folded_total "$T/nophp.folded")")" 90 100'
