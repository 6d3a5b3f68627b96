# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Bad input: one line on stderr naming the problem (and the fix), exit code
# 2 for usage and 1 for the machine, nothing sampled, nothing on stdout.
. tests/lib.sh

# expect_error CODE REGEX ARGS...: bpfprof ARGS fails with CODE and one line matching REGEX.
expect_error() {
	local code=$1 re=$2 rc lines
	shift 2
	"$BPFPROF" "$@" > "$T/out" 2> "$T/err" < /dev/null
	rc=$?
	lines=$(wc -l < "$T/err")
	if [ $rc = "$code" ] && [ "$lines" = 1 ] && grep -Eq "^bpfprof: .*$re" "$T/err" && [ ! -s "$T/out" ]; then
		ok "bpfprof $* -> exit $code: $(cat "$T/err")"
	else
		not_ok "bpfprof $* -> want exit $code and one line matching '$re'" \
			"got exit $rc, $lines lines: $(head -3 "$T/err" | tr '\n' '|')"
	fi
}

# A pid that surely names nothing: a process that has come and gone.
true & gone=$!
wait $gone
max_rate=$(cat /proc/sys/kernel/perf_event_max_sample_rate)

expect_error 2 "unknown option '--bogus'; see bpfprof --help" --bogus
expect_error 2 "unknown option '-Z'" -Z
expect_error 2 "option '-F' needs a value" -F
expect_error 2 "option '--cgroup' needs a value" --cgroup
expect_error 2 "-F 'abc': not a whole number" -F abc
expect_error 2 "-F 0 is out of range; give a rate in Hz from 1 to $max_rate \\(the kernel's perf_event_max_sample_rate\\)" -F 0
expect_error 2 "-F $((max_rate + 1)) is out of range" -F $((max_rate + 1))
expect_error 2 "-F '-5': not a whole number" -F -5
expect_error 2 "-d -5 is out of range" -d -5
expect_error 2 "-d 0 is out of range" -d 0
expect_error 2 "-d 'soon': not a number of seconds" -d soon
expect_error 2 "-p $gone: no such process; give the id of a running process" -p $gone
expect_error 2 "-p 'x1': not a whole number" -p x1
expect_error 2 "-p ',': no process id given" -p ,
expect_error 2 "-t $gone: no such thread" -t $gone
expect_error 2 "--cgroup '/nonexistent': no such cgroup directory" --cgroup /nonexistent
expect_error 2 "--cgroup '/tmp': not a cgroup v2 directory" --cgroup /tmp
expect_error 2 "-C 4096: CPU 4096 is not online" -C 4096
expect_error 2 "-C 'x': not a CPU list" -C x
expect_error 2 "-U and -K exclude each other" -U -K
expect_error 2 "unexpected argument 'ls'" ls
expect_error 2 "--interval 0 is out of range" --interval 0
expect_error 2 "--stack-storage-size 0 is out of range" --stack-storage-size 0
expect_error 2 "--max-stacks 'many': not a whole number" --max-stacks many
expect_error 2 "--ring-buffer-size 12 is not a power of two" --ring-buffer-size 12
expect_error 2 "-o: empty file name" -o ""
expect_error 2 "--unwind 'lbr': unknown; give auto \\(CFI in the kernel\\), fp \\(frame pointers\\) or dwarf" --unwind lbr
expect_error 2 "--stack-size 1000 is out of range" --stack-size 1000
expect_error 2 "--stack-size 5000 is not a multiple of 1024" --stack-size 5000
expect_error 2 "-f 'flame': unknown format; give folded, pprof, callgrind, svg or otlp" -f flame
expect_error 2 "-o $T/x.svg is named like svg output but -f says pprof; rename it or drop -f" \
	-f pprof -o "$T/x.svg"
expect_error 2 "-o $T/a.folded is given twice" -o "$T/a.folded" -o "$T/a.folded"
expect_error 2 "-d 'nan': not a number of seconds" -d nan
expect_error 2 "-d 'inf': not a number of seconds" -d inf
expect_error 2 "-t 'main': not a whole number" -t main
expect_error 2 "-C '3-1': not a CPU list" -C 3-1
expect_error 2 "--interval 'often': not a number of seconds" --interval often
expect_error 2 "--stack-storage-size 999999999 is out of range" --stack-storage-size 999999999
expect_error 2 "--ring-buffer-size 2 is out of range" --ring-buffer-size 2
expect_error 2 "--btf' needs a value" --btf
# Options that would do nothing together.
expect_error 2 "--unwind dwarf unwinds user stacks, which -K leaves out; drop one of them" --unwind dwarf -K
expect_error 2 "--stack-size 4096: the stack is copied only with --unwind dwarf; add it, or drop --stack-size" \
	--stack-size 4096
expect_error 2 "-I records the idle task \\(pid 0\\), which -p and -t leave out; drop -I" -I -p $$
# pprof is binary: not to a terminal.
script -qec "$BPFPROF -f pprof -d 1" /dev/null > "$T/tty" 2>&1 < /dev/null
rc=$?
if [ $rc = 2 ] && grep -q "^bpfprof: pprof output is binary; give -o FILE.pb.gz or redirect stdout" "$T/tty"; then
	ok "-f pprof to a terminal -> exit 2: $(tr -d '\r' < "$T/tty")"
