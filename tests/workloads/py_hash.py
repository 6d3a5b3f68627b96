# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Python over OpenSSL: hashing() hashes a 64 MiB buffer with hashlib.sha256
# (the GIL released, the work in libcrypto) for SECONDS.
#
# usage: python3 py_hash.py SECONDS
import hashlib
import sys
import time

BUF = bytes(64 << 20)


def hashing():
    return hashlib.sha256(BUF).hexdigest()


def main():
    end = time.monotonic() + float(sys.argv[1])
    while time.monotonic() < end:
        hashing()


main()
