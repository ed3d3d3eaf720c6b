#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/tsan.sh — the threading tests under ThreadSanitizer: 16 threads making
# their first simdpool calls at once with shared plans and a shared pool
# (concurrency), and the parallel entry points over 1, 2, 3 and 8 threads
# (parallel), and those entry points on a pool whose tasks run with FTZ|DAZ set
# (fpenv). Any data race report fails the run. With a native build's directory
# (bash .ci/tsan.sh build-test) only the x86 SIMD variant AUTO picks is built.
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
native=${1:-}
isa_opts=()
# With a native build's directory: the one x86 SIMD variant AUTO picks here
# (.ci/widest-isa.sh), whose kernels the suites run; the threading code is the same.
if [ -n "$native" ]; then
  read -r -a isa_opts <<<"$(bash .ci/widest-isa.sh "$native")"
fi
rm -rf build-tsan
meson setup build-tsan --buildtype=debugoptimized --werror -Db_sanitize=thread \
  -Dbench=disabled -Dexamples=false "${isa_opts[@]}" >/dev/null
ninja -C build-tsan tests/test_concurrency tests/test_parallel tests/test_fpenv
# halt_on_error: the first race fails the test; Check runs in-process
# (CK_FORK=no) so ThreadSanitizer sees one process. Two suites at once (parallel
# alone took two thirds of the stage's test time).
TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" CK_FORK=no \
  SIMDPOOL_TEST_SCALE=0.1 \
  meson test -C build-tsan --no-rebuild --print-errorlogs --num-processes 2 \
  --timeout-multiplier 4 concurrency parallel fpenv
grep -E "^concurrency:|^[0-9]+%: Checks" build-tsan/meson-logs/testlog.txt
echo "== ThreadSanitizer suites passed in $(( $(date +%s) - start )) s =="
