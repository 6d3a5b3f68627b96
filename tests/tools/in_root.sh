#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Runs CMD chrooted into ROOT (a root tests/tools/newer_root.sh built), with
# /proc, /sys and /dev mounted inside and each DIR given with -b bind-mounted
# at the same path, so the paths a test writes (classes, ready files) are
# the same on both sides. The root's /tmp is a tmpfs of the run's own, so
# the mount points made for DIRs under /tmp leave nothing in the root.
#
# Plain chroot, not systemd-nspawn: nspawn always gives its payload a PID
# namespace of its own, and the tests profile it from the host by its pid
# (bpfprof -p PID). Here the process keeps the host's pid namespace and pid:
# every step execs the next (this script, unshare, sh, chroot), so
# `tests/tools/in_root.sh ROOT java ... &` leaves $! the JVM's pid.
#
# The mounts are made in a mount namespace of the command's own (unshare -m,
# private propagation): they end with it, however it ends, the host never
# sees them (nor could an rm -rf of the root follow them into the host's
# /dev), and two runs in the same root at once do not unmount each other's.
# The host reaches the process's files through /proc/PID/root as for any
# chrooted process.
#
# usage: tests/tools/in_root.sh [-b DIR]... ROOT CMD [ARG...]   (root)
set -u

binds=()
while [ $# -gt 0 ]; do
	case $1 in
	-b) binds+=("$(realpath -e "$2")") || exit 1; shift 2 ;;
	*) break ;;
	esac
done
if [ $# -lt 2 ]; then
	echo "usage: $0 [-b DIR]... ROOT CMD [ARG...]" >&2
	exit 2
fi
root=$(realpath -e "$1") || exit 1
shift
if [ "$(id -u)" != 0 ]; then
	echo "in_root: chroot and mount need root" >&2
	exit 1
fi

# The inner script's arguments: ROOT, the number of DIRs, the DIRs, CMD....
exec unshare --mount --propagation private sh -ec '
	root=$1 n=$2
	shift 2
	mount -t proc proc "$root/proc"
	mount --rbind /sys "$root/sys"
	mount --rbind /dev "$root/dev"
	mount -t tmpfs tmpfs "$root/tmp"
	while [ "$n" -gt 0 ]; do
		mkdir -p "$root$1"
		mount --bind "$1" "$root$1"
		n=$((n - 1))
		shift
	done
	exec chroot "$root" "$@"
' in_root "$root" ${#binds[@]} "${binds[@]}" "$@"
