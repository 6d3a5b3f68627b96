# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# Threads, each with its own Python stack for SECONDS: spinner() runs
# Python code, hasher() a C call with the GIL released (hashlib on a large
# buffer), compressor() another (zlib); the main thread waits in join().
#
# usage: python3 py_threads.py SECONDS
import hashlib
import sys
import threading
import time
import zlib

BUF = bytes(32 << 20)
END = time.monotonic() + float(sys.argv[1])


def spinner():
    s = 0
    while time.monotonic() < END:
        for i in range(1000):
            s = (s * 31 + i) & 0xFFFF


def hasher():
    while time.monotonic() < END:
        hashlib.sha256(BUF).digest()


def compressor():
    while time.monotonic() < END:
        zlib.compress(BUF[: 4 << 20], 1)


threads = [threading.Thread(target=f) for f in (spinner, hasher, compressor)]
for t in threads:
    t.start()
for t in threads:
    t.join()
