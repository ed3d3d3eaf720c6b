#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""git_commit.py SRCDIR — prints `git describe --always --dirty` of SRCDIR when SRCDIR is
the top of its own git work tree; exits 1 otherwise (a tarball, or a copy inside another
project's repository), and Meson's vcs_tag then writes "unknown"."""
import os
import subprocess
import sys

src = os.path.realpath(sys.argv[1])
try:
    top = subprocess.run(["git", "-C", src, "rev-parse", "--show-toplevel"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True, check=True).stdout.strip()
    if os.path.realpath(top) != src:
        sys.exit(1)
    out = subprocess.run(["git", "-C", src, "describe", "--always", "--dirty"],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                         universal_newlines=True, check=True).stdout.strip()
except (OSError, subprocess.CalledProcessError):
    sys.exit(1)
if not out:
    sys.exit(1)
print(out)
