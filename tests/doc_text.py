#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-2-Clause OR GPL-2.0-only
"""Reads the docs' text for e2e/docs and e2e/examples, one line per finding.

usage: doc_text.py versions FILE...   each "CPython 3.10 to 3.13"-like phrase: FILE<TAB>PHRASE
       doc_text.py prose FILE...      FILE:LINE<TAB>what is wrong: a paragraph cut short, a
                                      sentence said twice (anywhere in the files given)
       doc_text.py examples FILE...   each command example: FILE:LINE<TAB>COMMAND

Markdown: code blocks (``` fenced or indented 4) and inline code spans; the man page
(*.8): its EXAMPLES section. An example is a code-block line starting with "$ " (or,
in a block with no such line, one starting with a command this project documents),
an inline span that is a whole command (bpfprof with an argument, go tool pprof
with a file, curl, systemctl, awk on a file), or a line of the man page's EXAMPLES.
"""
import re
import sys

PRODUCTS = r"(?:CPython|LuaJIT|CRuby|OpenJDK|PHP)"
VERSION = r"[0-9]+(?:\.[0-9]+)?"
VERSION_PHRASE = re.compile(PRODUCTS + " " + VERSION + "(?:(?:,| to| and| or) " + VERSION + ")*")
COMMANDS = re.compile(r"^(sudo |bpfprof |go tool pprof|curl |systemctl |journalctl |make |"
                      r"flamegraph\.pl |ExecStart=/)")
INLINE = re.compile(r"^(sudo )?(bpfprof (-|diff \S|runtimes)|go tool pprof -\S+ \S|curl \S|"
                    r"systemctl \S|awk '.* \S+$)")


def text_of(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    if path.endswith(".c"):
        # A C file's words to users: its string literals, joined as the compiler joins them.
        text = "".join(re.findall(r'"((?:[^"\\\n]|\\.)*)"', text))
    if path.endswith(".8"):
        text = text.replace("\\-", "-").replace("\\(em", "-")
        text = re.sub(r"^\.[A-Z]+ ?", "", text, flags=re.M)
        text = re.sub(r"\\f[BIRP]", "", text)
    return text


def versions(paths):
    for p in paths:
        for m in VERSION_PHRASE.finditer(re.sub(r"\s+", " ", text_of(p))):
            print(f"{p}\t{m.group(0)}")


def markdown_blocks(lines):
    """(kind, first line number, lines): 'code' blocks and 'text' paragraphs."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("```"):
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            out.append(("code", i + 2, lines[i + 1:j]))
            i = j + 1
        elif line.startswith("    ") and (i == 0 or not lines[i - 1].strip()):
            j = i
            while j < len(lines) and (lines[j].startswith("    ") or not lines[j].strip()):
                j += 1
            block = [l[4:] for l in lines[i:j]]
            while block and not block[-1].strip():
                block.pop()
            out.append(("code", i + 1, block))
            i = j
        elif line.strip():
            j = i
            while j < len(lines) and lines[j].strip() and not lines[j].startswith("```"):
                j += 1
            out.append(("text", i + 1, lines[i:j]))
            i = j
        else:
            i += 1
    return out


def prose(paths):
    seen = {}
    for p in paths:
        if p.endswith(".8"):
            continue
        for kind, n, block in markdown_blocks(text_of(p).split("\n")):
            if kind != "text" or block[0].lstrip()[0] in "#|<!" or block[0].startswith("![") or \
               re.match(r"^\s*(-|\d+\.) ", block[0]):
                continue
            para = " ".join(l.strip() for l in block)
            if not re.search(r"[.:!?)]$|[.:!?]\)$|\.\*\*$", para):
                print(f"{p}:{n}\tends without a full stop: ...{para[-70:]}")
            for s in re.split(r"(?<=[.:;!?])\s+", para):
                if len(s) < 60:
                    continue
                if s in seen and seen[s] != (p, n):
                    print(f"{p}:{n}\tsaid again (first at {seen[s][0]}:{seen[s][1]}): {s[:70]}...")
                seen.setdefault(s, (p, n))


def examples(paths):
    for p in paths:
        text = text_of(p)
        if p.endswith(".8"):
            m = re.search(r"^EXAMPLES\n(.*?)^SEE ALSO", text, flags=re.M | re.S)
            lines = m.group(1).split("\n") if m else []
            start = text[:m.start(1)].count("\n") + 1 if m else 0
            for k, l in enumerate(lines):
                if l.strip() and not l.startswith("."):
                    print(f"{p}:{start + k}\t{l.strip()}")
            continue
        for kind, n, block in markdown_blocks(text.split("\n")):
            if kind == "code":
                prompt = any(l.startswith("$ ") for l in block)
                for k, l in enumerate(block):
                    if prompt and l.startswith("$ "):
                        print(f"{p}:{n + k}\t{l[2:].strip()}")
                    elif not prompt and COMMANDS.match(l):
                        print(f"{p}:{n + k}\t{l.strip()}")
            else:
                para = " ".join(l.strip() for l in block)
                for span in re.findall(r"`([^`]+)`", para):
                    if INLINE.match(span):
                        print(f"{p}:{n}\t{span}")


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("versions", "prose", "examples"):
        sys.exit(__doc__)
    globals()[sys.argv[1]](sys.argv[2:])
