#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""check_spdx.py — every source file of the tree carries an SPDX-License-Identifier: MIT line, then its one-line purpose.

Looks at the C, C++, Python, shell, Meson and CMake files under the source
root (build directories, subprojects and the fuzz corpus aside): the SPDX
line must be the first line (the second after a #! line), and a comment
must follow it (the line that says what the file is for; test files may put
a #define of a feature macro before it).

Usage: check_spdx.py SOURCE_ROOT
Exit status 0 when every file has both, 1 otherwise.
"""

import os
import re
import sys

TAG = "SPDX-License-Identifier: MIT"
SOURCE = re.compile(r"(\.(c|h|cc|cpp|inc|py|sh|ini|cmake\.in)|^meson\.build|"
                    r"^meson_options\.txt|^CMakeLists\.txt|^run)$")
SKIP_DIRS = {".git", "subprojects", "corpus", "__pycache__"}


def sources(root):
    for d, dirs, files in os.walk(root):
        dirs[:] = sorted(x for x in dirs if x not in SKIP_DIRS and
                         not x.startswith("build") and
                         not os.path.exists(os.path.join(d, x, "meson-private")))
        for f in sorted(files):
            if SOURCE.search(f):
                yield os.path.join(d, f)


def main():
    root = sys.argv[1] if len(sys.argv) > 1 else "."
    bad, count = [], 0
    for path in sources(root):
        count += 1
        with open(path, encoding="utf-8") as f:
            lines = f.read().split("\n")
        i = 1 if lines and lines[0].startswith("#!") else 0
        if len(lines) <= i or TAG not in lines[i]:
            bad.append("%s: line %d is not the %s line" % (path, i + 1, TAG))
            continue
        rest = [l for l in lines[i + 1:i + 4] if not l.startswith("#define")]
        if not rest or not re.match(r"\s*(/\*|//|#|\"\"\")", rest[0]):
            bad.append("%s: no comment saying what the file is for after "
                       "the SPDX line" % path)
    for line in bad:
        print("FAIL " + line)
    print("%d source files, %d without an SPDX line and a purpose line"
          % (count, len(bad)))
    return 1 if bad or count == 0 else 0


if __name__ == "__main__":
    sys.exit(main())
