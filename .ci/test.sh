#!/usr/bin/env bash
# .ci/test.sh — the README's test command: installs what is missing, then runs the whole
# test suite twice: a release build, and an ASan+UBSan build (failing on any report).
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh

start=$(date +%s)
echo "== native release build: tests =="
rm -rf build-test
meson setup build-test --buildtype=release
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes 2
cat build-test/meson-logs/testlog.txt | grep -E "^(Running suite|[0-9]+%: Checks)" || true

echo "== ASan + UBSan build: tests =="
rm -rf build-asan
meson setup build-asan --buildtype=debugoptimized -Db_sanitize=address,undefined \
  -Dc_args=-fno-sanitize-recover=all -Dcpp_args=-fno-sanitize-recover=all
ninja -C build-asan
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 \
  meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 4
echo "== all test suites passed in $(( $(date +%s) - start )) s =="
