#!/usr/bin/env bash
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
#
# Ruby 3.3 built static, as ruby-build and rbenv build it by default
# (--disable-shared): the `ruby` executable holds the VM, so ruby_current_ec
# is a TLS variable of the executable itself (local-exec, %fs:OFFSET), not of
# a libruby. The source is Debian's ruby3.3 source package (trixie), fetched
# with apt-get source through a sources list of this script's own; the build
# runs on bookworm with bookworm's compiler and libraries, the host's ruby3.1
# as BASERUBY.
#
# Built once per machine, in a cache outside the clone, since it takes
# minutes: $BPFPROF_TEST_CACHE/ruby-static (default /var/cache/bpfprof-test).
# A stamp written last says the build is whole and names what was asked for,
# so a build cut short or made with other options is made again. A lock
# keeps two test runs from building it at once: the second waits, then
# finds it built. Debian's tarball has no bundled gems (they would be
# downloaded): gems/bundled_gems is emptied. Extensions no workload uses are
# left out (WITHOUT_EXT) to save build time; digest, zlib and openssl stay.
# No YJIT: configure would build it with whatever rustc is on PATH (none
# on a plain Debian 12), so builds would differ by machine; YJIT's own
# case is tested on Debian's ruby3.1.
#
# Prints the ruby executable's path on stdout and one line on stderr: what it
# built, or that it was there. Exits non-zero with a one-line reason when it
# cannot build it (not root, no compiler, no network). The build's log is
# $BPFPROF_TEST_CACHE/ruby-static.log.
#
# usage: tests/tools/static_ruby.sh   (root; BPFPROF_TEST_CACHE, BPFPROF_TEST_MIRROR)
set -u

SUITE=trixie
PKG=ruby3.3
WITHOUT_EXT=ripper,nkf,syslog,win32,win32ole,bigdecimal,objspace,-test-,psych,fiddle,pty,continuation,coverage
CONFIGURE="--disable-shared --disable-yjit --disable-install-doc --without-gmp --with-out-ext=$WITHOUT_EXT"
CACHE=${BPFPROF_TEST_CACHE:-/var/cache/bpfprof-test}
PREFIX=$CACHE/ruby-static
BUILD=$CACHE/ruby-static.build
STAMP=$CACHE/ruby-static.done
LOG=$CACHE/ruby-static.log
WANT="suite=$SUITE package=$PKG configure=$CONFIGURE"

fail() {
	echo "static_ruby: $*" >&2
	exit 1
}

# The stamp's first line is what was asked for, its second how the build went.
have_ruby() {
	[ -f "$STAMP" ] && [ "$(head -1 "$STAMP")" = "$WANT" ] && [ -x "$PREFIX/bin/ruby" ]
}
there() {
	echo "$PREFIX/bin/ruby"
	echo "static_ruby: $PREFIX/bin/ruby was there ($(sed -n 2p "$STAMP"))" >&2
	exit 0
}

have_ruby && there
[ "$(id -u)" = 0 ] || fail "building $PREFIX needs root"
# (libssl-dev and zlib1g-dev for the extensions the workloads use: make deps)
for tool in gcc make apt-get ruby3.1 xz; do
	command -v $tool > /dev/null || fail "no $tool (make deps)"
done
mkdir -p "$CACHE" || fail "cannot create $CACHE"
exec 9> "$CACHE/ruby-static.lock"
flock 9 || fail "cannot lock $CACHE/ruby-static.lock"
have_ruby && there

mirror=${BPFPROF_TEST_MIRROR:-$(cat /etc/apt/sources.list /etc/apt/sources.list.d/*.list \
	/etc/apt/sources.list.d/*.sources 2> /dev/null |
	grep -oE 'https?://[^ ]+/debian/?( |$)' | head -1 | tr -d ' ')}
mirror=${mirror:-http://deb.debian.org/debian}

rm -f "$STAMP"
rm -rf "$PREFIX" "$BUILD" || fail "cannot remove the earlier $PREFIX or $BUILD"
mkdir -p "$BUILD/lists/partial" || fail "cannot create $BUILD"

start=$(date +%s)
(
	set -e
	cd "$BUILD"
	echo "# $(date -u +%FT%TZ): $PKG's source from $SUITE at $mirror"
	# A sources list of this build's own: the host's apt state is left alone.
	echo "deb-src ${mirror%/} $SUITE main" > sources.list
	apt=(-o Dir::Etc::sourcelist="$BUILD/sources.list" -o Dir::Etc::sourceparts=-
		-o Dir::State::Lists="$BUILD/lists" -o Acquire::Check-Valid-Until=false)
	apt-get "${apt[@]}" update
	apt-get "${apt[@]}" source --download-only "$PKG"
	tar xf "$PKG"_*.orig.tar.*
	cd ruby-*/
	: > gems/bundled_gems
	./configure --prefix="$PREFIX" --with-baseruby=/usr/bin/ruby3.1 $CONFIGURE
	make -j"$(nproc)"
	make install
	cd "$BUILD"
	rm -rf ruby-*/
) > "$LOG" 2>&1
# (not "( ... ) || fail": set -e does nothing in a subshell whose status is tested)
# The reason: apt's first complaint, else the build's last error.
[ $? = 0 ] || fail "the build failed: $(grep -m1 -E '^(E|W): ' "$LOG" ||
	grep -E 'rror|failed' "$LOG" | tail -1) (log: $LOG)"
"$PREFIX/bin/ruby" -e 'exit 0' || fail "$PREFIX/bin/ruby does not run (log: $LOG)"

secs=$(($(date +%s) - start))
version=$("$PREFIX/bin/ruby" -e 'print RUBY_VERSION')
summary="built $(date -u +%FT%TZ) in $secs s on $(nproc) CPUs, Ruby $version, $(du -sh "$PREFIX" | cut -f1)"
echo "# $summary" >> "$LOG"
{ printf '%s\n%s\n' "$WANT" "$summary" > "$STAMP.tmp" && mv "$STAMP.tmp" "$STAMP"; } ||
	fail "cannot write $STAMP"
echo "$PREFIX/bin/ruby"
echo "static_ruby: $PREFIX/bin/ruby $summary" >&2
