#!/usr/bin/python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Where javac's samples are, by javac package, from JFR and from bpfprof (e2e/java_javac).

usage: javac_packages.py jfr FILE THREAD
       javac_packages.py folded FILE COMM

jfr: FILE is `jfr print --stack-depth 64 --events jdk.ExecutionSample REC.jfr`'s
text; only the samples of the Java thread named THREAD count. folded: FILE is
bpfprof's collapsed stacks (root first, the thread's comm the first frame, the
count last); only the stacks whose first frame is COMM count.

Each sample goes to the package of its innermost frame of a class in
com.sun.tools.javac: the first name after "com.sun.tools.javac." (comp for
com.sun.tools.javac.comp.Attr.attribTree, code for a lambda's hidden class
com.sun.tools.javac.code.ClassFinder$$Lambda$124/0x... as well); "(top)" for a
class of com.sun.tools.javac itself (Main); samples with no such frame count
as "(none)". Prints, one per line:

    samples N       the thread's samples
    java N          of them, with a Java frame (a frame "... (File.java:LINE)";
                    in JFR every frame is Java's, so every sample with frames)
    javac N         of them, with a frame of com.sun.tools.javac
    pkg NAME N      of those, with their innermost such frame in package NAME

folded adds the same figures over the samples taken in Java code, as JFR's
jdk.ExecutionSample are (it samples a thread only while its state is "in
Java"; in native code, a JNI call or the kernel, or in the VM's own C++, it
does not): those whose innermost frame, past the kernel's (NAME_[k]), is a
Java frame, a hidden class's (a lambda's), "[java: ...]" or one of the VM's
stubs, "[jvm: ...]":

    injava N        the thread's samples in Java code
    injavac N       of them, with a frame of com.sun.tools.javac
    jpkg NAME N     of those, with their innermost such frame in package NAME

