#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/widest-isa.sh <native build dir> — prints the meson options of a build that keeps,
# of the x86 SIMD variants, only the one simdpool's AUTO picks on this CPU (the scalar
# reference is always built), e.g. "-Dsse41=disabled -Davx2=disabled -Davx512=enabled".
# The ThreadSanitizer and no-SLEEF builds use it: what they check (data races in the
# threading and chunking code; behaviour without SLEEF) lives in dispatch and in the
# one kernel template every ISA instantiates, and the variants this CPU runs are all
# swept by the native stage. One variant instead of three takes minutes off CI.
set -euo pipefail
dir=${1:?usage: .ci/widest-isa.sh <native build dir>}
auto=$("$dir/tests/isa_probe" --native | sed -n 's/.*(AUTO = \([a-z0-9]*\)).*/\1/p' | tail -1)
case "$auto" in
  sse41 | avx2 | avx512) ;;
  *) echo "widest-isa: AUTO picks '${auto:-nothing}' here, not an x86 SIMD variant" >&2; exit 1 ;;
esac
opts=()
for isa in sse41 avx2 avx512; do
  if [ "$isa" = "$auto" ]; then opts+=("-D$isa=enabled"); else opts+=("-D$isa=disabled"); fi
done
echo "${opts[*]}"