else
	not_ok "-f pprof to a terminal -> want exit 2" "got $rc: $(head -2 "$T/tty")"
fi

# The machine: exit 1.
: > "$T/empty.btf"
expect_error 1 "'$T/empty.btf' holds no usable BTF .*CONFIG_DEBUG_INFO_BTF" --btf "$T/empty.btf" -d 1
expect_error 1 "kernel BTF not found at '/nonexistent'" --btf /nonexistent -d 1
printf '\237\353\001\000not really BTF' > "$T/bad.btf"
expect_error 1 "cannot load the BPF program with the BTF in '$T/bad.btf'" --btf "$T/bad.btf" -d 1
expect_error 1 "cannot write to '$T/no/such/dir/out.folded': its directory does not exist" \
	-o "$T/no/such/dir/out.folded" -d 1
expect_error 1 "cannot write to '$T': it is a directory" -o "$T" -d 1
mkdir "$T/ro" && mount -t tmpfs -o ro,size=1m tmpfs "$T/ro"
expect_error 1 "cannot write to '$T/ro/out.folded': Read-only file system" -o "$T/ro/out.folded" -d 1
umount "$T/ro"
# Root ignores mode bits, not the immutable flag.
mkdir "$T/immutable" && chattr +i "$T/immutable"
expect_error 1 "cannot write to '$T/immutable/out.folded': Operation not permitted; choose a writable path" \
	-o "$T/immutable/out.folded" -d 1
chattr -i "$T/immutable"
: > "$T/plain"
expect_error 1 "cannot write to '$T/plain/out.folded': a part of its directory is not a directory" \
	-o "$T/plain/out.folded" -d 1
expect_error 1 "cannot write to '$T/': it is a directory" -o "$T/" -d 1
expect_error 1 "'$T' holds no usable BTF" --btf "$T" -d 1

# The disk fills while writing: a clear word, exit 1, nothing at -o's path,
# no temporary file, nothing left loaded.
start_workload stacks -n 3000 -d 10
stacks=$!
mkdir "$T/full" && mount -t tmpfs -o size=64k tmpfs "$T/full"
last=$(bpf_last_prog)
$BPFPROF -F 999 -d 2 -o "$T/full/out.folded" > "$T/out" 2> "$T/err"
rc=$?
if [ $rc = 1 ] && grep -q "^bpfprof: cannot write folded output to '$T/full/out.folded' (left as it was): No space left on device; free some space, or give -o a file on another file system$" "$T/err" &&
   [ -z "$(ls -A "$T/full")" ]; then
	ok "disk full -> exit 1, nothing in the directory: $(head -1 "$T/err")"
else
	not_ok "disk full -> want exit 1, the message and an empty directory" "got $rc: $(head -1 "$T/err")" \
		"in it: $(ls -A "$T/full" | tr '\n' ' ')"
fi
umount "$T/full"
kill $stacks
left=$(bpf_unheld "$last")
check "disk full: no bpfprof program left loaded (${left:-none})" '[ -z "$left" ]'

# BPF or perf events refused by a seccomp filter, as a container's policy
# would: exit 1, nothing written, nothing left loaded (perf_event_open is
# refused after the programs are loaded and the tracepoints attached).
last=$(bpf_last_prog)
for call in bpf perf_event_open; do
	what=$([ $call = bpf ] && echo "cannot load the BPF program: Operation not permitted; the kernel refuses bpf\\(\\)" ||
		echo "cannot open a cpu-clock perf event on CPU [0-9]+: Operation not permitted; the kernel refuses perf events")
	"$O/tests/tools/deny_syscall" $call 1 "$BPFPROF" -d 1 -o "$T/denied.folded" > "$T/out" 2> "$T/err"
	rc=$?
	if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] && grep -Eq "^bpfprof: $what" "$T/err" &&
	   [ ! -e "$T/denied.folded" ] && ! ls -A "$T" | grep -q '^\.denied'; then
		ok "$call() refused -> exit 1, no file: $(cat "$T/err")"
	else
		not_ok "$call() refused -> want exit 1, one line '$what', no file" "got $rc: $(head -3 "$T/err" | tr '\n' '|')"
	fi
done
left=$(bpf_unheld "$last")
check "bpf() or perf events refused: no bpfprof program left loaded (${left:-none})" '[ -z "$left" ]'

# Root without the capabilities (a container that drops them).
setpriv --inh-caps=-all --bounding-set=-bpf,-perfmon,-sys_admin "$BPFPROF" -d 1 > "$T/out" 2> "$T/err"
rc=$?
if [ $rc = 1 ] && [ "$(wc -l < "$T/err")" = 1 ] &&
   grep -q '^bpfprof: need CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN) to sample with BPF, which this root process lacks' "$T/err"; then
	ok "root without CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN -> exit 1: $(cat "$T/err")"
