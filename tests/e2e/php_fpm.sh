# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# PHP frames in real programs: Debian's php-fpm8.2 behind nginx under ab, and
# Composer (Debian's composer, on php8.2) dumping an optimized autoloader for
# a tree of 3,000 generated classes.
#
# php-fpm runs as root in a temporary directory with a configuration of its
# own: two pools of two workers each (pm = static), "steady" (never
# recycled) and "recycle" (a worker replaced after 20 requests); nginx passes
# /steady/*.php and /recycle/*.php to their sockets. Each request runs
# tests/workloads/php_handler.php or a copy of it under another name (php-fpm
# puts each request's main code at the same address: its {main} must still be
# its own script's), loaded by an ab each: {main} calls render (rows built by the
# method Table::row) and checksum (SHA-256 through the internal function
# hash), some 5-20 ms. A PHP frame is "NAME (FILE:FIRSTLINE)", the script's
# main code "{main} (FILE:1)", an internal function its PHP name; they replace
# the VM's execute_ex over php-fpm's own native frames:
#   php-fpm8.2;_start;...;php_execute_script;zend_execute_scripts;zend_execute;
#   {main} (php_handler.php:1);render (php_handler.php:30);Table::row (php_handler.php:20);...
. tests/lib.sh
export HOME=$T

F=999
RUN_S=4
RW=tests/workloads
FPM=$(command -v php-fpm8.2)
PHP=$(command -v php8.2)
# A PHP frame: a name, then its file (and first line) in parentheses.
PHP_FRAME=' \([^;() ]+(:[0-9]+)?\)(;|$)'
# line FILE REGEX: the number of the first line of FILE matching REGEX (a function's first line).
line() { grep -n -m1 -E "$2" "$1" | cut -d: -f1; }
# summary_line ERR: bpfprof's "bpfprof: php: ..." line (its wording is not settled: read loosely).
summary_line() { grep -m1 '^bpfprof: php: [0-9]' "$1"; }

if [ -z "$FPM" ] || ! command -v nginx > /dev/null || ! command -v ab > /dev/null; then
	not_ok "php-fpm: php-fpm8.2, nginx or ab missing (sudo make deps installs php8.2-fpm, nginx-light, apache2-utils)"
	exit 0
fi

# 1. php-fpm and nginx, php-fpm in a cgroup of its own (for --cgroup: the
# workers that replace recycled ones are in it too).
WWW=$T/www
mkdir -p $WWW $T/nginx
# The page twice, under two names: each request's {main} must be its own script's, though
# php-fpm gives every request's main code the same place in memory.
SCRIPTS=(php_handler php_handler_b)
for s in "${SCRIPTS[@]}"; do cp $RW/php_handler.php $WWW/$s.php; done
cat > $T/fpm.conf <<EOF
[global]
pid = $T/fpm.pid
error_log = $T/fpm.log
; "child N started" is a notice: the test counts the workers from it
log_level = notice
daemonize = no

[steady]
listen = $T/steady.sock
pm = static
pm.max_children = 2
pm.max_requests = 0

