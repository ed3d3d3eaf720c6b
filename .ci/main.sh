#!/usr/bin/env bash
# .ci/main.sh — the README's main command: installs what is missing, builds in release mode
# and runs the main job (for now the example program; the benchmark summary replaces it).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
[ -d build-release ] || meson setup build-release --buildtype=release
ninja -C build-release
./build-release/examples/example_pool
