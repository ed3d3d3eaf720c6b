#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_readme.py — README.md must show each example named on the command line verbatim
(examples/readme_*.c), so that no README example can rot: the build compiles and runs them.

Usage: check_readme.py README.md EXAMPLE.c [EXAMPLE.c ...]
"""
import sys

readme, examples = sys.argv[1], sys.argv[2:]
with open(readme, encoding="utf-8") as f:
    text = f.read()
missing = []
for example in examples:
    with open(example, encoding="utf-8") as f:
        code = f.read()
    # The README shows the file without its opening comments (the SPDX line
    # and the one that says what the file is for, which may wrap).
    lines = code.split("\n")
    while lines and lines[0].startswith("/*"):
        while lines and not lines[0].rstrip().endswith("*/"):
            lines.pop(0)
        if lines:
            lines.pop(0)
    body = "\n".join(lines).strip()
    if "```c\n" + body + "\n```" not in text:
        missing.append(example)
if missing:
    for example in missing:
        print(f"README.md does not contain {example} verbatim")
    sys.exit(1)
print(f"README.md shows {len(examples)} example(s) verbatim")
