#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/main.sh — the README's main command: installs what is missing for the build and
# the bench (with the bench's peer libraries; no test framework, qemu or cross
# toolchain), builds the library and the bench in release mode with the peers (oneDNN,
# XNNPACK, PyTorch) and runs the benchmark summary (table per case and layout with the
# peer ratios, the networks table, JSON, PNG chart). A few minutes on 2 cores.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh --main --peers
# The test suites are .ci/test.sh's business.
if [ -f build-peers/build.ninja ]; then
  meson configure build-peers -Dpeers=enabled -Dtests=disabled -Dwerror=true
else
  meson setup build-peers --buildtype=release --werror -Dpeers=enabled -Dtests=disabled
fi
ninja -C build-peers
python3 bench/summary.py build-peers
