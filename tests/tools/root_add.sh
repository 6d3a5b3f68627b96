#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Installs PKGs into ROOT, a root tests/tools/newer_root.sh built, once per
# build of it: for packages one test wants beyond the root's own list
# (LuaJIT for e2e/containers), without changing that list, whose stamp
# would have every run with the old list build the root again while other
# runs are in it.
#
# ROOT.added says what was added, and to which build: its first line is
# the second line of newer_root.sh's stamp ROOT.done (when and how the root
# was built), its second the packages. A root built again has a new
# ROOT.done, so nothing counts as added to it until this adds it again. The
# lock is newer_root.sh's (ROOT.lock): an install never meets a build.
#
# Prints one line on stderr: what it added, or that it was there. Exits
# non-zero with a one-line reason when it cannot (not root, no root built,
# no network); the install's log is ROOT.log, newer_root.sh's.
#
# usage: tests/tools/root_add.sh ROOT PKG...   (root)
set -u
cd "$(dirname "$0")/../.." || exit 1

fail() {
	echo "root_add: $*" >&2
	exit 1
}
[ $# -ge 2 ] || { echo "usage: $0 ROOT PKG..." >&2; exit 2; }
ROOT=${1%/}
shift
PKGS="$*"
DONE=$ROOT.done
ADDED=$ROOT.added
LOG=$ROOT.log

# The packages asked for that ADDED does not name for this build of the root.
missing() {
	local p
	for p in $PKGS; do
		[ -f "$ADDED" ] && [ "$(head -1 "$ADDED")" = "$(sed -n 2p "$DONE")" ] &&
			sed -n 2p "$ADDED" | tr ' ' '\n' | grep -qxF "$p" || printf '%s ' "$p"
	done
}

[ -f "$DONE" ] && [ -x "$ROOT/usr/bin/apt-get" ] || fail "$ROOT: no root built there (tests/tools/newer_root.sh)"
if [ -z "$(missing)" ]; then
	echo "root_add: $PKGS in $ROOT was there" >&2
	exit 0
fi
[ "$(id -u)" = 0 ] || fail "installing into $ROOT needs root"
exec 9> "$ROOT.lock"
flock 9 || fail "cannot lock $ROOT.lock"
add=$(echo $(missing))	# again: another run may have added them meanwhile
if [ -n "$add" ]; then
	# The root's package lists were removed after its build: fetched again, removed again.
	(
		echo "# $(date -u +%FT%TZ): root_add $add"
		tests/tools/in_root.sh "$ROOT" apt-get -o Acquire::Check-Valid-Until=false update || exit 1
		tests/tools/in_root.sh "$ROOT" env DEBIAN_FRONTEND=noninteractive \
			apt-get install -y --no-install-recommends $add || exit 1
		tests/tools/in_root.sh "$ROOT" apt-get clean
		rm -rf "$ROOT"/var/lib/apt/lists/*
	) >> "$LOG" 2>&1 || fail "installing $add failed: $(grep -E '^(E|W): ' "$LOG" | tail -1) (log: $LOG)"
	# What was added to this build before, with what is added now.
	before=
	[ -f "$ADDED" ] && [ "$(head -1 "$ADDED")" = "$(sed -n 2p "$DONE")" ] && before=$(sed -n 2p "$ADDED")
	{ printf '%s\n%s\n' "$(sed -n 2p "$DONE")" "$(echo $before $add)" > "$ADDED.tmp" &&
		mv "$ADDED.tmp" "$ADDED"; } || fail "cannot write $ADDED"
fi
echo "root_add: $PKGS in $ROOT${add:+ (added $add)}" >&2
