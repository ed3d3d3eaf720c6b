#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/test.sh — the README's test command: installs what is missing, then runs the whole
# test suite: a release build (then its tests again under qemu-x86_64 as Nehalem and
# Haswell, and a consumer project built against it), a build without SLEEF and its
# tests, an ASan+UBSan build (clang-14, failing on any report, instrumented for libFuzzer),
# the threading tests under ThreadSanitizer, an aarch64 cross build (NEON) run under
# qemu-user, and the libFuzzer target, from the sanitizer build, for 60 s.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh

# A compiler cache for this run only: the consumer stage's install recipe compiles the
# library with the native stage's very commands (less -Werror, which changes no
# object), and those come from the cache; Meson uses ccache when it finds it. Every
# other build differs in its flags and compiles in full.
CCACHE_DIR=$(mktemp -d "${TMPDIR:-/tmp}/simdpool-ccache.XXXXXX")
export CCACHE_DIR CCACHE_IGNOREOPTIONS=-Werror CCACHE_MAXSIZE=4G
trap 'rm -rf "$CCACHE_DIR"' EXIT

start=$(date +%s)
stage_start=$start
stage_done() { # <name>: prints how long the stage took, and the running total
  local now
  now=$(date +%s)
  echo "== stage '$1' took $((now - stage_start)) s (total $((now - start)) s) =="
  stage_start=$now
}
echo "== native release build: tests =="
rm -rf build-test
meson setup build-test --buildtype=release --werror
ninja -C build-test
meson test -C build-test --print-errorlogs --num-processes 2
cat build-test/meson-logs/testlog.txt | grep -E "^(Running suite|[0-9]+%: Checks)" || true

stage_done native
echo "== a build without SLEEF (-Dsleef=disabled): LP with other p UNSUPPORTED, the rest works =="
rm -rf build-nosleef
# With the one x86 SIMD variant AUTO picks here (.ci/widest-isa.sh): the others'
# kernels are the same template, swept by the native stage.
# shellcheck disable=SC2046
meson setup build-nosleef --buildtype=release --werror -Dsleef=disabled -Dbench=disabled \
  $(bash .ci/widest-isa.sh build-test)
ninja -C build-nosleef
# divide's full sweep ran in the first stage (the division does not use SLEEF): a
# sample of it here (SIMDPOOL_TEST_SCALE < 1).
SIMDPOOL_TEST_SCALE=0.25 meson test -C build-nosleef --print-errorlogs --num-processes 2
grep -q "Requires.private:.*sleef" build-nosleef/meson-private/simdpool.pc &&
  { echo "no-SLEEF build: simdpool.pc still requires sleef" >&2; exit 1; }
nm -D --undefined-only build-nosleef/libsimdpool.so | grep -qi sleef &&
  { echo "no-SLEEF build: libsimdpool.so still needs a SLEEF symbol" >&2; exit 1; }

stage_done no-sleef
echo "== older x86 CPUs under qemu-x86_64 (Nehalem, Haswell) =="
bash .ci/oldcpu.sh build-test

stage_done oldcpu
echo "== consumer projects: the README install recipe, then pkg-config, CMake, Meson subproject, static =="
bash .ci/consumer.sh build-test
ccache --show-stats 2>/dev/null | grep -E "^ *(Hits|Misses):" || true

stage_done consumer
echo "== ASan + UBSan build (clang-14, instrumented for libFuzzer): tests =="
# Every suite runs; the random ones take 15% of their configurations
# (SIMDPOOL_TEST_SCALE; suites that set their own scale in tests/meson.build
# keep it): the full-scale sweeps ran natively above, and under the sanitizers
# the kernel sweep alone took eight of CI's minutes at full scale. The same
# build is the fuzzer's (last stage): one sanitizer build instead of two. Of the
# x86 SIMD variants it builds AUTO's (.ci/widest-isa.sh).
bash .ci/asan-setup.sh build-asan build-test
ninja -C build-asan
UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1 SIMDPOOL_TEST_SCALE=0.15 \
  meson test -C build-asan --print-errorlogs --num-processes 2 --timeout-multiplier 4

stage_done asan
echo "== ThreadSanitizer: concurrency and parallel tests =="
bash .ci/tsan.sh build-test

stage_done tsan
echo "== aarch64 cross build (NEON) under qemu-aarch64: tests =="
# Cross-compiled for aarch64 and run under qemu-user (the cross file's exe_wrapper);
# -Dneon=enabled fails the setup rather than silently building without NEON.
arm_start=$(date +%s)
rm -rf build-aarch64
meson setup build-aarch64 --cross-file .ci/cross/aarch64-linux-gnu.ini \
  --buildtype=release --werror -Dneon=enabled
ninja -C build-aarch64
# Emulation is ~10-30x slower: the random suites take one to two minutes each here.
# The bench's summary run (a minute here; its smoke run checks no kernel that the
# kernel sweep does not) is left to the native and ASan stages; its kernel-coverage
# check runs, first (each `meson test` rewrites testlog.txt, which is read below).
meson test -C build-aarch64 --print-errorlogs bench-kernels
# The random suites take their cross-build scales (tests/meson.build: a quarter of the
# kernel, model and guard sweeps' configurations, a fifth of the others'); an outer
# SIMDPOOL_TEST_SCALE would not change them, since a test's own env wins in meson test.
meson test -C build-aarch64 --print-errorlogs --num-processes 2 \
  --timeout-multiplier 2 --no-suite bench
# Show (and require) that the NEON variant ran and matched scalar bit for bit.
awk '/^(Running suite|[0-9]+%: Checks|ISAs:|simdpool .*; ISAs|  isa |  forced isa |  SIMDPOOL_ISA=)/ ||
     /^  ran .*\[neon / || /^\[model\] .*neon\]/ {
       if (!seen[$0]++) print }' build-aarch64/meson-logs/testlog.txt
grep -q '^  ran .*\[neon .*bit-exact' build-aarch64/meson-logs/testlog.txt ||
  { echo "aarch64: no NEON kernel ran" >&2; exit 1; }
echo "== aarch64 suites passed in $(( $(date +%s) - arm_start )) s =="
stage_done aarch64
echo "== libFuzzer (build-asan: clang-14, ASan+UBSan): corpus replay + fuzz_pool for 60 s =="
bash .ci/fuzz.sh build-asan

stage_done fuzz
echo "== all test suites passed in $(( $(date +%s) - start )) s =="
