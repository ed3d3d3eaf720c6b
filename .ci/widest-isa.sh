#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/widest-isa.sh <native build dir> [isa...] — prints the meson options of a build
# that keeps, of the x86 SIMD variants, only the one simdpool's AUTO picks on this CPU
# and the ones named (the scalar reference is always built), e.g.
# "-Dsse41=disabled -Davx2=disabled -Davx512=enabled".
# The sanitizer and no-SLEEF builds use it. What ThreadSanitizer and the no-SLEEF build
# check (data races in the threading and chunking code; behaviour without SLEEF) lives
# in dispatch and in the one kernel template every variant instantiates: they build
# AUTO's variant, whose kernels their suites run. ASan+UBSan builds AUTO's too: with the
# kernels compiled once more per element type, SSE4.1's variant under ASan cost CI 200 s
# more than its budget had. Every variant is still swept natively with its tensors
# against guard pages (an access past either end of any tensor faults), and under qemu
# (Nehalem, Haswell). Each variant left out takes minutes of compilation off CI (an
# ASan build of one variant's kernels costs about 400 s of CPU).
set -euo pipefail
dir=${1:?usage: .ci/widest-isa.sh <native build dir> [isa...]}
shift
auto=$("$dir/tests/isa_probe" --native | sed -n 's/.*(AUTO = \([a-z0-9]*\)).*/\1/p' | tail -1)
case "$auto" in
  sse41 | avx2 | avx512) ;;
  *) echo "widest-isa: AUTO picks '${auto:-nothing}' here, not an x86 SIMD variant" >&2; exit 1 ;;
esac
opts=()
for isa in sse41 avx2 avx512; do
  keep=0
  for k in "$auto" "$@"; do [ "$k" = "$isa" ] && keep=1; done
  if [ "$keep" -eq 1 ]; then opts+=("-D$isa=enabled"); else opts+=("-D$isa=disabled"); fi
done
echo "${opts[*]}"
