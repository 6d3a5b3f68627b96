# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# The README's mixed flame graph: Python functions over pure-Python work and
# over C libraries (OpenSSL's SHA-256, zlib), run for SECONDS (default 6).
import hashlib
import sys
import time
import zlib


def render_row(i):
    return "|".join(f"{i * k:>8}" for k in range(12))


def render_report(rows):
    return "\n".join(render_row(i) for i in range(rows))


def checksum(data):
    return hashlib.sha256(data).hexdigest()


def compress(data):
    return zlib.compress(data, 1)


def handle_request(n):
    report = render_report(200).encode()
    blob = report * 40
    return checksum(blob), len(compress(blob[: len(blob) // 8]))


def main():
    end = time.monotonic() + float(sys.argv[1] if len(sys.argv) > 1 else 6)
    n = 0
    while time.monotonic() < end:
        handle_request(n)
        n += 1


if __name__ == "__main__":
    main()
