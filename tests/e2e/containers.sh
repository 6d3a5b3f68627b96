# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Runtimes in containers of another Debian (issue 35): each case runs one
# runtime's workload from a Debian root built once per machine
# (tests/tools/newer_root.sh), in a container of its own: systemd-nspawn,
# so a pid namespace and a mount namespace of its own, in a cgroup this test
# made for it. bpfprof, on the host, follows it by its host pid (-p) and
# must find there what it finds on the host: the split the workload measured
# (within 5 %), the runtime's frames in place of the interpreter's native
# ones (whole from _start, none left at the root), each function's file and
# first line, the build IDs of the root's files (not the host's), the host
# pid and the container's cgroup on every sample, and no runtime said to be
# not read. Each workload measures itself over the window profiled: it waits
# for $T/go, made once bpfprof samples; bpfprof -p stops when it ends.
#
# Without systemd-nspawn (or where it cannot run), the same cases run
# chrooted (tests/tools/in_root.sh) in a cgroup made by hand: their own
# cgroup and root, the host's pids (NO_NSPAWN=1 runs them so here too).
# ONLY=REGEX runs the cases whose names it matches.
. tests/lib.sh
export HOME=$T	# go keeps a cache there

F=4999
SPLIT_S=6	# some 30,000 samples: 5 % is four standard deviations of a 2:1 split
PY_SPLIT_S=9	# py_split.py's SECONDS are wall-clock time, the others' CPU time
HASH_S=3

# The cases: NAME SUITE PKG BINARY WORKLOAD. SUITE names the root (trixie: newer_root.sh's;
# sid: a sid root's tool's, when there is one); PKG a package the root's own list lacks,
# added to it once (tests/tools/root_add.sh), or -; BINARY the runtime in the root;
# WORKLOAD what it runs (py_split, py_hash, rb_split, rb_threads, lua_split).
CASES=(
	"trixie-python3.13 trixie - /usr/bin/python3.13 py_split"
	"trixie-hashlib trixie - /usr/bin/python3.13 py_hash"
	"trixie-ruby3.3 trixie - /usr/bin/ruby3.3 rb_split"
	"trixie-rbdigest trixie - /usr/bin/ruby3.3 rb_threads"
	"trixie-luajit trixie luajit /usr/bin/luajit lua_split"
	"sid-python3.14 sid - /usr/bin/python3.14 py_split"
	"sid-python3.13 sid - /usr/bin/python3.13 py_split"
)

# The containers' cgroups, under one of this run's own; nspawn (--keep-unit) makes payload/ and
# supervisor/ in each, and their twins in the named systemd v1 hierarchy where one is mounted.
CGROUP_DIR=$CGROUP_ROOT/bpfprof-test-containers-$$
CG_REL=${CGROUP_DIR#"$CGROUP_ROOT"}
V1=/sys/fs/cgroup/systemd$CG_REL
mkdir "$CGROUP_DIR" || { not_ok "cannot make the cgroup $CGROUP_DIR"; exit 0; }
# lib.sh's cleanup removes CGROUP_DIR; the v1 twins go once the processes have.
trap 'cleanup; [ -d "$V1" ] && find "$V1" -depth -type d -exec rmdir {} + 2> /dev/null; :' EXIT
[ -n "${KEEP:-}" ] && trap - EXIT

# root_for SUITE: the root's path, or nothing (its tool's last line in $T/root.err).
root_for() {
	case $1 in
	trixie) tests/tools/newer_root.sh ;;
	sid)
		if [ -x tests/tools/sid_root.sh ]; then
			tests/tools/sid_root.sh
		elif grep -qE '^[[:space:]]*sid\)' tests/tools/newer_root.sh; then
			tests/tools/newer_root.sh sid
		else
			echo "no tool builds a sid root here" >&2
			return 1
		fi
		;;
	esac 2> "$T/root.err"
}
# is_suite ROOT SUITE: the root is that Debian (trixie is 13; sid's debian_version says sid).
is_suite() {
	case $2 in
	trixie) grep -q '^13\.' "$1/etc/debian_version" ;;
	sid) grep -q 'sid' "$1/etc/debian_version" ;;
	esac
}

