#!/usr/bin/env bash
# .ci/main.sh — the README's main command: installs what is missing, builds in release mode
# and runs the benchmark summary (table per case and layout, JSON, PNG chart).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
[ -d build-release ] || meson setup build-release --buildtype=release
ninja -C build-release
python3 bench/summary.py build-release
