# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# -o as root: a new file beside the target, 0644, the sudo user's, renamed
# over whatever another user planted at the path, never through it; devices,
# FIFOs and symlinks root made (/dev/null, /dev/stdout) written where they
# lead, never replaced.
. tests/lib.sh

# A directory anybody may write, as /tmp (sticky), and a file of another user's.
mkdir -m 1777 "$T/pub"
chmod 755 "$T"
echo "the victim's own bytes" > "$T/victim"
chown 65533:65533 "$T/victim"
chmod 600 "$T/victim"
before="$(stat -c '%u:%g %a %s' "$T/victim") $(md5sum < "$T/victim")"
nobody() { setpriv --reuid=65534 --regid=65534 --clear-groups "$@"; }

# 1. nobody plants symlinks at the names root will write, under sudo for uid 65534.
nobody ln -s "$T/victim" "$T/pub/out.folded"
nobody ln -s "$T/victim" "$T/pub/out.svg"
(umask 077; SUDO_UID=65534 SUDO_GID=65534 $BPFPROF -F 99 -d 0.5 -o "$T/pub/out.folded" \
	-o "$T/pub/out.svg" 2> "$T/sudo.err")
rc=$?
after="$(stat -c '%u:%g %a %s' "$T/victim") $(md5sum < "$T/victim")"
check "a planted symlink: exit 0" '[ $rc = 0 ]'
check "a planted symlink is not followed: the victim is unchanged ($before)" '[ "$before" = "$after" ]'
check "the symlinks were replaced by regular files" \
	'[ -f "$T/pub/out.folded" ] && [ ! -L "$T/pub/out.folded" ] && [ ! -L "$T/pub/out.svg" ]'
check "the folded file is whole" "awk -f tests/check_folded.awk '$T/pub/out.folded' > /dev/null"
for f in out.folded out.svg; do
	got=$(stat -c '%a %u:%g' "$T/pub/$f")
	check "$f: mode 0644 under umask 077, owned by SUDO_UID:SUDO_GID (got $got)" '[ "$got" = "644 65534:65534" ]'
done
check "no temporary file is left" "! ls -A '$T/pub' | grep -q '^\.'"

# Not under sudo: root's, 0644.
$BPFPROF -F 99 -d 0.3 -o "$T/root.folded" 2> /dev/null
got=$(stat -c '%a %u:%g' "$T/root.folded")
check "without SUDO_UID: mode 0644, root's (got $got)" '[ "$got" = "644 0:0" ]'
# A SUDO_UID that is no number is not acted on.
SUDO_UID=x SUDO_GID=65534 $BPFPROF -F 99 -d 0.3 -o "$T/bad-sudo.folded" 2> /dev/null
got=$(stat -c '%u:%g' "$T/bad-sudo.folded")
check "SUDO_UID=x: the file stays root's (got $got)" '[ "$got" = "0:0" ]'

# A symlink root made is followed: the file it leads to is replaced, the link kept.
echo old > "$T/real.folded"
ln -s "$T/real.folded" "$T/link.folded"
$BPFPROF -F 99 -d 0.3 -o "$T/link.folded" 2> /dev/null
check "a symlink root made: followed, the link kept, the file it leads to written whole" \
	"[ -L '$T/link.folded' ] && awk -f tests/check_folded.awk '$T/real.folded' > /dev/null"

# 2. A FIFO nobody planted is replaced too; one root made is written into.
nobody mkfifo "$T/pub/planted.folded"
timeout 10 $BPFPROF -F 99 -d 0.3 -o "$T/pub/planted.folded" 2> /dev/null
check "a FIFO another user planted is replaced by a file (no hang)" '[ -f "$T/pub/planted.folded" ]'
mkfifo "$T/fifo"
cat "$T/fifo" > "$T/from-fifo" &
timeout 10 $BPFPROF -F 99 -d 0.3 -o "$T/fifo" 2> /dev/null
wait $!
check "a FIFO root made is written into and stays a FIFO" \
	"[ -p '$T/fifo' ] && awk -f tests/check_folded.awk '$T/from-fifo' > /dev/null"

# 3. Devices and /dev/stdout, in a mount namespace with a /dev of its own:
# a mistake here must not cost the machine its /dev/null.
cat > "$T/dev.sh" <<EOF
mount -t tmpfs tmpfs /dev && mknod -m 666 /dev/null c 1 3 && mknod /dev/blk b 7 0 &&
	ln -s /proc/self/fd/1 /dev/stdout || exit 99
$BPFPROF -F 99 -d 0.3 -o /dev/null 2> /dev/null; echo "null \$? \$(stat -c %F /dev/null)"
$BPFPROF -F 99 -d 0.3 -o /dev/stdout 2> /dev/null | awk -f tests/check_folded.awk > /dev/null
echo "pipe \${PIPESTATUS[0]} \$? \$(stat -c %F /dev/stdout)"
$BPFPROF -F 99 -d 0.3 -o /dev/stdout > $T/via-stdout.folded 2> /dev/null
echo "file \$? \$(awk -f tests/check_folded.awk $T/via-stdout.folded > /dev/null && echo whole)"
$BPFPROF -F 99 -d 0.3 -o /dev/blk 2>&1 >/dev/null | tr -d '\n'; echo " \${PIPESTATUS[0]}"
echo "left \$(ls -A /dev | grep -c '^\.')"
EOF
unshare -m --propagation private bash "$T/dev.sh" > "$T/dev.out" 2>&1
check "-o /dev/null: exit 0, still a character device" 'grep -qx "null 0 character special file" "$T/dev.out"'
check "-o /dev/stdout to a pipe: exit 0, a whole profile, the symlink kept" \
	'grep -qx "pipe 0 0 symbolic link" "$T/dev.out"'
check "-o /dev/stdout to a file: exit 0, the file whole" 'grep -qx "file 0 whole" "$T/dev.out"'
check "-o a block device: refused before sampling" \
	'grep -qx "bpfprof: cannot write to '\''/dev/blk'\'': it is a block device; give a file name 1" "$T/dev.out"'
check "no temporary file left in /dev" 'grep -qx "left 0" "$T/dev.out"'
if grep -qv '^\(null\|pipe\|file\|left\|bpfprof\)' "$T/dev.out"; then diag "$T/dev.out"; fi
