# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Every command example of the README, docs/*.md and the man page's EXAMPLES runs
# (tests/doc_text.py finds them): as written, with durations cut to 1 s, hosts on the
# loopback, placeholder pids made real workloads' (python3.11, ruby and php8.2 running the
# examples' demo.py, demo.rb and demo.php, nginx serving Lua), under `bash -O failglob` (so an
# unquoted URL with `?` fails, as it can in a user's shell). Each exits 0, and what it
# writes is read by its real reader: the strict folded checker, `go tool pprof`,
# `callgrind_annotate`, `xmllint`, `promtool`. A busiest-stack pipeline must print the
# line with the largest count, frames with spaces and all. Each example is listed below,
# run or not run with the reason: an example not listed, or listed and gone, fails.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

# ONLY=REGEX runs only the examples whose "FILE:LINE<TAB>COMMAND" matches (all are still
# checked to be listed).

# run: runs and is checked. skip<TAB>REASON: not run, and why.
LISTED=$(cat << 'EOF'
run	sudo bpfprof -F 99 -d 30 > out.folded
run	sudo bpfprof -F 99 -d 30 -o out.svg -o out.pb.gz
run	sudo bpfprof -F 999 -d 5 -o tests/example/system.folded -o tests/example/flamegraph.svg
run	sudo bpfprof -p 1234 -F 999 -d 10 -o app.folded
run	sudo bpfprof -t 1235 -d 10 > thread.folded
run	sudo bpfprof --cgroup system.slice/nginx.service > nginx.folded
run	sudo bpfprof --cgroup system.slice/nginx.service -d 20 > nginx.folded
run	sudo bpfprof -K -C 0 -d 5 > kernel-cpu0.folded
run	sudo bpfprof -d 10 -o out.pb.gz -o out.svg -o callgrind.out.app
run	sudo bpfprof --off-cpu -p 1234 -d 10 -o waits.svg
run	sudo bpfprof --wall -p 1234 -d 10 -o wall.pb.gz
run	sudo bpfprof --listen 127.0.0.1:6060
run	sudo bpfprof --listen 127.0.0.1:6060 &
run	bpfprof --listen 127.0.0.1:6060 -F 99
run	go tool pprof -top 'http://127.0.0.1:6060/debug/pprof/profile?seconds=30'
run	curl -s -o cpu.pb.gz 'http://127.0.0.1:6060/debug/pprof/profile?seconds=30&pid=1234'
run	curl -s http://127.0.0.1:6060/metrics
run	curl -s -o cpu.svg 'http://127.0.0.1:6060/flamegraph?seconds=10'
run	sudo bpfprof --push http://pyroscope:4040
run	sudo bpfprof --push http://pyroscope:4040 --app-name web
run	sudo bpfprof --push http://pyroscope:4040 --app-name 'web{dc=eu1}' &
run	sudo bpfprof --otlp http://127.0.0.1:4318
run	sudo bpfprof --otlp http://127.0.0.1:4318 --app-name web &
run	sudo bpfprof --otlp http://127.0.0.1:4318 --app-name web
run	sudo bpfprof --rotate 600 --keep 144 -o /var/lib/bpfprof/host.pb.gz
run	ExecStart=/usr/local/bin/bpfprof --listen 127.0.0.1:6060 -F 99 --rotate 600 --keep 144 -o /var/lib/bpfprof/host.pb.gz
run	sudo mkdir -p /var/lib/bpfprof
run	bpfprof diff before.pb.gz after.pb.gz -o change.svg
run	bpfprof diff before.pb.gz after.folded -o change.svg -o change.folded
run	bpfprof diff run.folded run.pb.gz
run	bpfprof diff others.pb.gz others.folded
run	go tool pprof -tagignore=comm=bpfprof -top out.pb.gz
run	go tool pprof -symbolize=none -proto -tagignore=comm=bpfprof out.pb.gz > others.pb.gz
run	bpfprof --help
run	bpfprof runtimes
run	bpfprof --no-python
run	bpfprof --no-ruby
run	bpfprof --no-java
run	sudo bpfprof --off-cpu -p $(pgrep -n myserver) -d 10 -o off.svg -o off.pb.gz
run	sudo bpfprof -F 999 -d 3 -p $(pgrep syscall)
run	go tool pprof -top out.pb.gz
run	go tool pprof -top -tagfocus=pid=1234 out.pb.gz
run	callgrind_annotate callgrind.out.split
run	awk '$NF > n { n = $NF; s = $0 } END { print s }' out.folded
run	sudo bpfprof -p $(pgrep -f demo.py) -d 5 -F 999 -o demo.svg -o demo.folded
run	grep checksum demo.folded | awk '$NF > n { n = $NF; s = $0 } END { print s }'
run	sudo bpfprof -p $(pgrep -f demo.py) -d 5 -F 999 -o tests/example/python.svg -o tests/example/python.folded
run	sudo bpfprof -p $(pgrep -f 'nginx: worker') -d 5 -F 999 -o nginx.folded
run	grep ngx_md5_update nginx.folded | head -1
run	sudo bpfprof -F 999 -p WORKER -d 5 -o tests/example/nginx-lua.svg -o tests/example/nginx-lua.folded
run	sudo bpfprof -p $(pgrep -f demo.rb) -d 5 -F 999 -o demo.folded
run	grep SHA256_Update demo.folded | awk '$NF > n { n = $NF; s = $0 } END { print s }'
run	sudo bpfprof -F 999 -p PID -d 5 -o tests/example/ruby.svg -o tests/example/ruby.folded
run	sudo bpfprof -p $(pgrep -f demo.php) -d 5 -F 999 -o demo.folded
run	grep PHP_SHA256Update demo.folded | awk '$NF > n { n = $NF; s = $0 } END { print s }'
run	sudo bpfprof -p $(pgrep split-nofp) -d 4 -F 999
run	sudo bpfprof -p $(pgrep -f JavaSplit) -d 5 -F 999 -o split.folded
run	awk '$NF > n { n = $NF; s = $0 } END { print s }' split.folded
skip	flamegraph.pl out.folded > out.svg	FlameGraph's flamegraph.pl, which Debian 12 does not package
skip	otelcol-contrib --config otelcol.yaml --feature-gates=service.profilesSupport	the OpenTelemetry Collector, which Debian does not package; e2e/otlp runs --otlp against a stand-in receiver
skip	protoc -I opentelemetry-proto --decode \	the specification's .proto files, which no Debian package ships at this version; e2e/otlp decodes with tests/otlp's
skip	make demo	builds the tree and installs packages; CI runs make deps and make test
skip	make test	runs this test
skip	systemctl enable --now bpfprof	systemd and the installed unit; e2e/install checks the unit
skip	systemctl edit	systemd and the installed unit; e2e/install checks the unit
skip	sudo systemctl edit bpfprof	an editor on the installed unit; the drop-in's command runs above
skip	sudo systemctl restart bpfprof	systemd and the installed unit; e2e/install checks the unit
skip	sudo systemctl daemon-reload	systemd and the installed unit; e2e/install checks the unit
skip	journalctl -u bpfprof	the installed unit's journal; the summary on stderr at a stop is checked above
EOF
)