# systemd-nspawn's options (USE_NSPAWN: 1 where it runs here; empty: chroot instead). Read-only,
# as runs of this test at once (plain and sanitized) share the root: nspawn locks a root it
# may write to.
NSPAWN=(systemd-nspawn -q --register=no --keep-unit --as-pid2 --read-only --resolv-conf=off --timezone=off)
# can_nspawn ROOT: a trial run in a cgroup of its own (the root's cgroup is nobody's to fill).
can_nspawn() {
	command -v systemd-nspawn > /dev/null || { echo "no systemd-nspawn" > "$T/nspawn.err"; return 1; }
	mkdir -p "$CGROUP_DIR/trial"
	(echo $BASHPID > "$CGROUP_DIR/trial/cgroup.procs" && exec "${NSPAWN[@]}" -D "$1" /bin/true) \
		< /dev/null > "$T/nspawn.err" 2>&1
}

# start_in NAME ROOT CMD...: CMD in ROOT, in a container in cgroup $CGROUP_DIR/NAME, stdout
# NAME.out, stderr NAME.wl; CMD gets $T/NAME.ready and $T/go last (the handshake) and $T is
# the same path inside. Returns once NAME.ready exists; sets CPID (the container's process
# here, to wait for), HPID (the workload's pid on the host) and NSPID (its pid inside).
start_in() {
	local name=$1 root=$2 cg=$CGROUP_DIR/$1 p i
	shift 2
	rm -f "$T/go" "$T/$name.ready"
	mkdir -p "$cg"
	if [ -n "$USE_NSPAWN" ]; then
		(echo $BASHPID > "$cg/cgroup.procs" &&
			exec "${NSPAWN[@]}" -D "$root" --bind="$T" "$@" "$T/$name.ready" "$T/go") \
			< /dev/null > "$T/$name.out" 2> "$T/$name.wl" &
	else
		(echo $BASHPID > "$cg/cgroup.procs" &&
			exec tests/tools/in_root.sh -b "$T" "$root" "$@" "$T/$name.ready" "$T/go") \
			< /dev/null > "$T/$name.out" 2> "$T/$name.wl" &
	fi
	CPID=$!
	BG_PIDS+=($CPID)
	while [ ! -e "$T/$name.ready" ] && kill -0 $CPID 2> /dev/null; do sleep 0.05; done
	HPID= NSPID=
	# The workload: chrooted, the exec chain's end ($!); in nspawn, pid 2 of its namespace.
	for i in 1 2 3; do
		for p in $(cat $(find "$cg" -name cgroup.procs) 2> /dev/null); do
			if [ -n "$USE_NSPAWN" ]; then
				[ "$(awk '/^NSpid:/ { print (NF > 2 ? $NF : "") }' /proc/$p/status 2> /dev/null)" = 2 ] || continue
			else
				[ "$p" = $CPID ] || continue
			fi
			HPID=$p
			NSPID=$(awk '/^NSpid:/ { print $NF }' /proc/$p/status)
		done
		[ -n "$HPID" ] && break
		sleep 0.1
	done
}

# profile NAME: bpfprof -p $HPID over the workload's window (folded and pprof), until $CPID (the
# container, or the chrooted workload) ends; sets RC and WL_RC.
profile() {
	PID=$CPID PROFILE_PID=$HPID profile_window "$1" -F $F -o "$T/$1.pb.gz"
}

# labels PPROF: "PID CGROUP SAMPLES" for each pid and cgroup label pair, as go tool pprof -raw reads them.
labels() {
	go tool pprof -raw "$1" 2> /dev/null | awk '
		/^Samples:/ { in_s = 1; next }
		/^Locations/ { in_s = 0 }
		function flush() { if (n) c[pid " " cg] += n; n = 0 }
		in_s && /^ +[0-9]+ +[0-9]+: / { flush(); n = $1; pid = "-"; cg = "-"; next }
		in_s && match($0, /pid:\[[0-9]+ /) { pid = substr($0, RSTART + 5, RLENGTH - 6) }
		in_s && match($0, /cgroup:\[[^]]*\]/) { cg = substr($0, RSTART + 8, RLENGTH - 9) }
		END { flush(); for (k in c) print k, c[k] }'
}
# mappings PPROF: "PATH BUILD_ID" of each mapping of a file with a build ID.
mappings() {
	go tool pprof -raw "$1" 2> /dev/null |
		awk '/^Mappings/ { m = 1; next } m && $4 ~ /^[0-9a-f]+$/ && $3 ~ /^\// { print $3, $4 }'
}
build_id() { readelf -n "$1" 2> /dev/null | sed -n 's/^ *Build ID: *//p'; }
# line_of FILE FUNCTION: the line where FUNCTION is defined (def NAME or local function NAME).
line_of() { grep -nE "^(def|local function) $2[ (]" "$1" | cut -d: -f1; }

