# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A Python program that scribbles on its own frame chain while it runs:
# victim() points the link to its caller's frame at MODE's garbage, spins
# for 50 ms, and puts the link back before it returns (the interpreter
# follows it only then). A profiler walking the chain meanwhile meets an
# unreadable address (fault) or memory that is no frame (junk).
#
# usage: python3 py_scribble.py SECONDS fault|junk
import ctypes
import gc
import sys
import time

# Where the link to the caller is: 3.8 to 3.10, PyFrameObject.f_back; later, the
# _PyInterpreterFrame's previous (3.11: 48, then 8), reached from the frame
# object's f_frame (24).
V = sys.version_info[:2]
JUNK = ctypes.create_string_buffer(b"\x5a" * 4096)


def link_address(frame):
    if V <= (3, 10):
        return id(frame) + 24
    iframe = ctypes.c_void_p.from_address(id(frame) + 24).value
    return iframe + (48 if V == (3, 11) else 8)


def victim(garbage):
    link = ctypes.c_void_p.from_address(link_address(sys._getframe()))
    saved = link.value
    link.value = garbage
    end = time.monotonic() + 0.05
    s = 0
    while time.monotonic() < end:
        for i in range(1000):
            s = (s * 31 + i) & 0xFFFF
    link.value = saved
    return s


def middle(garbage):
    return victim(garbage)


def outer(garbage):
    return middle(garbage)


def main():
    end = time.monotonic() + float(sys.argv[1])
    garbage = 0x10 if sys.argv[2] == "fault" else ctypes.addressof(JUNK) + 64
    gc.disable()  # the collector must not follow the scribbled link
    n = 0
    while time.monotonic() < end:
        outer(garbage)
        n += 1
    print(n)


main()
