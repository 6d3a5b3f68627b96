# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# PHP frames (issue 36) against bad input: frames whose chain is scribbled
# while they run (tests/workloads/php_scribble.php: a link that maps
# nothing, one into random bytes, one to the frame itself), and PHP
# binaries bpfprof does not read (a copy of Debian's php8.2 whose version
# string says 8.9, and one whose extension API string says a thread-safe
# build). Each: no crash, the native stack kept, the cause counted.
. tests/lib.sh
export HOME=$T

RUN_S=4
RW=tests/workloads
PHP=$(command -v php8.2)

if [ -z "$PHP" ]; then
	not_ok "php: php8.2 not installed (sudo make deps installs php8.2-cli)"
	exit 0
fi

# 1. A scribbled chain: scribble's samples keep their native stack from _start and scribble
# itself, the walk cut at the bad link and counted; clean's frames whole.
start_window scribble $RUN_S "$PHP" $RW/php_scribble.php
profile_window scribble -F 999
read -r sns cns < "$T/scribble.out"
t=$(folded_total "$T/scribble.folded")
s=$(sum_matching "$T/scribble.folded" '^php[^;]*;_start;(.*;)?zend_execute;scribble \(php_scribble\.php:[0-9]+\)$')
c=$(sum_matching "$T/scribble.folded" '^php[^;]*;_start;(.*;)?zend_execute;\{main\} \(php_scribble\.php:[0-9]+\);clean \(php_scribble\.php:[0-9]+\);steps \(php_scribble\.php:[0-9]+\)$')
cut=$(sed -n 's/^bpfprof: php: .*, \([0-9]*\) at an unreadable frame).*/\1/p' "$T/scribble.err")
check "a scribbled chain: $(share "$s" "$t")% of $t samples in scribble, its own CPU share $(share "$sns" $((sns + cns)))% (within 5 points), each on its native stack from _start; ${cut:-no} walks counted cut at an unreadable frame (>= 90 % of scribble's); exit 0" \
	'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$t" -gt 1000 ] &&
	 within "$(share "$s" "$t")" "$(awk -v a="$sns" -v b="$cns" "BEGIN { print 100 * a / (a + b) - 5 }")" "$(awk -v a="$sns" -v b="$cns" "BEGIN { print 100 * a / (a + b) + 5 }")" &&
	 [ "${cut:-0}" -ge $((s * 9 / 10)) ]'
check "a scribbled chain: clean's $c samples whole from _start through {main} ($(share "$c" "$t")% of them all, its CPU share $(share "$cns" $((sns + cns)))%, within 5 points)" \
	'within "$(share "$c" "$t")" "$(awk -v a="$cns" -v b="$sns" "BEGIN { print 100 * a / (a + b) - 5 }")" "$(awk -v a="$cns" -v b="$sns" "BEGIN { print 100 * a / (a + b) + 5 }")"'

# 2. Builds not read: a copy of php8.2 whose X-Powered-By says 8.9, one whose API string says
# a thread-safe build ("API20220829,TS"). One warning naming the cause, the samples counted as
# of a build not read, their native stacks whole from _start through execute_ex.
# (-n: no php.ini, so no extension, which the ZTS copy would refuse to load.)
cat > "$T/plain.php" << 'EOF_PHP'
<?php
function steps($n) { $x = 1; for ($i = 0; $i < $n; $i++) $x = ($x * 31 + 7) & 0xffffff; return $x; }
file_put_contents($argv[2], "");
while (!file_exists($argv[3])) usleep(20000);
$end = hrtime(true) + (int)($argv[1] * 1e9);
while (hrtime(true) < $end) steps(100000);
EOF_PHP
# patched FROM TO FILE: a copy of php8.2 with the bytes FROM made TO (the same length).
patched() {
	python3 - "$PHP" "$3" "$1" "$2" << 'EOF_PY'
import sys
data = open(sys.argv[1], "rb").read()
old, new = sys.argv[3].encode().decode("unicode_escape").encode("latin1"), sys.argv[4].encode().decode("unicode_escape").encode("latin1")
assert len(old) == len(new) and data.count(old) == 1, "the bytes to patch are not there once"
open(sys.argv[2], "wb").write(data.replace(old, new))
EOF_PY
	chmod +x "$3"
}
for build in "version|X-Powered-By: PHP/8.2.|X-Powered-By: PHP/8.9.|a version not in the table" \
	     "zts|API20220829,NTS|API20220829,TS\\x00|a thread-safe .ZTS. build"; do
	IFS='|' read -r name from to why <<< "$build"
	if ! patched "$from" "$to" "$T/php-$name" 2> "$T/$name.patch"; then
		not_ok "a PHP build not read ($name): could not patch php8.2"; diag "$T/$name.patch"
		continue
	fi
	start_window $name $RUN_S "$T/php-$name" -n "$T/plain.php"
	profile_window $name -F 999
	t=$(folded_total "$T/$name.folded")
	native=$(sum_matching "$T/$name.folded" '^php-[a-z]+;_start;(.*;)?zend_execute;execute_ex(;|$)')
	phpf=$(sum_matching "$T/$name.folded" '\(plain\.php:[0-9]+\)')
	unread=$(sed -n 's/^bpfprof: php: .* \([0-9]*\) of a version or build not read;.*/\1/p' "$T/$name.err")
	check "a PHP build not read ($name): one warning ('$(grep -m1 -o "PHP 8\.[0-9] in '[^']*': [^;]*" "$T/$name.err")'), $(share "$native" "$t")% of $t samples native from _start through execute_ex (>= 95 %), $phpf with PHP frames, ${unread:-no} counted as of a build not read; exit 0" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "$t" -gt 1000 ] && [ "$(grep -c "^bpfprof: warning: PHP 8\.[0-9] in .*$T/php-$name.*: $why;" "$T/$name.err")" = 1 ] &&
		 within "$(share "$native" "$t")" 95 100 && [ "$phpf" = 0 ] && [ "${unread:-0}" -ge $((t * 9 / 10)) ]'
done
