#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# A Debian root newer than the host, for the runtimes the host's release
# has no version of: OpenJDK 21 and 25, Python 3.13, Ruby 3.3, PHP 8.4.
# Their binaries need a newer libc than bookworm's, hence a whole root, run
# with tests/tools/in_root.sh (chroot: their pids stay the host's).
#
# Built once per machine, in a cache outside the clone, since it takes
# minutes and some 1 GB: $BPFPROF_TEST_CACHE/newer-root (default
# /var/cache/bpfprof-test). Trixie holds all of these (sid has no ruby3.3
# for long; trixie's python is 3.13). A stamp written last says the root is
# whole, so a build that was cut short is built again; it names the
# packages, so a root built with other ones is built again too. A lock
# keeps two test runs from building it at once: the second waits, then
# finds it built.
#
# With "sid", a second root, sid-root beside it, of what only sid has:
# python3.14, and sid's python3.13 (GCC 16 splits its eval loop in a hot
# and a cold part, which trixie's GCC 14 build does not; see
# docs/research/containers.md). Its own stamp, lock and log (sid-root.*).
#
# Prints the root's path on stdout and one line on stderr: what it built, or
# that the root was there. Exits non-zero with a one-line reason when it
# cannot build it (not root, no debootstrap, no network). Its build's log is
# $BPFPROF_TEST_CACHE/newer-root.log (sid-root.log). The build itself is
# tests/tools/debian_root.sh's, which any other root (bullseye's) uses too.
#
# usage: tests/tools/newer_root.sh [trixie|sid]   (root; BPFPROF_TEST_CACHE, BPFPROF_TEST_MIRROR)
set -u
cd "$(dirname "$0")/../.." || exit 1

case ${1:-trixie} in
trixie) exec tests/tools/debian_root.sh newer-root trixie \
	openjdk-21-jdk-headless openjdk-25-jdk-headless python3.13 ruby3.3 php8.4-cli ;;
sid) exec tests/tools/debian_root.sh sid-root sid python3.14 python3.13 ;;
*)
	echo "newer_root: no root named '$1' (trixie or sid)" >&2
	exit 1
	;;
esac
