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
expect_error 2 "--unwind 'lbr': unknown; give fp \\(frame pointers\\) or dwarf" --unwind lbr
expect_error 2 "--stack-size 1000 is out of range" --stack-size 1000
expect_error 2 "--stack-size 5000 is not a multiple of 1024" --stack-size 5000
expect_error 2 "-f 'flame': unknown format; give folded, pprof, callgrind or svg" -f flame
expect_error 2 "-o $T/x.svg is named like svg output but -f says pprof; rename it or drop -f" \
	-f pprof -o "$T/x.svg"
expect_error 2 "-o $T/a.folded is given twice" -o "$T/a.folded" -o "$T/a.folded"

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
check "--help: exit 0, usage on stdout" grep -q '^Usage: bpfprof' "$T/help"
"$BPFPROF" -V > "$T/version" 2>&1
check "-V: exit 0, the version" grep -Eq '^bpfprof [0-9]+\.[0-9]+\.[0-9]+$' "$T/version"

# --help, the man page and the README's option table name the same options
# (short and long), taken from their option columns only.
options_of_help() { "$BPFPROF" --help | grep -E '^ +-' | cut -c1-30 | grep -oE -- '--?[A-Za-z][a-z-]*' | sort -u; }
options_of_man() {
	sed -n '/^\.SH OPTIONS/,/^\.SH [A-Z]/p' src/bpfprof.8 | grep -A1 '^\.TP' | grep '^\.BR' |
		sed 's/\\-/-/g; s/\\f[A-Z]//g' | cut -d'"' -f1-4 | grep -oE -- '--?[A-Za-z][a-z-]*' | sort -u
}
options_of_readme() {
	sed -n '/^### Options/,/^## /p' README.md | grep '^| `' | awk -F'|' '{ print $2 }' |
		grep -oE -- '--?[A-Za-z][a-z-]*' | sort -u
}
options_of_help > "$T/help.opts"
options_of_man > "$T/man.opts"
options_of_readme > "$T/readme.opts"
n=$(wc -l < "$T/help.opts")
if [ "$n" -gt 30 ] && diff -u "$T/help.opts" "$T/man.opts" > "$T/d1" && diff -u "$T/help.opts" "$T/readme.opts" > "$T/d2"; then
	ok "--help, the man page and the README list the same $n option spellings"
else
	not_ok "--help, the man page and the README differ ($n spellings in --help)"; diag "$T/d1"; diag "$T/d2"
fi
