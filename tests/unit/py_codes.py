# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# For test_python_code: code objects of every shape bpfprof names, as
# Python sees them; then a stack held still for the test to walk.
#
# Made here: nested qualified names, methods, lambdas, generators, names
# and file names of each str kind (ASCII, Latin-1, 2 and 4 bytes a
# character), a name longer than bpfprof reads, lines far apart going
# forward and back. Then every code object of the functions the
# interpreter holds once a few stdlib modules are imported (deep-frozen
# ones from 3.11 on among them). Runs on 3.8 and later.
#
# Prints "CODE id id(type) firstlineno qualname file" (the two strings as
# hex UTF-8) for each, followed by its co_lines() as "LINE id start end
# line" (-1: no line); "STR id" of a str; then, from inside a call chain
# that went through Python calls, a C call and a generator, the thread's
# state ("TSTATE addr") and its frames newest first as "FRAME code_id
# f_lasti line" (f_lasti in bytes; -1 for the newest, sleeping on the line
# given); then "READY pid", and sleeps there to be read.
import ctypes
import dis
import gc
import os
import sys
import time

FAR = "\n" * 300
LONG = "n" * 1500

SOURCES = {
    "/tmp/bpfprof-unit/plain.py": f"""
def plain(n):
    s = 0
    for i in range(n):
        s += i
    return s

class Klass:
    def method(self):
        return 1

    class Inner:
        def deep(self):
            return [x * 2 for x in range(3)]

def outer():
    def inner():
        return 1
    return inner

lam = lambda x: x + 1

def gen():
    yield 1
    yield 2

def far_apart():
    a = 1{FAR}
    b = 2
    for i in range(3):
        a += i{FAR}
    return a + b

def back_and_forth(add):
    total = add(
        1,{FAR}
        2)
    while total < 10:{FAR}
        total += 1
    return total

def {LONG}():
    pass
""",
    # Latin-1: a compact str of one byte a character that is not ASCII.
    "/tmp/bpfprof-unit/café/naïve.py": """
def café():
    return 1

class Größe:
    def über(self):
        return 2
""",
    "/tmp/bpfprof-unit/函数/模块.py": """
def 函数(a):
    return a

class 类:
    def 方法(self):
        return lambda: 1
""",
    # Names are NFKC-normalized: CJK Extension B stays 4 bytes a character.
    "/tmp/bpfprof-unit/ñ/函数/𠀀.py": """
def 函数_𠀀(a):
    return a

class 𠀀类:
    def 𠀁(self):
        return 1
""",
    # A control character, which the reader shows as U+FFFD.
    "/tmp/bpfprof-unit/tab\there.py": """
def tabbed():
    return 1
""",
}

# The stack the test walks: Python calls (one spread over lines), a C call
# (map), a generator; warmed up first so the interpreter's specialized
# forms of the calls are the ones held.
STACK = """
import sys, time

def leaf(stop, report):
    if stop:
        report(sys._getframe())
        time.sleep(600)
    return 1

def middle(stop, report):
    return leaf(
        stop,
        report)

def gen(stop, report):
    yield middle(stop, report)

def via_gen(stop, report):
    for x in gen(stop, report):
        return x

class Holder:
    def via_c(self, stop, report):
        return list(map(lambda s: via_gen(s, report), [stop]))[0]

def run(report):
    for i in range(300):
        Holder().via_c(False, report)
    Holder().via_c(True, report)
"""

seen = set()


def lines(code):
    """co_lines() (3.10 on); before, the ranges dis.findlinestarts gives from co_lnotab."""
    if hasattr(code, "co_lines"):
        return code.co_lines()
    starts = list(dis.findlinestarts(code))
    ends = [start for start, _ in starts[1:]] + [len(code.co_code)]
    return [(start, end, line) for (start, line), end in zip(starts, ends)]


def emit(code):
    if id(code) in seen:
        return
    seen.add(id(code))
    q = getattr(code, "co_qualname", code.co_name)
    print("CODE", id(code), id(type(code)), code.co_firstlineno, q.encode().hex(),
          code.co_filename.encode().hex())
    for start, end, line in lines(code):
        print("LINE", id(code), start, end, -1 if line is None else line)
    for c in code.co_consts:
        if isinstance(c, type(code)):
            emit(c)


def report(frame):
    """Prints the stack from frame on (its newest), then READY."""
    tstate = ctypes.pythonapi.PyThreadState_Get
    tstate.restype = ctypes.c_void_p
    print("TSTATE", tstate())
    f, newest = frame, True
    while f:
        emit(f.f_code)
        # The newest frame sleeps on the line after report()'s call.
        print("FRAME", id(f.f_code), -1 if newest else f.f_lasti, f.f_lineno + newest)
        f, newest = f.f_back, False
    print("READY", os.getpid(), flush=True)


kept = [compile(source, name, "exec") for name, source in SOURCES.items()]  # alive to be read
for code in kept:
    emit(code)
import argparse, json, typing, dataclasses, email.message  # noqa: E401,F401
for obj in gc.get_objects():
    if type(obj).__name__ == "function":
        emit(obj.__code__)
print("STR", id(LONG))  # a str: no code object
stack = {}
exec(compile(STACK, "/tmp/bpfprof-unit/stack.py", "exec"), stack)
stack["run"](report)
