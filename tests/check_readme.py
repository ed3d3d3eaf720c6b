#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_readme.py — README.md must show examples/readme_example.c verbatim (so the example cannot rot)."""
import sys

readme, example = sys.argv[1], sys.argv[2]
with open(readme, encoding="utf-8") as f:
    text = f.read()
with open(example, encoding="utf-8") as f:
    code = f.read()
# The README shows the file without its opening one-line comments (the
# SPDX line and the line that says what the file is for).
lines = code.split("\n")
while lines and lines[0].startswith("/*") and lines[0].rstrip().endswith("*/"):
    lines.pop(0)
body = "\n".join(lines).strip()
if "```c\n" + body + "\n```" not in text:
    print("README.md does not contain examples/readme_example.c verbatim")
    sys.exit(1)
print("README.md example matches examples/readme_example.c")
