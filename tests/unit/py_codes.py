# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
# For test_python_code: code objects of every shape bpfprof names (nested
# qualified names, methods, lambdas, generators, names and a file name of
# 1-, 2- and 4-byte characters, lines far apart and going back), each
# printed with its id, its type's id, its first line, its qualified name
# and file (hex UTF-8) and its co_lines(); then "READY" and its pid, and a wait to be
# read from.
import os
import sys
import time

far = "\n" * 300
SOURCE = f"""
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

def 函数_𠀀(a):
    return a

def far_apart():
    a = 1{far}
    b = 2
    for i in range(3):
        a += i{far}
    return a + b
"""


def codes(code):
    yield code
    for c in code.co_consts:
        if hasattr(c, "co_lines"):
            yield from codes(c)


name = "/tmp/bpfprof-unit/ñ/函数/𠀀.py"
top = compile(SOURCE, name, "exec")
exec(top, {})
for c in codes(top):
    q = getattr(c, "co_qualname", c.co_name)
    print("CODE", id(c), id(type(c)), c.co_firstlineno, q.encode().hex(), c.co_filename.encode().hex())
    for start, end, line in c.co_lines():
        print("LINE", id(c), start, end, -1 if line is None else line)
print("STR", id(name))
print("READY", os.getpid(), flush=True)
time.sleep(120)  # killed by the test once read