python3 tests/doc_text.py examples README.md docs/*.md src/bpfprof.8 > "$T/found"
# An example's key: its text without a trailing comment.
key_of() { sed -e 's/  *# .*$//' <<< "$1"; }
listed_mode() { awk -F '\t' -v k="$1" '$2 == k { print $1 (NF > 2 ? "\t" $3 : ""); exit }' <<< "$LISTED"; }

# Every example listed, every listed one still in the docs.
unlisted= n=0
while IFS=$'\t' read -r where cmd; do
	n=$((n + 1))
	[ -n "$(listed_mode "$(key_of "$cmd")")" ] || unlisted+="$where: $cmd | "
done < "$T/found"
check "$n examples in the docs, each listed in tests/e2e/examples.sh" '[[ $n -gt 40 && -z $unlisted ]]'
[ -z "$unlisted" ] || echo "#   not listed: $unlisted"
gone=
while IFS=$'\t' read -r mode cmd _; do
	awk -F '\t' -v k="$cmd" '{ sub(/  *# .*$/, "", $2) } $2 == k { f = 1 } END { exit !f }' "$T/found" ||
		gone+="$cmd | "
done <<< "$LISTED"
check "every example listed is still in the docs" '[ -z "$gone" ]'
[ -z "$gone" ] || echo "#   gone: $gone"

# What the examples need -------------------------------------------------------

free_port() {
	local p
	while :; do
		p=$(( (RANDOM % 20000) + 30000 ))
		ss -ltn "sport = :$p" | grep -q LISTEN || { echo $p; return; }
	done
}
PORT=$(free_port)
"$WL/waits" 600 2 > /dev/null &
WAITS=$!
BG_PIDS+=($WAITS)
/usr/bin/python3.11 tests/example/demo.py 600 > /dev/null &
PY=$!
BG_PIDS+=($PY)
CGROUP_DIR=$CGROUP_ROOT/bpfprof-examples-$$
mkdir -p "$CGROUP_DIR"
echo $WAITS > "$CGROUP_DIR/cgroup.procs"
sleep 1	# demo.py's imports done, its threads up
TID=$(ls /proc/$WAITS/task | sort -n | tail -1)

# Started when an example of a file first needs them (NAME's pid in $NEED), stopped at
# the file's end.
declare -A STARTED
NEEDED_PIDS=()
need() {
	local pid
	if [ -n "${STARTED[$1]:-}" ]; then NEED=${STARTED[$1]}; return; fi
	case $1 in
	syscall) "$WL/syscall" 600 > /dev/null & pid=$! ;;
	split-nofp) "$WL/split-nofp" 600 > /dev/null & pid=$! ;;
	ruby) /usr/bin/ruby tests/example/demo.rb 600 > /dev/null & pid=$!; sleep 1 ;;
	php) php8.2 tests/example/demo.php 600 > /dev/null & pid=$!; sleep 0.5 ;;
	java) javac --release 17 -d "$T/java" tests/workloads/JavaSplit.java
		java -cp "$T/java" JavaSplit 600 "$T/java/ready" > /dev/null & pid=$!
		while [ ! -e "$T/java/ready" ] && kill -0 $pid 2> /dev/null; do sleep 0.1; done ;;
	nginx) start_nginx; pid=$NGINX_WORKER ;;
	receiver) RPORT=$(free_port); RDIR=$T/pyroscope.$RPORT; mkdir -p "$RDIR"
		python3 tests/pyroscope_receiver.py $RPORT "$RDIR" 2> "$RDIR.err" & pid=$!
		sleep 0.5 ;;
	otlp) OPORT=$(free_port); ODIR=$T/otlp.$OPORT; mkdir -p "$ODIR"
		python3 tests/otlp_receiver.py $OPORT "$ODIR" 2> "$ODIR.err" & pid=$!
		sleep 0.5 ;;
	esac
	BG_PIDS+=($pid)
	NEEDED_PIDS+=($pid)
	STARTED[$1]=$pid
	NEED=$pid
}
stop_needed() {
	local p
	[ -z "${STARTED[receiver]:-}" ] ||
		check "$last: the pushes arrived at the Pyroscope stand-in: $(cat "$RDIR/log" 2> /dev/null | wc -l), none refused" \
			'[ -s "$RDIR/log" ] && [ ! -s "$RDIR/refused" ]'
	[ -z "${STARTED[otlp]:-}" ] ||
		check "$last: the requests arrived at the OTLP stand-in: $(cat "$ODIR/log" 2> /dev/null | wc -l), none refused" \
			'[ -s "$ODIR/log" ] && [ ! -s "$ODIR/refused" ]'
	for p in "${NEEDED_PIDS[@]}"; do kill $p 2> /dev/null; wait $p 2> /dev/null; done
	NEEDED_PIDS=()
	STARTED=()
}

# nginx with Debian's Lua module serving tests/example/nginx/handler.lua under ab.
start_nginx() {
	local ngx=$T/nginx port i
	port=$(free_port)
	mkdir -p $ngx
	sed -e "s|@PREFIX@|$ngx|g; s|@PORT@|$port|g; s|@LUA_DIR@|$(pwd)/tests/example/nginx|g" \
		tests/e2e/nginx/nginx.conf.in > $ngx/nginx.conf
	nginx -p $ngx -c $ngx/nginx.conf -g 'daemon off;' 2> "$T/nginx.stderr" &
	BG_PIDS+=($!)
	NEEDED_PIDS+=($!)
	NGINX_WORKER=
	for i in $(seq 200); do
		NGINX_WORKER=$(ps --ppid ${BG_PIDS[-1]} -o pid=,args= | awk '/worker process/ { print $1; exit }')
		[ -n "$NGINX_WORKER" ] && curl -sf -o /dev/null "http://127.0.0.1:$port/lua" && break
		sleep 0.05
	done
	[ -n "$NGINX_WORKER" ] || { echo "#   nginx did not start:"; diag "$T/nginx.stderr"; }
	ab -q -t 120 -n 10000000 -c 2 "http://127.0.0.1:$port/lua" > /dev/null 2>&1 &
	BG_PIDS+=($!)
	NEEDED_PIDS+=($!)
	sleep 1
}

# Fixtures the examples read: profiles of the machine running waits and demo.py
# (Python frames: names with spaces), before and after: waits, then demo.py.
FIX=$T/fixtures
mkdir -p $FIX
# The whole machine while another bpfprof starts (its start is busy): out.* have bpfprof in
# them, as the examples that leave it out expect.
$BPFPROF -F 499 -d 1.5 -o $FIX/out.pb.gz -o $FIX/out.folded -o $FIX/callgrind.out.split 2> /dev/null &
sleep 0.3
$BPFPROF -F 99 -d 0.5 -o $T/other.folded 2> /dev/null
wait $!
$BPFPROF -F 499 -d 1 -p $WAITS -o $FIX/before.pb.gz 2> /dev/null
$BPFPROF -F 499 -d 1 -p $PY -o $FIX/after.pb.gz -o $FIX/after.folded 2> /dev/null
# One run both ways (run.*), and the folded one without bpfprof, as outputs.md makes it.
cp $FIX/out.folded $FIX/run.folded
cp $FIX/out.pb.gz $FIX/run.pb.gz
grep -Ev '^bpfprof(-[0-9]+)?;' $FIX/out.folded > $FIX/others.folded
check "fixtures: folded with Python frames and bpfprof's, pprof, callgrind, before and after" \
	'grep -q " (demo.py:[0-9]*)" $FIX/out.folded && grep -q "^bpfprof;" $FIX/out.folded && [ -s $FIX/callgrind.out.split ] && [ -s $FIX/before.pb.gz ] && [ -s $FIX/after.folded ]'

# Running one ----------------------------------------------------------------------

# The command as run here, in REWRITTEN: as written, but for what a test machine has to
# change. A $(pgrep ...) this test does not know stays, and fails.
rewrite() {
	local c=$1 pg pid=
	c=${c#ExecStart=}
	c=${c#sudo }
	c=${c//\/usr\/local\/bin\/bpfprof/bpfprof}
	case $c in bpfprof*) c="$(pwd)/$BPFPROF${c#bpfprof}" ;; esac
	pg=$(grep -o '\$(pgrep [^)]*)' <<< "$c")
	case $pg in
	'$(pgrep -f demo.py)') pid=$PY ;;
	'$(pgrep -n myserver)') pid=$WAITS ;;
	'$(pgrep -f demo.rb)') need ruby; pid=$NEED ;;
	'$(pgrep -f demo.php)') need php; pid=$NEED ;;
	'$(pgrep syscall)') need syscall; pid=$NEED ;;
	'$(pgrep split-nofp)') need split-nofp; pid=$NEED ;;
	'$(pgrep -f JavaSplit)') need java; pid=$NEED ;;
	"\$(pgrep -f 'nginx: worker')") need nginx; pid=$NEED ;;
	esac
	[ -n "$pid" ] && c=${c/"$pg"/$pid}
	case $c in *" PID "*) need ruby; c=${c// PID / $NEED } ;; esac
	case $c in *" WORKER "*) need nginx; c=${c// WORKER / $NEED } ;; esac
	case $c in *pyroscope:4040*) need receiver; c=${c//pyroscope:4040/127.0.0.1:$RPORT} ;; esac
	case $c in *127.0.0.1:4318*) need otlp; c=${c//127.0.0.1:4318/127.0.0.1:$OPORT} ;; esac
	c=${c//1234/$WAITS}
	c=${c//1235/$TID}
	c=${c//127.0.0.1:6060/127.0.0.1:$PORT}
	c=${c//system.slice\/nginx.service/${CGROUP_DIR#$CGROUP_ROOT/}}
	c=${c//\/var\/lib\/bpfprof/$W/var/lib/bpfprof}
	REWRITTEN=$(sed -E 's/ -d [0-9.]+/ -d 1/; s/seconds=[0-9]+/seconds=1/' <<< "$c")
}

# check_file FILE [diff]: FILE read by its format's reader; 0 if it reads.
check_file() {
	case $1 in
	*.pb.gz) go tool pprof -raw "$1" 2> /dev/null | grep -q '^Samples:' ;;
	*.svg) xmllint --noout "$1" 2> /dev/null && grep -q '<svg' "$1" ;;
	*callgrind.out.*) callgrind_annotate "$1" 2> /dev/null | grep -q 'PROGRAM TOTALS' ;;
	*) if [ "${2:-}" = diff ]; then
		awk 'NF < 3 || $(NF - 1) !~ /^[0-9]+$/ || $NF !~ /^[0-9]+$/ { bad = 1 } END { exit bad || !NR }' "$1"
	   else
		[ "$(folded_total "$1" 2> /dev/null || echo 0)" -gt 0 ]
	   fi ;;
	esac
}

# busiest OUT PIPELINE: OUT is one line, a folded line of the pipeline's file among those
# its grep keeps, with their largest count.
busiest() {
	local file pat max
	file=$(grep -oE '[a-z]+\.folded' <<< "$2" | head -1)
	pat=$(sed -n "s/^grep \([^ ]*\) .*/\1/p" <<< "$2")
	max=$(grep -F -- "$pat" "$W/$file" | awk '$NF > m { m = $NF } END { print m + 0 }')
	[ "$(wc -l < "$1")" = 1 ] && [ "$(folded_total "$1" 2> /dev/null)" = "$max" ] && [ "$max" -gt 0 ] &&
		grep -qF -- "$pat" "$1"
}

