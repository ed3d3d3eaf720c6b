#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_semantics.py — docs/semantics.md lists every failure message the code has, and nothing else.

1. Every sp_fail(status, format, ...) call of dispatch/*.c and adapters/*.c
   has its format (each branch of a ?: format too) matched by a message of
   the file's rejection tables (| rule | example | status | message |), with
   the same status; placeholders such as {isa} count as any value.
2. Every message of those tables matches some format of the code with the
   same status (a documented message whose code is gone fails).
3. Every "docs/semantics.md#<anchor>" reference in the tree's sources and
   documents names a heading of the file (GitHub's anchor rule; headings
   must be unique), and README.md and include/simdpool.h point to the file.

Usage: check_semantics.py SOURCE_ROOT
Exit status 0 when all hold, 1 otherwise.
"""

import glob
import os
import re
import sys

DOC = "docs/semantics.md"
SOURCES = ["dispatch/*.c", "adapters/*.c"]
REFS = ["README.md", "docs/*.md", "bench/README.md"] + [
    d + "/**/*." + e for d in ("include", "dispatch", "kernels", "adapters",
                               "tests", "bench", "examples", "cmake")
    for e in ("c", "h", "cc", "cpp", "inc", "py")]
MUST_CITE = ["README.md", "include/simdpool.h"]

STATUSES = {"SIMDPOOL_OK": "OK", "SIMDPOOL_INVALID_ARGUMENT": "INVALID_ARGUMENT",
            "SIMDPOOL_UNSUPPORTED": "UNSUPPORTED",
            "SIMDPOOL_OUT_OF_MEMORY": "OUT_OF_MEMORY"}
CONVERSION = re.compile(r"%(?:\.\d+)?(zu|lld|d|g|s|%)")


def doc_messages(text):
    """(status, message, line number) of every rejection table row."""
    rows, in_table, header = [], False, None
    for number, line in enumerate(text.splitlines(), 1):
        if not line.startswith("|"):
            in_table, header = False, None
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not in_table:
            in_table, header = True, cells
            continue
        if header != ["rule", "example", "status", "message"] or \
                set(line) <= set("|- "):
            continue
        message = cells[3]
        if message.startswith("`") and message.endswith("`"):
            message = message[1:-1]
        rows.append((cells[2], message, number))
    return rows


def c_string_literals(expr):
    """The string literals of a C expression, adjacent ones joined: one
    entry per format (two for `cond ? "a" : "b"`)."""
    groups, current, i = [], None, 0
    while i < len(expr):
        ch = expr[i]
        if ch == '"':
            j, piece = i + 1, []
            while expr[j] != '"':
                if expr[j] == "\\":
                    piece.append(expr[j:j + 2])
                    j += 2
                else:
                    piece.append(expr[j])
                    j += 1
            text = "".join(piece).encode().decode("unicode_escape")
            current = (current or "") + text
            i = j + 1
        elif ch.isspace():
            i += 1
        else:
            if current is not None:
                groups.append(current)
                current = None
            i += 1
    if current is not None:
        groups.append(current)
    return groups


def split_arguments(args):
    """Top-level comma-separated arguments of a call's argument text."""
    parts, depth, start, i, in_string = [], 0, 0, 0, False
    while i < len(args):
        ch = args[i]
        if in_string:
            if ch == "\\":
                i += 1
            elif ch == '"':
                in_string = False
        elif ch == '"':
            in_string = True
        elif ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
        elif ch == "," and depth == 0:
            parts.append(args[start:i])
            start = i + 1
        i += 1
    parts.append(args[start:])
    return parts


def sp_fail_formats(path):
    """(status, format, line) of every sp_fail call of a C file."""
    with open(path, encoding="utf-8") as f:
        text = f.read()
    text = re.sub(r"/\*.*?\*/", lambda m: " " * len(m.group(0)), text,
                  flags=re.S)
    found = []
    for m in re.finditer(r"\bsp_fail\s*\(", text):
        i, depth, in_string = m.end(), 1, False
        while depth:
            ch = text[i]
            if in_string:
                if ch == "\\":
                    i += 1
                elif ch == '"':
                    in_string = False
            elif ch == '"':
                in_string = True
            elif ch == "(":
                depth += 1
            elif ch == ")":
                depth -= 1
            i += 1
        args = split_arguments(text[m.end():i - 1])
        status = args[0].strip()
        if status not in STATUSES:  # the declaration or the definition
            continue
        line = text.count("\n", 0, m.start()) + 1
        for fmt in c_string_literals(args[1]):
            found.append((STATUSES[status], fmt, line))
    return found


