#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A Debian root of any suite holding the given packages, run with
# tests/tools/in_root.sh: newer_root.sh's roots (see there for why a
# whole root) are built here, and e2e/python's bullseye root for its
# python3.9 (`debian_root.sh bullseye-root bullseye python3.9`): a CPython
# older than any bookworm has, from Debian itself. Built once per machine
# in a cache outside the clone; a stamp written last says the root is
# whole (a build cut short is built again) and names the suite and
# packages (a root built with other ones is built again too); a lock keeps
# two test runs from building it at once: the second waits, then finds it
# built.
#
# Cached as $BPFPROF_TEST_CACHE/NAME, with NAME.done (the stamp: the suite
# and packages asked for, then how the build went), NAME.lock and NAME.log.
# Prints the root's path on stdout and one line on stderr; exits non-zero
# with a one-line reason when it cannot build it.
#
# usage: tests/tools/debian_root.sh NAME SUITE PACKAGE...   (root; BPFPROF_TEST_CACHE, BPFPROF_TEST_MIRROR)
set -u
cd "$(dirname "$0")/../.." || exit 1

if [ $# -lt 3 ]; then
	echo "usage: $0 NAME SUITE PACKAGE..." >&2
	exit 2
fi
NAME=$1 SUITE=$2
shift 2
PKGS="$*"
CACHE=${BPFPROF_TEST_CACHE:-/var/cache/bpfprof-test}
ROOT=$CACHE/$NAME
STAMP=$CACHE/$NAME.done
LOG=$CACHE/$NAME.log
WANT="suite=$SUITE packages=$PKGS"

fail() {
	echo "debian_root: $NAME: $*" >&2
	exit 1
}

# The stamp's first line is what was asked for, its second how the build went.
# A stamp without its root (deleted by hand) is no root.
have_root() {
	[ -f "$STAMP" ] && [ "$(head -1 "$STAMP")" = "$WANT" ] && [ -x "$ROOT/usr/bin/apt-get" ]
}

if have_root; then
	echo "$ROOT"
	echo "debian_root: $ROOT was there ($(sed -n 2p "$STAMP"))" >&2
	exit 0
fi
[ "$(id -u)" = 0 ] || fail "building $ROOT needs root"
command -v debootstrap > /dev/null || fail "no debootstrap (apt-get install debootstrap, or make deps)"
mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 9> "$CACHE/$NAME.lock"
flock 9 || fail "cannot lock $CACHE/$NAME.lock"
# Another run may have built it while this one waited.
if have_root; then
	echo "$ROOT"
	echo "debian_root: $ROOT was there ($(sed -n 2p "$STAMP"))" >&2
	exit 0
fi

# The host's own Debian mirror (the one apt is set to use), unless told.
mirror=${BPFPROF_TEST_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources 2> /dev/null |
	grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ')}
mirror=${mirror:-http://deb.debian.org/debian}
if command -v curl > /dev/null &&
	! curl -fsS -m 30 -o /dev/null "${mirror%/}/dists/$SUITE/Release" 2> /dev/null; then
	fail "cannot reach ${mirror%/}/dists/$SUITE/Release (no network?)"
fi

# A half-built root first: nothing of it can be mounted (in_root.sh mounts in
# a namespace of its own), but say so rather than delete through a mount.
rm -f "$STAMP"
if [ -e "$ROOT" ]; then
	grep -q " $ROOT/" /proc/mounts && fail "something is mounted under $ROOT; unmount it first"
	rm -rf --one-file-system "$ROOT" || fail "cannot remove the half-built $ROOT"
fi

start=$(date +%s)
(
	echo "# $(date -u +%FT%TZ): debootstrap $SUITE from $mirror"
	debootstrap --variant=minbase "$SUITE" "$ROOT" "$mirror" || exit 1
	# No manuals, docs or translations: a third of the size, none of it run.
	cat > "$ROOT/etc/dpkg/dpkg.cfg.d/01-bpfprof-test" <<-'EOF'
		path-exclude=/usr/share/man/*
		path-exclude=/usr/share/doc/*
		path-include=/usr/share/doc/*/copyright
		path-exclude=/usr/share/locale/*
		path-exclude=/usr/share/info/*
	EOF
	# No daemon starts inside a root that is only run command by command.
	printf '#!/bin/sh\nexit 101\n' > "$ROOT/usr/sbin/policy-rc.d"
	chmod +x "$ROOT/usr/sbin/policy-rc.d"
	cp /etc/resolv.conf "$ROOT/etc/resolv.conf"
	# The JDKs' postinst runs java, which wants /proc: in_root.sh mounts it.
	tests/tools/in_root.sh "$ROOT" env DEBIAN_FRONTEND=noninteractive \
		apt-get -o Acquire::Check-Valid-Until=false install -y --no-install-recommends $PKGS || exit 1
	tests/tools/in_root.sh "$ROOT" apt-get clean
	rm -rf "$ROOT"/var/lib/apt/lists/*
) > "$LOG" 2>&1 || fail "the build failed: $(grep -E '^(E|W): |^[A-Z]:|failed|Failed' "$LOG" | tail -1) (log: $LOG)"

secs=$(($(date +%s) - start))
size=$(du -sh --one-file-system "$ROOT" | cut -f1)
summary="built $(date -u +%FT%TZ) in $secs s, $size, $SUITE from $mirror"
echo "# $summary" >> "$LOG"
{ printf '%s\n%s\n' "$WANT" "$summary" > "$STAMP.tmp" && mv "$STAMP.tmp" "$STAMP"; } ||
	fail "cannot write $STAMP"
echo "$ROOT"
echo "debian_root: $ROOT $summary: $PKGS" >&2