# The workloads, copied where the container sees them at the same path.
W=$T/w
mkdir -p "$W"
cp tests/workloads/py_split.py tests/workloads/py_hash.py tests/workloads/rb_split.rb \
	tests/workloads/rb_threads.rb tests/workloads/rb_window.rb tests/workloads/lua_split.lua tests/workloads/lua_window.lua "$W/"

declare -A ROOTS
USE_NSPAWN=unknown
for c in "${CASES[@]}"; do
	read -r name suite pkg bin wl <<< "$c"
	[[ $name =~ ${ONLY:-.} ]] || continue
	if [ -z "${ROOTS[$suite]+x}" ]; then
		ROOTS[$suite]=$(root_for "$suite") && is_suite "${ROOTS[$suite]}" "$suite" || ROOTS[$suite]=
		[ -n "${ROOTS[$suite]}" ] || echo "# no $suite root: its cases skipped ($(tail -1 "$T/root.err"))"
	fi
	root=${ROOTS[$suite]}
	if [ -z "$root" ]; then
		ok "$name # SKIP no $suite root"
		continue
	fi
	if [ "$pkg" != - ] && ! tests/tools/root_add.sh "$root" "$pkg" 2> "$T/add.err"; then
		ok "$name # SKIP $pkg not in the $suite root: $(tail -1 "$T/add.err")"
		continue
	fi
	if [ ! -x "$root$bin" ]; then
		not_ok "$name: $bin not in the $suite root ($root)"
		continue
	fi
	if [ "$USE_NSPAWN" = unknown ]; then
		if [ -z "${NO_NSPAWN:-}" ] && can_nspawn "$root"; then
			USE_NSPAWN=1
		else
			USE_NSPAWN=
			echo "# not in systemd-nspawn (${NO_NSPAWN:+NO_NSPAWN set}$(tail -1 "$T/nspawn.err" 2> /dev/null)): chrooted, in a cgroup of its own"
		fi
	fi

	# Run and profile it.
	case $wl in
	py_hash) secs=$HASH_S ;;
	py_split) secs=$PY_SPLIT_S ;;
	*) secs=$SPLIT_S ;;
	esac
	case $wl in
	py_*) file=$wl.py ;;
	rb_*) file=$wl.rb ;;
	lua_*) file=$wl.lua ;;
	esac
	start_in "$name" "$root" "$bin" "$W/$file" "$secs"
	if [ -z "$HPID" ]; then
		not_ok "$name: the workload's pid not found in $CGROUP_DIR/$name"
		diag "$T/$name.wl"
		continue
	fi
	profile "$name"
	what="$name ($bin, pid $HPID, ${NSPID} inside)"
	folded=$T/$name.folded
	total=$(folded_total "$folded")
	FR="\\(${file//./\\.}:[0-9]+\\)"

	# The workload's own frames: whole from _start through the runtime's entry, none above _start.
	case $wl in
	py_*) entry="PyEval_EvalCode;<module> $FR" ;;
	rb_*) entry="ruby_run_node;(.*;)?<main> $FR" ;;
	lua_*) entry="lua_pcall;main chunk $FR" ;;
	esac
	own=$(sum_matching "$folded" "$FR")
	whole=$(sum_matching "$folded" "^[^;]*;_start;(.*;)?$entry(;|\$)")
	# rb_threads' two spinning threads start at libc's clone3, not _start (the root's libc, stripped,
	# names it only by its offset)
	thr=
	[ $wl = rb_threads ] && thr=" (its threads' from clone3)" && whole=$((whole + $(sum_matching "$folded" "^[^;]*;(__clone3|\[libc\.so\.6\+0x[0-9a-f]+\]);(.*;)?[^;]* $FR(;|\$)")))
	above=$(sum_matching "$folded" "^[^;]*;(.*;)?[^;]* $FR;(.*;)?_start(;|\$)")
	check "$what: $(share "$own" "$total")% of $total samples with $file's frames (>= 95 %), $(share "$whole" "$own")% of them whole from _start through '${entry//\\/}'$thr (>= 95 %), $above with one above _start (none)" \
		'[ "$RC" = 0 ] && [ "$WL_RC" = 0 ] && [ "${total:-0}" -gt 1000 ] && within "$(share "$own" "$total")" 95 100 && within "$(share "$whole" "$own")" 95 100 && [ "$above" = 0 ]'

	if [ "$wl" = py_hash ]; then
		# hashing()'s samples show the root's OpenSSL below it.
		in_hash=$(sum_matching "$folded" ";hashing $FR(;|\$)")
		openssl=$(sum_matching "$folded" ";hashing $FR;.*(libcrypto|SHA256|sha256|EVP_Digest)")
		check "$what: $(share "$openssl" "$in_hash")% of $in_hash samples in hashing() show OpenSSL's frames above it (>= 90 %)" \
			'[ "$in_hash" -gt 1000 ] && within "$(share "$openssl" "$in_hash")" 90 100'
	elif [ "$wl" = rb_threads ]; then
		# A C method under its Ruby caller: digest_it's samples show OpenSSL's digest above it.
		d=$(sum_matching "$folded" ";digest_it $FR(;|\$)")
		named=$(sum_matching "$folded" ";digest_it $FR;Digest::Instance#digest;(.*;)?OpenSSL::Digest#update;ossl_digest_update;")
		check "$what: $(share "$named" "$d")% of digest_it's $d samples show Digest::Instance#digest;..;OpenSSL::Digest#update;ossl_digest_update above it (>= 90 %)" \
			'[ "$d" -gt 500 ] && within "$(share "$named" "$d")" 90 100'
	else
		# The split, and alpha named with its file and first line in every sample.
		read -r a_ns b_ns < "$T/$name.out"
		want=$(ratio "$a_ns" "$b_ns")
		a=$(sum_matching "$folded" ";alpha $FR(;|\$)")
		b=$(sum_matching "$folded" ";beta $FR(;|\$)")
		if [ $((a + b)) -gt 10000 ] && near_pct "$a" "$b" "$want" 5; then
			ok "$what: alpha/beta = $(ratio "$a" "$b") in $a + $b samples, the workload measured $want (within 5 %; 4 sd $(ratio_spread "$a" "$b") %)"
		else
			not_ok "$what: alpha/beta = $(ratio "$a" "$b") ($a / $b samples of ${total:-unreadable}, rc $RC, workload rc $WL_RC), the workload measured $want"
			top "$folded"; diag "$T/$name.err"; diag "$T/$name.wl"
		fi
		la=$(line_of "$W/$file" alpha)
		lb=$(line_of "$W/$file" beta)
		a_line=$(sum_matching "$folded" ";alpha \\(${file//./\\.}:$la\\)(;|\$)")
		# pprof's lines of alpha's locations: where it was, in its body (after its first line, before beta's).
		go tool pprof -raw "$T/$name.pb.gz" 2> /dev/null |
			awk -v f="$W/$file" '$3 == "alpha" && index($4, f ":") == 1 { print substr($4, length(f) + 2) + 0 }' |
			sort -un > "$T/$name.alpha_lines"
		bad_lines=$(awk -v lo="$la" -v hi="$lb" '$1 < lo || $1 >= hi' "$T/$name.alpha_lines" | wc -l)
		check "$what: alpha's $a samples all as 'alpha ($file:$la)', its first line; pprof's lines of it in $W/$file: $(echo $(cat "$T/$name.alpha_lines")) (in $la..$((lb - 1)))" \
			'[ "$a" -gt 0 ] && [ "$a_line" = "$a" ] && [ -s "$T/$name.alpha_lines" ] && [ "$bad_lines" = 0 ]'
	fi

	# The labels: every sample the host pid's, in the container's cgroup.
	labels "$T/$name.pb.gz" > "$T/$name.labels"
	cg_want=$CG_REL/$name
	lab_all=$(awk '{ t += $3 } END { print t + 0 }' "$T/$name.labels")
	lab_ok=$(awk -v p="$HPID" -v c="$cg_want" '$1 == p && (index($2, c "/") == 1 || $2 == c) { t += $3 } END { print t + 0 }' "$T/$name.labels")
	check "$what: pprof's labels: $lab_ok of $lab_all samples pid $HPID (the host's pid) and cgroup $cg_want$([ -n "$USE_NSPAWN" ] && echo '/payload')" \
		'[ "$lab_all" -gt 1000 ] && [ "$lab_ok" = "$lab_all" ]'

	# The build IDs: of the root's files, as readelf reads them there; libc's is not the host's.
	mappings "$T/$name.pb.gz" > "$T/$name.maps"
	same=0 other=0 files=
	while read -r path id; do
		# As the container names it; chrooted, by the host's path (its root is a directory of ours).
		in_root=$root$path
		[ "${path#"$root"/}" != "$path" ] && in_root=$path
		[ -f "$in_root" ] || continue
		if [ "$(build_id "$in_root")" = "$id" ]; then
			same=$((same + 1)) files="$files ${path##*/}"
		else
			other=$((other + 1)) files="$files ${path##*/}(not the root's)"
		fi
	done < "$T/$name.maps"
	libc=$(awk '$1 ~ /\/libc\.so\.6$/ { print $2 }' "$T/$name.maps")
	host_libc=$(build_id /usr/lib/x86_64-linux-gnu/libc.so.6)
	check "$what: pprof's mappings have the root's build IDs:$files" \
		'[ "$same" -ge 2 ] && [ "$other" = 0 ] && [ -n "$libc" ] && [ "$libc" != "$host_libc" ]'

	# Read, and said to be: the summary's line, no runtime warned of, no sample of one not read.
	case $wl in
	py_*) rt=python ;;
	rb_*) rt=ruby ;;
	lua_*) rt=luajit ;;
	esac
	line=$(grep -m1 "^bpfprof: $rt: [0-9]* samples of" "$T/$name.err")
	unread=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) of a \(version\|version or build\|build\) not read.*/\1/p')
	# Its warnings: those naming a file it maps (bpfprof finds runtimes in every process).
	warned=$(cut -d' ' -f1 "$T/$name.maps" | while read -r path; do
		grep -F "'$path'" "$T/$name.err" | grep -E "^bpfprof: warning: (Python|Ruby|LuaJIT).*(not read|cannot read)"
	done | wc -l)
	# Python frames at the root only where the native stack is cut short (no _start: ld.so's
	# lazy-binding trampoline stops the native walk, docs/limits.md), never on a whole one.
	at_root=$(echo "$line" | sed -n 's/.* \([0-9][0-9]*\) with their Python frames at the root.*/\1/p')
	py_fr='\([^;()]+\.py:[0-9]+\)'
	cut=$(( $(sum_matching "$folded" "$py_fr") - $(sum_matching "$folded" "$py_fr;(.*;)?_start(;|\$)|;_start;(.*;)?[^;]* $py_fr") ))
	check "$what: read: '${line:0:90}...': ${unread:-?} samples of a version not read, $warned warnings${at_root:+, $at_root with their frames at the root ($cut with Python frames on a native stack cut short)}" \
		'[ -n "$line" ] && [ "$unread" = 0 ] && [ "$warned" = 0 ] && [ "${at_root:-0}" -le "$cut" ]'
	if [ "$rt" = luajit ]; then
		# Its fast functions' names from the container's own jit/vmdef.lua, not the host's.
		vmdef=$(sed -n "s|^bpfprof: LuaJIT fast functions' names: '\(/proc/$HPID/root/[^']*\)' matches the build|\1|p" "$T/$name.err" | head -1)
		check "$what: fast functions named from the root's vmdef.lua (${vmdef:-none of /proc/$HPID/root matched})" \
			'[ -n "$vmdef" ]'
	fi
done