[recycle]
listen = $T/recycle.sock
pm = static
pm.max_children = 2
pm.max_requests = 20
EOF
port=$(( (RANDOM % 20000) + 30000 ))
cat > $T/nginx/nginx.conf <<EOF
user root root;
worker_processes 1;
pid $T/nginx/nginx.pid;
error_log $T/nginx/error.log warn;
events {
	worker_connections 256;
}
http {
	access_log off;
	client_body_temp_path $T/nginx/client_body;
	proxy_temp_path $T/nginx/proxy;
	fastcgi_temp_path $T/nginx/fastcgi;
	uwsgi_temp_path $T/nginx/uwsgi;
	scgi_temp_path $T/nginx/scgi;
	server {
		listen 127.0.0.1:$port;
		root $WWW;
		# /POOL/SCRIPT.php: SCRIPT.php run by the pool POOL
		location ~ ^/(steady|recycle)/([^/]+\.php)\$ {
			include /etc/nginx/fastcgi_params;
			fastcgi_param SCRIPT_FILENAME \$document_root/\$2;
			fastcgi_pass unix:$T/\$1.sock;
		}
	}
}
EOF
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-php-$$
mkdir "$CGROUP_DIR" || { not_ok "php-fpm: cannot make the cgroup $CGROUP_DIR"; exit 0; }
(echo $BASHPID > "$CGROUP_DIR/cgroup.procs" && exec "$FPM" -R -F -y $T/fpm.conf) 2> "$T/fpm.stderr" &
fpm=$!
BG_PIDS+=($fpm)
nginx -p $T/nginx -c $T/nginx/nginx.conf -g 'daemon off;' 2> "$T/nginx.stderr" &
BG_PIDS+=($!)
URL=http://127.0.0.1:$port
BODY_OK='^checksum [0-9a-f]{64} rows [0-9]+$'
served=
for i in $(seq 100); do
	curl -s -o "$T/steady.body" "$URL/steady/php_handler.php" 2> /dev/null &&
		curl -s -o "$T/recycle.body" "$URL/recycle/${SCRIPTS[-1]}.php" 2> /dev/null &&
		grep -Eq "$BODY_OK" "$T/steady.body" && grep -Eq "$BODY_OK" "$T/recycle.body" && { served=1; break; }
	kill -0 $fpm 2> /dev/null || break
	sleep 0.1
done
# pool_workers POOL: the pids of POOL's workers now, comma-separated.
pool_workers() { ps --ppid $fpm -o pid=,args= | awk -v p="pool $1" 'index($0, p) { print $1 }' | paste -sd, -; }
steady=$(pool_workers steady)
if [ -z "$served" ] || [ "$(echo "$steady" | tr , '\n' | grep -c .)" != 2 ]; then
	not_ok "php-fpm: nginx does not serve $URL/steady/php_handler.php from two php-fpm workers (workers '$steady')"
	diag "$T/fpm.stderr"; diag "$T/fpm.log"; diag "$T/nginx.stderr"; diag $T/nginx/error.log
	diag "$T/steady.body" 5
	exit 0
fi
ok "php-fpm: nginx serves ${SCRIPTS[*]/%/.php} from two pools of two workers (steady: $steady)"

R=$(line $RW/php_handler.php '^function render\(')
C=$(line $RW/php_handler.php '^function checksum\(')
ROW=$(line $RW/php_handler.php 'public function row\(')
H='php_handler(_b)?\.php'	# either script
EXEC='^php-fpm[^;]*;(.*;)?php_execute_script;'
# under_main FILE: the request's frames over php_execute_script, {main} of FILE below
# FILE's render or checksum.
under_main() {
	echo "php_execute_script;zend_execute_scripts;zend_execute;\\{main\\} \\($1:1\\);(render \\($1:$R\\)|checksum \\($1:$C\\))(;|\$)"
}
# count_under FOLDED PREFIX: the samples matching PREFIX then under_main, of any script.
count_under() {
	local s n=0
	for s in "${SCRIPTS[@]}"; do n=$((n + $(sum_matching "$1" "$2$(under_main "$s\\.php")"))); done
	echo $n
}

