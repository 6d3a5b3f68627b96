# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# One process of a storm of short ones: storm_fn runs Python code for 0.15 s
# of its thread's CPU, then the process ends. The tests run its text with
# `python -c "$(cat py_storm.py)"`, so that its frames are <string>'s and
# the interpreter's start and end are as short as a one-liner's.
import time


def storm_fn():
    end = time.thread_time() + 0.15
    s = 0
    while time.thread_time() < end:
        for i in range(1000):
            s = (s * 31 + i) & 0xFFFF


storm_fn()