A strict reader: any line it does not know the shape of ends it, with the
line, and status 1; so does a file with no sample of THREAD or COMM.
"""
import re
import sys

JAVAC = "com.sun.tools.javac."
# A folded Java frame, as bpfprof names it: "pkg.Class.method (File.java:LINE)".
FOLDED_JAVA = re.compile(r"\.java:[0-9]+\)$")
# A frame of code in Java's thread state "in Java": a Java method's, a hidden class's
# ("pkg.Class$$Lambda$12/0x00007f4e90101d68.get"), one not read, a stub of the VM's.
IN_JAVA = re.compile(r"\.java:[0-9]+\)$|^[^ ]+/0x[0-9a-f]+\.[^ ]+$|^\[java: .*\]$|^\[jvm: .*\]$")


def die(msg):
    sys.stderr.write("javac_packages.py: %s\n" % msg)
    sys.exit(1)


def package(frame):
    """The javac package of a frame (its qualified method name first), or None."""
    if not frame.startswith(JAVAC):
        return None
    rest = frame[len(JAVAC):].split(" ", 1)[0].split("(", 1)[0]
    parts = rest.split(".")
    if len(parts) < 2 or not parts[0]:
        die("a frame of com.sun.tools.javac with no class and method: %r" % frame)
    if len(parts) == 2:
        return "(top)"  # com.sun.tools.javac.Main.compile
    if not re.fullmatch(r"[a-z][a-z0-9_]*", parts[0]):
        return "(top)" if parts[0][:1].isupper() else die("a javac package not read: %r" % frame)
    return parts[0]


class Tally:
    def __init__(self):
        self.samples = 0
        self.java = 0
        self.javac = 0
        self.pkgs = {}

    def add(self, frames_innermost_first, n, java):
        self.samples += n
        if java:
            self.java += n
        for f in frames_innermost_first:
            p = package(f)
            if p is not None:
                self.javac += n
                self.pkgs[p] = self.pkgs.get(p, 0) + n
                return
        self.pkgs["(none)"] = self.pkgs.get("(none)", 0) + n

    def show(self, what, prefix=""):
        if self.samples == 0:
            die("no sample of %s" % what)
        print("%s %d" % (prefix and "injava" or "samples", self.samples))
        if not prefix:
            print("java %d" % self.java)
        print("%sjavac %d" % (prefix, self.javac))
        for p, n in sorted(self.pkgs.items(), key=lambda kv: (-kv[1], kv[0])):
            if p != "(none)":
                print("%spkg %s %d" % (prefix and "j", p, n))


# jfr print's text for jdk.ExecutionSample, JDK 17 to 25:
#   jdk.ExecutionSample {
#     startTime = 11:18:37.002
#     sampledThread = "main" (javaThreadId = 1)
#     state = "STATE_RUNNABLE"
#     stackTrace = [
#       java.lang.Boolean.valueOf(String) line: 194
#       java.lang.ClassLoader.defineClass2(ClassLoader, String, ...)     (native: no line)
#       ...                                                              (cut at --stack-depth)
#     ]
#   }
# innermost frame first.
JFR_FIELD = re.compile(r"  ([A-Za-z]+) = (.*)")
JFR_THREAD = re.compile(r'"(.*)" \(javaThreadId = [0-9]+(, virtual)?\)')
JFR_FRAME = re.compile(r"    ([^ (]+)\((.*)\)( line: -?[0-9]+)?( bci: [0-9]+)?")


def read_jfr(path, thread):
    t = Tally()
    state = "between"
    fields = {}
    frames = []
    with open(path, encoding="utf-8") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")

            def bad(why):
                die("%s:%d: %s: %r" % (path, no, why, line))

            if state == "between":
                if line == "":
                    continue
                if line != "jdk.ExecutionSample {":
                    bad("not the start of a jdk.ExecutionSample")
                state, fields, frames = "event", {}, None
            elif state == "event":
                if line == "}":
                    for k in ("startTime", "sampledThread", "state"):
                        if k not in fields:
                            bad("an event with no %s" % k)
                    if frames is None:
                        bad("an event with no stackTrace")
                    m = JFR_THREAD.fullmatch(fields["sampledThread"])
                    if not m:
                        bad("a sampledThread not read: %r" % fields["sampledThread"])
                    if m.group(1) == thread:
                        t.add(frames, 1, bool(frames))
                    state = "between"
                    continue
                m = JFR_FIELD.fullmatch(line)
                if not m:
                    bad("not a field of the event")
                k, v = m.group(1), m.group(2)
                if k in fields or (k == "stackTrace" and frames is not None):
                    bad("a field twice")
                if k == "stackTrace":
                    if v == "[":
                        frames = []
                        state = "stack"
                    elif v == "null":
                        frames = []
                    else:
                        bad("a stackTrace not read")
                else:
                    fields[k] = v
            elif state == "stack":
                if line == "  ]":
                    state = "event"
                elif line == "    ...":
                    pass  # cut at --stack-depth: the outermost frames
                else:
                    m = JFR_FRAME.fullmatch(line)
                    if not m:
                        bad("not a frame")
                    frames.append(m.group(1))
    if state != "between":
        die("%s: ends inside an event" % path)
    t.show('thread "%s" in %s' % (thread, path))


def read_folded(path, comm):
    t = Tally()
    tj = Tally()
    line_re = re.compile(r"(.+) ([0-9]+)")
    with open(path, encoding="utf-8", errors="strict") as f:
        for no, line in enumerate(f, 1):
            line = line.rstrip("\n")
            m = line_re.fullmatch(line)
            if not m or m.group(1).startswith(";") or ";;" in m.group(1):
                die("%s:%d: not a folded line: %r" % (path, no, line))
            frames = m.group(1).split(";")
            if frames[0] != comm:
                continue
            frames = frames[1:]
            java = any(FOLDED_JAVA.search(fr) for fr in frames)
            inner = list(reversed(frames))
            t.add(inner, int(m.group(2)), java)
            user = [fr for fr in inner if not fr.endswith("_[k]")]
            if user and IN_JAVA.search(user[0]):
                tj.add(inner, int(m.group(2)), java)
    t.show("comm %s in %s" % (comm, path))
    tj.show("comm %s in Java code in %s" % (comm, path), "in")


def main():
    if len(sys.argv) != 4 or sys.argv[1] not in ("jfr", "folded"):
        die("usage: javac_packages.py jfr FILE THREAD | folded FILE COMM")
    (read_jfr if sys.argv[1] == "jfr" else read_folded)(sys.argv[2], sys.argv[3])


if __name__ == "__main__":
    main()