# ab_run POOL NAME BPFPROF-ARGS...: an ab a script loads POOL, two requests at a time in
# all, while bpfprof profiles RUN_S seconds at F Hz to NAME.folded and NAME.pb.gz (stderr
# NAME.err). Sets RC, REQS and FAILED (ab's counts, both summed).
ab_run() {
	local pool=$1 name=$2 abs=() s n
	shift 2
	for s in "${SCRIPTS[@]}"; do
		ab -q -t $((RUN_S + 2)) -n 10000000 -c $((2 / ${#SCRIPTS[@]})) "$URL/$pool/$s.php" > "$T/$name.$s.ab" 2>&1 &
		abs+=($!)
		BG_PIDS+=($!)
	done
	sleep 0.5
	$BPFPROF -F $F -d $RUN_S "$@" -o "$T/$name.folded" -o "$T/$name.pb.gz" 2> "$T/$name.err"
	RC=$?
	wait "${abs[@]}"
	REQS=0
	FAILED=0
	for s in "${SCRIPTS[@]}"; do
		n=$(sed -n 's/^Complete requests: *\([0-9]*\).*/\1/p' "$T/$name.$s.ab")
		REQS=$((REQS + ${n:-0}))
		n=$(sed -n 's/^\(Failed requests\|Non-2xx responses\): *\([0-9]*\).*/\2/p' "$T/$name.$s.ab" |
			awk '{ t += $1 } END { print t + 0 }')
		FAILED=$((FAILED + n))
		[ -n "$(sed -n 's/^Complete requests: *\([0-9]*\).*/\1/p' "$T/$name.$s.ab")" ] || FAILED=$((FAILED + 1))
	done
}

# 2. The steady pool's two workers by -p: the samples of the request's execution
# (php_execute_script) show the handler's PHP frames over it, {main} of the same script
# their root.
ab_run steady steady -p "$steady"
exec_n=$(sum_matching "$T/steady.folded" "$EXEC")
under=$(count_under "$T/steady.folded" '^php-fpm[^;]*;(.*;)?')
# {main} of one script below the other's functions: a name read for another function.
crossed=$(sum_matching "$T/steady.folded" "\\{main\\} \\(php_handler\\.php:1\\);[^;]* \\(php_handler_b\\.php:")
crossed=$((crossed + $(sum_matching "$T/steady.folded" "\\{main\\} \\(php_handler_b\\.php:1\\);[^;]* \\(php_handler\\.php:")))
if [ "$RC" = 0 ] && [ "${REQS:-0}" -gt 50 ] && [ "$FAILED" = 0 ] && [ "$exec_n" -gt 400 ] &&
	within "$(share "$under" "$exec_n")" 90 100; then
	ok "steady: $(share "$under" "$exec_n")% of $exec_n samples in php_execute_script show ...;zend_execute;{main} (FILE:1);render|checksum (FILE:$R|$C), FILE the request's script (>= 90 %; $REQS requests)"
else
	not_ok "steady: $under of $exec_n samples in php_execute_script show ...;zend_execute;{main} (FILE:1);render|checksum (FILE:$R|$C), FILE the request's script; $crossed with the other script's {main} (rc $RC, $REQS requests, $FAILED failed)"
	top "$T/steady.folded"; diag "$T/steady.err"; diag "$T/steady.php_handler.ab"
fi
whole=$(count_under "$T/steady.folded" '^php-fpm[^;]*;_start;(.*;)?')
check "steady: $(share "$whole" "$under")% of them whole from _start (>= 95 %)" \
	'[ "$under" -gt 0 ] && within "$(share "$whole" "$under")" 95 100'
row=$(sum_matching "$T/steady.folded" ";render \\($H:$R\\);Table::row \\($H:$ROW\\)(;|\$)")
hash=$(sum_matching "$T/steady.folded" ";checksum \\($H:$C\\);hash(;|\$)")
in_r=$(sum_matching "$T/steady.folded" ";render \\($H:$R\\)(;|\$)")
in_c=$(sum_matching "$T/steady.folded" ";checksum \\($H:$C\\)(;|\$)")
check "steady: the method under render: $row of render's $in_r samples in Table::row (FILE:$ROW) (>= 30 %)" \
	'[ "$in_r" -gt 100 ] && within "$(share "$row" "$in_r")" 30 100'
check "steady: the internal function under checksum: $(share "$hash" "$in_c")% of checksum's $in_c samples in hash (>= 80 %)" \
	'[ "$in_c" -gt 100 ] && within "$(share "$hash" "$in_c")" 80 100'
left=$(sum_matching "$T/steady.folded" "$PHP_FRAME(.*;)?execute_ex(;|\$)")
check "steady: no execute_ex left above a PHP frame ($left samples with one)" \
	'[ "$under" -gt 0 ] && [ "$left" = 0 ]'
go tool pprof -raw "$T/steady.pb.gz" > "$T/steady.raw" 2> "$T/steady.raw.err"
# (-raw's location: "NAME FILE:LINE s=FIRSTLINE(SYSTEM NAME)", LINE the opline's)
check "steady: pprof: go tool pprof -raw reads it silently, render's Function in $WWW/${SCRIPTS[-1]}.php from line $R" \
	'[ ! -s "$T/steady.raw.err" ] && grep -Eq " render $WWW/${SCRIPTS[-1]}\.php:[0-9]+ s=$R\(" "$T/steady.raw"'
sum=$(summary_line "$T/steady.err")
check "steady: the summary counts PHP's samples: '${sum:-no bpfprof: php: line}'" \
	'[ -n "$sum" ]'

# 3. The recycle pool by --cgroup (php-fpm's): each worker serves 20 requests and
# is replaced; the workers started meanwhile (from php-fpm's log) are profiled
# and read too.
before=$(pool_workers recycle)
ab_run recycle recycle --cgroup "$CGROUP_DIR" --per-pid
started=$(sed -n 's/.*\[pool recycle\] child \([0-9]*\) started.*/\1/p' "$T/fpm.log" |
	grep -vxF -f <(echo "$before" | tr , '\n') | sort -u)
# Of each new worker: samples in php_execute_script, and of them under {main} of the handler;
# those with 10 or more (a request or so: not one started as the run ended) counted.
: > "$T/new.counts"
for p in $started; do
	e=$(sum_matching "$T/recycle.folded" "^php-fpm[^;]*-$p;(.*;)?php_execute_script;")
	u=$(count_under "$T/recycle.folded" "^php-fpm[^;]*-$p;(.*;)?")
	[ "$e" -ge 10 ] && echo "$p $e $u" >> "$T/new.counts"
done
new_n=$(echo $started | wc -w)
seen=$(wc -l < "$T/new.counts")
named=$(awk '$3 > 0' "$T/new.counts" | wc -l)
new_e=$(awk '{ t += $2 } END { print t + 0 }' "$T/new.counts")
new_u=$(awk '{ t += $3 } END { print t + 0 }' "$T/new.counts")
if [ "$RC" = 0 ] && [ "$FAILED" = 0 ] && [ "$seen" -ge 2 ] && [ "$named" = "$seen" ] &&
	within "$(share "$new_u" "$new_e")" 90 100; then
	ok "recycle: $new_n workers started while profiled, $seen of them sampled (10 or more samples), all $named named: $(share "$new_u" "$new_e")% of their $new_e samples in php_execute_script under {main} (FILE:1), FILE the request's script (>= 90 %; $REQS requests)"
else
	not_ok "recycle: $new_n workers started, $seen sampled, $named with PHP frames; $new_u of their $new_e samples in php_execute_script under {main} (FILE:1), FILE the request's script (rc $RC, $REQS requests, $FAILED failed)"
	diag "$T/new.counts"; top "$T/recycle.folded"; diag "$T/recycle.err"; diag "$T/fpm.log"
fi
kill -QUIT $fpm 2> /dev/null

# 4. Composer: `composer dump-autoload --optimize` over 3,000 generated classes in
# namespaces under psr-4, offline (COMPOSER_DISABLE_NETWORK, and in a network
# namespace of its own with no network at all), by -p. php waits for $T/go in an
# auto_prepend_file, so bpfprof is sampling before Composer starts.
if [ -z "$PHP" ] || ! [ -e /usr/share/php/Composer/ClassMapGenerator/PhpFileParser.php ]; then
	not_ok "composer: php8.2 or Debian's composer missing (sudo make deps installs composer)"
	exit 0
fi
PROJ=$T/proj
mkdir -p $PROJ/src $T/composer-home
cat > $PROJ/composer.json <<'EOF'
{
    "name": "bpfprof/fixture",
    "autoload": { "psr-4": { "Fixture\\": "src/" } }
}
EOF
# Classes Fixture\AreaNN\PartN\ThingNNNN, each with 40 methods whose strings and heredocs
# name classes (what Composer's scanner must skip).
(cd $PROJ && awk -v n=3000 -v methods=40 'BEGIN {
	for (i = 0; i < n; i++) {
		ns = sprintf("Area%02d\\Part%d", i % 30, int(i / 30) % 5)
		dir = sprintf("src/Area%02d/Part%d", i % 30, int(i / 30) % 5)
		if (!(dir in made)) { system("mkdir -p " dir); made[dir] = 1 }
		f = sprintf("%s/Thing%04d.php", dir, i)
		printf "<?php\n\nnamespace Fixture\\%s;\n\n/**\n * Thing %d.\n * class NotThis {} in a comment\n */\nfinal class Thing%04d\n{\n", ns, i, i > f
		for (m = 0; m < methods; m++)
			printf "    public function method%d(int $x): string\n    {\n        $s = \"class Nope%d { $x }\";\n        return $s . <<<EOT\n        heredoc %d\n        EOT;\n    }\n\n", m, m, m > f
		printf "}\n" > f
		close(f)
	}
}')
# Run before Composer's script: waits for $T/go, then, where Debian's php-excimer is
# loaded, samples the process with Excimer too (its CPU time, every millisecond), whose
# stacks it writes at exit to excimer.folded.
cat > $T/wait_go.php <<EOF
<?php
while (!file_exists('$T/go')) usleep(20000);
if (extension_loaded('excimer')) {
	\$GLOBALS['excimer'] = new ExcimerProfiler();
	\$GLOBALS['excimer']->setPeriod(0.001);
	\$GLOBALS['excimer']->setEventType(EXCIMER_CPU);
	\$GLOBALS['excimer']->start();
	register_shutdown_function(function () {
		\$GLOBALS['excimer']->stop();
		// Excimer 1.0.4 crashed at exit in 1 run of 8 without this pause (SIGABRT,
		// SIGSEGV: a notice of its timer still running as the profiler went).
		usleep(50000);
		file_put_contents('$T/excimer.folded', \$GLOBALS['excimer']->getLog()->formatCollapsed());
	});
}
EOF
NONET=(unshare -n)
unshare -n true 2> /dev/null || { NONET=(); ok "composer: in no network namespace # SKIP unshare -n fails here; COMPOSER_DISABLE_NETWORK=1 alone"; }
rm -f "$T/go"
env COMPOSER_HOME=$T/composer-home COMPOSER_DISABLE_NETWORK=1 COMPOSER_ALLOW_SUPERUSER=1 \
	"${NONET[@]}" "$PHP" -d auto_prepend_file=$T/wait_go.php /usr/bin/composer --working-dir=$PROJ \
	dump-autoload --optimize --no-interaction > "$T/composer.out" 2>&1 &
cpid=$!
BG_PIDS+=($cpid)
$BPFPROF -v -F $F -p $cpid -o "$T/composer.folded" 2> "$T/composer.err" &
prof=$!
wait_attached "$T/composer.err" $prof
touch "$T/go"
wait $cpid
crc=$?
# bpfprof -p stops once Composer has ended: up to 10 s to write its output.
for i in $(seq 100); do kill -0 $prof 2> /dev/null || break; sleep 0.1; done
kill -TERM $prof 2> /dev/null
wait $prof
RC=$?
classes=$(grep -cF "'Fixture\\\\Area" $PROJ/vendor/composer/autoload_classmap.php 2> /dev/null)
check "composer: dump-autoload --optimize offline: rc $crc (bpfprof's $RC), '$(grep -m1 'Generated' "$T/composer.out")', $classes Fixture classes in the class map" \
	'[ "$crc" = 0 ] && [ "$RC" = 0 ] && [ "$classes" = 3000 ]'
[ "$classes" = 3000 ] || diag "$T/composer.out"
total=$(folded_total "$T/composer.folded")
php_n=$(sum_matching "$T/composer.folded" "$PHP_FRAME")
check "composer: $(share "$php_n" "$total")% of its $total samples carry PHP frames (>= 90 %)" \
	'[ "${total:-0}" -gt 500 ] && within "$(share "$php_n" "$total")" 90 100'
CMG=/usr/share/php/Composer/ClassMapGenerator
# A backslash in a regular expression as awk -v takes it (awk unescapes it once).
BS='\\\\'
scan="Composer${BS}ClassMapGenerator${BS}ClassMapGenerator::scanPaths \\(ClassMapGenerator\\.php:$(line $CMG/ClassMapGenerator.php 'function scanPaths\(')\\)"
find="Composer${BS}ClassMapGenerator${BS}PhpFileParser::findClasses \\(PhpFileParser\\.php:$(line $CMG/PhpFileParser.php 'function findClasses\(')\\)"
clean="Composer${BS}ClassMapGenerator${BS}PhpFileCleaner::clean \\(PhpFileCleaner\\.php:$(line $CMG/PhpFileCleaner.php 'function clean\(')\\)"
in_find=$(sum_matching "$T/composer.folded" ";$find(;|\$)")
chain=$(sum_matching "$T/composer.folded" "^php[^;]*;_start;(.*;)?php_execute_script;zend_execute_scripts;zend_execute;\\{main\\} \\(composer:1\\);(.*;)?$scan;(.*;)?$find(;|\$)")
in_clean=$(sum_matching "$T/composer.folded" ";$find;$clean(;|\$)")
check "composer: $(share "$in_find" "$total")% of its samples in PhpFileParser::findClasses (>= 30 %), $(share "$chain" "$in_find")% of them whole: _start;..;{main} (composer:1);..;ClassMapGenerator::scanPaths;..;PhpFileParser::findClasses (>= 90 %), $in_clean in PhpFileCleaner::clean under it" \
	'[ "$in_find" -gt 0 ] && within "$(share "$in_find" "$total")" 30 100 && within "$(share "$chain" "$in_find")" 90 100 && [ "$in_clean" -gt 0 ]'

# 5. The same share by Excimer in the same process over the same run: findClasses's
# samples of those under Composer's script (bpfprof's {main} (composer:1), Excimer's
# /usr/bin/composer), within 3 points and two standard errors of their difference.
if [ -s "$T/excimer.folded" ]; then
	e_all=$(sum_matching "$T/excimer.folded" '^;?/usr/bin/composer(;|$)')
	e_find=$(sum_matching "$T/excimer.folded" "^;?/usr/bin/composer;(.*;)?Composer${BS}ClassMapGenerator${BS}PhpFileParser::findClasses(;|\$)")
	b_all=$(sum_matching "$T/composer.folded" ';\{main\} \(composer:1\)(;|$)')
	b_find=$(sum_matching "$T/composer.folded" ";\\{main\\} \\(composer:1\\);(.*;)?$find(;|\$)")
	pe=$(share "$e_find" "$e_all")
	pb=$(share "$b_find" "$b_all")
	allow=$(awk -v a="$pe" -v b="$pb" -v n="$e_all" -v m="$b_all" 'BEGIN {
		if (n == 0 || m == 0) { print 0; exit }
		a /= 100; b /= 100; printf "%.1f", 3 + 200 * sqrt(a * (1 - a) / n + b * (1 - b) / m) }')
	check "composer: PhpFileParser::findClasses $pb % of bpfprof's $b_all samples under {main} (composer:1), $pe % of Excimer's $e_all in the same run (within $allow points)" \
		'[ "$b_all" -gt 500 ] && [ "$e_all" -gt 500 ] && awk -v a="$pb" -v b="$pe" -v d="$allow" "BEGIN { exit !(a - b <= d && b - a <= d) }"'
else
	ok "composer: against Excimer # SKIP php-excimer not loaded in php8.2 (no $T/excimer.folded)"
fi