else
	not_ok "root without the capabilities -> want exit 1 and one line" "got $rc: $(cat "$T/err")"
fi

# Not root but with CAP_BPF and CAP_PERFMON: it samples, whatever
# perf_event_paranoid says (even 3, no perf events for the unprivileged);
# /proc/kallsyms shows such a process no addresses, and it says so at the
# first kernel frame (the syscall workload makes plenty).
start_workload syscall 3
paranoid=$(cat /proc/sys/kernel/perf_event_paranoid)
echo 3 > /proc/sys/kernel/perf_event_paranoid
chmod 755 "$T" && mkdir -m 777 "$T/nobody"
setpriv --reuid=65534 --regid=65534 --clear-groups --inh-caps=+bpf,+perfmon --ambient-caps=+bpf,+perfmon \
	"$BPFPROF" -d 1 -o "$T/nobody/caps.folded" > "$T/out" 2> "$T/err"
rc=$?
echo "$paranoid" > /proc/sys/kernel/perf_event_paranoid
if [ $rc = 0 ] && [ -n "$(folded_total "$T/nobody/caps.folded")" ] &&
   grep -q "^bpfprof: warning: cannot read '/proc/kallsyms'.*kernel frames stay unnamed" "$T/err"; then
	ok "nobody with CAP_BPF and CAP_PERFMON, perf_event_paranoid 3 -> exit 0, a valid profile, the kallsyms warning"
else
	not_ok "nobody with CAP_BPF and CAP_PERFMON -> want exit 0 and a profile" "got $rc: $(head -2 "$T/err" | tr '\n' '|')"
fi

# Not root: as nobody, with no capabilities.
if setpriv --reuid=65534 --regid=65534 --clear-groups "$BPFPROF" -d 1 > "$T/out" 2> "$T/err"; then
	rc=0
else
	rc=$?
fi
if [ $rc = 1 ] && grep -q 'run as root' "$T/err" && [ "$(wc -l < "$T/err")" = 1 ]; then
	ok "as nobody -> exit 1: $(cat "$T/err")"
else
	not_ok "as nobody -> want exit 1 and 'run as root'" "got $rc: $(cat "$T/err")"
fi

# Help and version go to stdout, exit 0.
"$BPFPROF" --help > "$T/help" 2>&1
check "--help: exit 0, usage on stdout" 'grep -q "^Usage: bpfprof" "$T/help"'
"$BPFPROF" -V > "$T/version" 2>&1
check "-V: exit 0, the version" 'grep -Eq "^bpfprof [0-9]+\.[0-9]+\.[0-9]+\$" "$T/version"'

# --help lists the subcommands the man page's SYNOPSIS has, each with a --help of its own.
subcommands_of_help() { "$BPFPROF" --help | sed -n '/^Subcommands:/,$p' | sed -n 's/^  \([a-z][a-z]*\)\( .*\)\{0,1\}$/\1/p'; }
subcommands_of_man() { sed -n '/^\.SH SYNOPSIS/,/^\.SH [A-Z]/p' src/bpfprof.8 | sed -n 's/^\.B bpfprof \([a-z][a-z]*\)$/\1/p'; }
subs=$(subcommands_of_help | tr '\n' ' ')
check "--help and the man page's SYNOPSIS name the same subcommands (${subs:-none}in --help; $(subcommands_of_man | tr '\n' ' ')in the man page)" \
	'[ -n "$subs" ] && [ "$(subcommands_of_help)" = "$(subcommands_of_man)" ]'
for sub in $subs; do
	"$BPFPROF" $sub --help > "$T/sub.help" 2> "$T/sub.err"
	rc=$?
	check "bpfprof $sub --help: exit $rc, its usage on stdout, nothing on stderr" \
		'[ $rc = 0 ] && grep -Eq "^Usage: bpfprof $sub( |\$)" "$T/sub.help" && [ ! -s "$T/sub.err" ]'
done

# --help and the man page (the option reference; the README links to it)
# name the same options, short and long, taken from their option columns only.
options_of_help() { "$BPFPROF" --help | grep -E '^ +-' | cut -c1-30 | grep -oE -- '--?[A-Za-z][a-z-]*' | sort -u; }
options_of_man() {
	sed -n '/^\.SH OPTIONS/,/^\.SH [A-Z]/p' src/bpfprof.8 | grep -A1 '^\.TP' | grep '^\.BR' |
		sed 's/\\-/-/g; s/\\f[A-Z]//g' | cut -d'"' -f1-4 | grep -oE -- '--?[A-Za-z][a-z-]*' | sort -u
}
options_of_help > "$T/help.opts"
options_of_man > "$T/man.opts"
n=$(wc -l < "$T/help.opts")
if [ "$n" -gt 30 ] && diff -u "$T/help.opts" "$T/man.opts" > "$T/d1"; then
	ok "--help and the man page list the same $n option spellings"
else
	not_ok "--help and the man page differ ($n spellings in --help, more than 30 wanted)"; diag "$T/d1"
fi
