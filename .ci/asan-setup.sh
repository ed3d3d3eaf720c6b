#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/asan-setup.sh <build dir> — configures the sanitizer build that .ci/test.sh runs the
# whole suite in and .ci/fuzz.sh fuzzes from: clang-14 with ASan+UBSan (any report fatal),
# the library instrumented for libFuzzer (-Dfuzz=true: -fsanitize=fuzzer-no-link, without
# comparison tracing in the kernels' hot loops: 2.5x the executions), at -O1 with line
# tables only, as OSS-Fuzz builds: the kernels' compile time under the sanitizers is
# about half of -O2 -g's, and the fuzzer runs no slower. One build serves both jobs.
# With a native build's directory as the second argument, of the x86 SIMD variants only
# AUTO's is built (.ci/widest-isa.sh says why).
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:?usage: .ci/asan-setup.sh <build dir> [native build dir]}
native=${2:-}
isa_opts=()
if [ -n "$native" ]; then
  read -r -a isa_opts <<<"$(bash .ci/widest-isa.sh "$native")"
fi
rm -rf "$dir"
CC=clang-14 CXX=clang++-14 meson setup "$dir" --buildtype=plain --werror \
  -Dfuzz=true -Db_sanitize=address,undefined -Db_lundef=false "${isa_opts[@]}" \
  "-Dc_args=-O1 -gline-tables-only -fno-sanitize-recover=all -fno-sanitize-coverage=trace-cmp" \
  "-Dcpp_args=-O1 -gline-tables-only -fno-sanitize-recover=all"
