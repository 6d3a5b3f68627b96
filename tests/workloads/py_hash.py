# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Python over OpenSSL: hashing() hashes a 64 MiB buffer with hashlib.sha256
# (the GIL released, the work in libcrypto) for SECONDS; with READY_FILE and
# GO_FILE, it writes the first once loaded and starts once the second exists.
#
# usage: python3 py_hash.py SECONDS [READY_FILE GO_FILE]
import hashlib
import sys
import time

BUF = bytes(64 << 20)


def hashing():
    return hashlib.sha256(BUF).hexdigest()


def main():
    if len(sys.argv) > 3:
        open(sys.argv[2], "w").close()
        while True:
            try:
                open(sys.argv[3]).close()
                break
            except OSError:
                time.sleep(0.02)
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        hashing()


main()
