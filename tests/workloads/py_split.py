# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# A Python workload with a known split: alpha and beta call the same work()
# 2n and n times, in rounds (alpha twice, then beta once), for SECONDS. It
# measures the thread CPU time it spends inside each, and at its end
# prints "alpha_ns BETA_NS": the split a profiler should find, whatever
# the CPU and however loaded the machine. With GO_FILE, once READY_FILE is
# written it waits for GO_FILE and only then runs and measures: a profiler
# started meanwhile sees the very window measured.
#
# usage: python3 py_split.py SECONDS [READY_FILE [GO_FILE]]
import sys
import time


def work():
    s = 0
    for i in range(40000):
        s = (s * 31 + i) & 0xFFFF
    return s


def alpha():
    work()
    work()


def beta():
    work()


def wait_for(path):
    while True:
        try:
            open(path).close()
            return
        except OSError:
            time.sleep(0.02)


def main():
    seconds = float(sys.argv[1])
    if len(sys.argv) > 2:
        open(sys.argv[2], "w").close()
    if len(sys.argv) > 3:
        wait_for(sys.argv[3])
    clock = time.thread_time_ns
    spent = {"alpha": 0, "beta": 0}
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        t0 = clock()
        alpha()
        t1 = clock()
        beta()
        t2 = clock()
        spent["alpha"] += t1 - t0
        spent["beta"] += t2 - t1
    print(spent["alpha"], spent["beta"])


main()