def format_regex(fmt):
    """A printf format as a regex matching what it can print; a {name}
    placeholder of the file stands for any value, so it matches too."""
    out, pos = [], 0
    for m in CONVERSION.finditer(fmt):
        out.append(re.escape(fmt[pos:m.start()]))
        kind = m.group(1)
        out.append({"zu": r"(?:\d+|\{[^}]+\})", "lld": r"(?:-?\d+|\{[^}]+\})",
                    "d": r"(?:-?\d+|\{[^}]+\})", "g": r".+?",
                    "s": r".+?", "%": "%"}[kind])
        pos = m.end()
    out.append(re.escape(fmt[pos:]))
    return re.compile("".join(out) + r"\Z", re.S)


def slug(heading):
    """GitHub's anchor of a Markdown heading."""
    s = heading.strip().lower()
    s = re.sub(r"[^\w\- ]", "", s)
    return s.replace(" ", "-")


def expand(root, patterns):
    paths = []
    for pattern in patterns:
        paths += sorted(glob.glob(os.path.join(root, pattern), recursive=True))
    return paths


def main():
    if len(sys.argv) != 2:
        print(__doc__)
        return 2
    root = sys.argv[1]

    class Args:
        doc = os.path.join(root, DOC)
        sources = expand(root, SOURCES)
        refs = expand(root, REFS)
        must_cite = expand(root, MUST_CITE)
    args = Args
    with open(args.doc, encoding="utf-8") as f:
        doc = f.read()
    failed = False

    messages = doc_messages(doc)
    formats = [(st, fmt, path, line) for path in args.sources
               for st, fmt, line in sp_fail_formats(path)]
    if not messages or not formats:
        print("FAIL: %d documented messages, %d sp_fail formats: nothing to "
              "compare" % (len(messages), len(formats)))
        return 1
    regexes = [(st, format_regex(fmt), fmt, path, line)
               for st, fmt, path, line in formats]
    for st, rx, fmt, path, line in regexes:
        if not any(st == mst and rx.match(msg) for mst, msg, _ in messages):
            failed = True
            print("FAIL %s:%d: %s \"%s\" is in no rejection table of %s"
                  % (path, line, st, fmt, args.doc))
    for mst, msg, number in messages:
        if not any(st == mst and rx.match(msg)
                   for st, rx, _, _, _ in regexes):
            failed = True
            print("FAIL %s:%d: %s \"%s\" is no sp_fail message of the code"
                  % (args.doc, number, mst, msg))
    print("%d sp_fail formats in %d files, %d documented messages: %s"
          % (len(formats), len(args.sources), len(messages),
             "each side covers the other" if not failed else "they differ"))

    headings = [slug(m.group(1))
                for m in re.finditer(r"^#+\s+(.*)$", doc, flags=re.M)]
    anchors = set(headings)
    for dup in sorted({h for h in headings if headings.count(h) > 1}):
        failed = True
        print("FAIL %s: two headings have the anchor #%s" % (args.doc, dup))
    cited, refs = set(), 0
    for path in sorted(set(args.refs + args.must_cite)):
        with open(path, encoding="utf-8") as f:
            text = f.read()
        if "docs/semantics.md" in text or "semantics.md" in text:
            cited.add(path)
        for m in re.finditer(r"semantics\.md#([\w-]+)", text):
            refs += 1
            if m.group(1) not in anchors:
                failed = True
                line = text.count("\n", 0, m.start()) + 1
                print("FAIL %s:%d: docs/semantics.md#%s names no heading"
                      % (path, line, m.group(1)))
    for path in args.must_cite:
        if path not in cited:
            failed = True
            print("FAIL %s does not point to docs/semantics.md" % path)
    print("%d references to docs/semantics.md#... in %d files: %s"
          % (refs, len(set(args.refs + args.must_cite)),
             "all resolve" if not failed else "see above"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
