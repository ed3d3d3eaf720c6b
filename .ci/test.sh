#!/usr/bin/env bash
# .ci/test.sh — the README's test command: installs what is missing, then runs the whole
# test suite three times: a release build, an ASan+UBSan build (failing on any report), and
# an aarch64 cross build (NEON) run under qemu-user.
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

echo "== aarch64 cross build (NEON) under qemu-aarch64: tests =="
# Cross-compiled for aarch64 and run under qemu-user (the cross file's exe_wrapper);
# -Dneon=enabled fails the setup rather than silently building without NEON.
arm_start=$(date +%s)
rm -rf build-aarch64
meson setup build-aarch64 --cross-file .ci/cross/aarch64-linux-gnu.ini \
  --buildtype=release -Dneon=enabled
ninja -C build-aarch64
# Emulation is ~10-30x slower: the random suites take one to two minutes each here.
meson test -C build-aarch64 --print-errorlogs --num-processes 2 --timeout-multiplier 2
# Show (and require) that the NEON variant ran and matched scalar bit for bit.
awk '/^(Running suite|[0-9]+%: Checks|ISAs:|simdpool .*; ISAs|  isa |  forced isa |  SIMDPOOL_ISA=)/ ||
     /^  ran .*\[neon / || /^\[model\] .*neon\]/ {
       if (!seen[$0]++) print }' build-aarch64/meson-logs/testlog.txt
grep -q '^  ran .*\[neon .*bit-exact' build-aarch64/meson-logs/testlog.txt ||
  { echo "aarch64: no NEON kernel ran" >&2; exit 1; }
echo "== aarch64 suites passed in $(( $(date +%s) - arm_start )) s =="
echo "== all test suites passed in $(( $(date +%s) - start )) s =="