# The metrics /metrics serves, against docs/agent.md's table of them.
metrics_as_documented() {
	diff <(grep -oE '^bpfprof_[a-z_]+' "$1" | sort -u) \
	     <(grep -oE '^  \| `bpfprof_[a-z_]+`' docs/agent.md | grep -oE 'bpfprof_[a-z_]+' | sort -u) > "$T/metrics.diff"
}

# What the example wrote, each read by its reader: 0 if all read; names what did not in BAD.
check_outputs() {
	local c=$1 out=$2 f files=() mode=
	BAD=
	case $c in *" diff "*) mode=diff ;; esac
	case $c in /* | curl* | "go tool pprof "*" > "*) files+=($(grep -oE '(-o|>) [^ ]+' <<< "$c" | awk '{ print $2 }')) ;; esac
	for f in "${files[@]}"; do
		case $c in *--rotate*) f=$(ls "${f%.pb.gz}".*.pb.gz 2> /dev/null | head -1) ;; esac
		[ "${f#/}" = "$f" ] && f=$W/$f
		check_file "$f" $mode || BAD+="${f#$W/} "
	done
	case $c in
	"go tool pprof "*"-top "*) grep -q 'flat%' "$out" || BAD+="stdout (no pprof table) " ;;
	"go tool pprof "*"-proto "*) ;;	# its file, checked above
	*"| head -1") [ "$(wc -l < "$out")" = 1 ] && folded_total "$out" > /dev/null 2>&1 || BAD+="stdout (not one folded line) " ;;
	*".folded | "* | "awk '"*".folded") busiest "$out" "$c" || BAD+="stdout (not the busiest line) " ;;
	*"callgrind_annotate"*) grep -q 'PROGRAM TOTALS' "$out" || BAD+="stdout (no totals) " ;;
	*"curl -s http"*/metrics) { promtool check metrics < "$out" > /dev/null 2>&1 && metrics_as_documented "$out"; } ||
		BAD+="stdout (promtool, or not agent.md's metrics: $(tr '\n' ' ' < "$T/metrics.diff")) " ;;
	*"bpfprof --help") grep -q '^Usage: bpfprof' "$out" || BAD+="stdout (no usage) " ;;
	*"bpfprof runtimes") grep -q '^| runtime |' "$out" || BAD+="stdout (no table) " ;;
	*"mkdir -p "*) [ -d "${c##* }" ] || BAD+="no directory " ;;
	*--listen* | *--push* | *--otlp*) ;;	# an agent: its files, if any, are checked above
	*"bpfprof"*) [ ${#files[@]} -gt 0 ] || [ "$(folded_total "$out" 2> /dev/null || echo 0)" -gt 0 ] ||
			BAD+="stdout (not folded) " ;;
	*) [ ${#files[@]} -gt 0 ] || BAD+="(no check for this example) " ;;
	esac
	[ -z "$BAD" ]
}

# A bpfprof that runs until a signal: its stderr says it samples (or serves). Up to 30 s:
# the sanitizers' build on a loaded machine starts in more than 5.
wait_ready() {
	local i
	for i in $(seq 600); do
		grep -qs "serving on\|timing: attached" "$1" && return
		kill -0 "$2" 2> /dev/null || return
		sleep 0.05
	done
}

# interrupt PID: SIGINT, as Ctrl-C; its exit status, or 137 after a SIGKILL if it has
# not exited 20 s later.
interrupt() {
	local i
	kill -INT $1 2> /dev/null
	for i in $(seq 200); do kill -0 $1 2> /dev/null || break; sleep 0.1; done
	kill -0 $1 2> /dev/null && kill -KILL $1
	wait $1
}

# stop_server: SIGINT to the example left running in the background; it must exit 0
# and write its summary on stderr.
SERVER= SERVER_WHAT=
stop_server() {
	local rc
	[ -n "$SERVER" ] || return 0
	interrupt $SERVER
	rc=$?
	check "$SERVER_WHAT: stopped by SIGINT, exit $rc, the summary on stderr" \
		'[ $rc = 0 ] && grep -q "^bpfprof: .* samples" "$T/server.err"'
	SERVER=
}

run_example() {
	local where=$1 cmd=$2 c out err rc pid what
	BAD= BAD_STOP=
	rewrite "$cmd"
	c=$REWRITTEN
	out=$T/ex.out err=$T/ex.err
	what="$where: $cmd"
	case $c in *'$('*) not_ok "$what: a \$(...) this test does not know how to run"; return ;; esac
	case $c in *--listen*) stop_server ;; esac	# its port
	case $c in
	*" &")	# a server the next examples use, until the file's end
		stop_server
		(cd "$W" && exec bash -O failglob -c "exec ${c% &} -v" > "$out" 2> "$T/server.err") &
		SERVER=$! SERVER_WHAT=$what
		wait_ready "$T/server.err" $SERVER
		check "$what: started" 'kill -0 $SERVER 2> /dev/null'
		return ;;
	"$(pwd)/$BPFPROF"*" -d "* | *"/$BPFPROF diff"* | *"/$BPFPROF --help" | *"/$BPFPROF runtimes" | [!/]*)
		# The same command twice (the README's and the man page's) runs once.
		if [ -n "${RAN[$cmd]:-}" ] && [ "${c#*127.0.0.1}" = "$c" ]; then
			ok "$what: as ${RAN[$cmd]}"
			return
		fi
		(cd "$W" && timeout 60 bash -O failglob -c "$c" > "$out" 2> "$err")
		rc=$? ;;
	*)	# runs until Ctrl-C: SIGINT once it samples, or serves
		(cd "$W" && exec bash -O failglob -c "exec $c -v" > "$out" 2> "$err") &
		pid=$!
		wait_ready "$err" $pid
		case $c in *--listen*) curl -sf -o /dev/null "http://127.0.0.1:$PORT/metrics" || echo "no /metrics" >> "$err" ;; esac
		sleep 0.5
		interrupt $pid
		rc=$?
		grep -q "^no /metrics" "$err" && rc=1
		grep -q "^bpfprof: .* samples" "$err" || BAD_STOP="no summary on stderr" ;;
	esac
	if [ "$rc" = 0 ] && check_outputs "$c" "$out" && [ -z "${BAD_STOP:-}" ]; then
		ok "$what"
		RAN[$cmd]=$where
	else
		not_ok "$what" "run as: $c" "exit $rc; ${BAD:-} ${BAD_STOP:-}"
		diag "$err" 5
	fi
}

declare -A RAN	# the examples that ran and passed: where

# Each file's examples in order, in a directory of its own holding the fixtures.
while IFS=$'\t' read -r where cmd; do
	file=${where%:*}
	if [ "$file" != "${last:-}" ]; then
		stop_server
		stop_needed
		W=$T/work/${file//\//_}
		mkdir -p "$W/tests/example" "$W/var/lib/bpfprof"
		cp $FIX/* "$W/"
		last=$file
	fi
	mode=$(listed_mode "$(key_of "$cmd")")
	[ -z "${ONLY:-}" ] || grep -qE -- "$ONLY" <<< "$where	$cmd" || continue
	case $mode in
	run)	run_example "$where" "$(key_of "$cmd")" ;;
	skip*)	ok "$where: $(key_of "$cmd") # SKIP ${mode#skip$'\t'}" ;;
	esac
done < "$T/found"
stop_server
stop_needed
