#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/deps.sh — installs the Debian 12 packages simdpool's build, bench and tests need, if missing.
#   bash .ci/deps.sh           everything the test command (.ci/test.sh) needs: the build and
#                              bench, every test suite, the consumer projects (pkg-config,
#                              Meson, CMake), qemu-x86_64, the libFuzzer toolchain and the
#                              aarch64 cross build with its arm64 multiarch libraries
#   bash .ci/deps.sh --main    only what the build and the bench need (.ci/main.sh): no test
#                              framework, no clang, no qemu, no cross toolchain, no multiarch
#   --peers                    with either: also the bench's peer libraries for a
#                              -Dpeers=enabled build: oneDNN, XNNPACK and PyTorch's libtorch
#                              (about 165 packages more; no test needs them)
set -euo pipefail
with_peers=0
main_only=0
for arg in "$@"; do
  case "$arg" in
    --peers) with_peers=1 ;;
    --main) main_only=1 ;;
    *) echo "usage: $0 [--main] [--peers]" >&2; exit 2 ;;
  esac
done
# The library: a C11 compiler, Meson, Ninja, pkg-config and SLEEF (LP pooling's pow).
build_pkgs=(gcc libc6-dev pkg-config meson ninja-build python3 libsleef-dev)
# The bench (C++, Google Benchmark) and its summary's chart.
bench_pkgs=(g++ libbenchmark-dev gnuplot-nox)
# The test suites: Check; libpthreadpool-dev for the pthreadpool adapter and its test;
# cmake for the CMake consumer (.ci/consumer.sh); qemu-user for the older-CPU runs
# (qemu-x86_64) and the aarch64 suites (qemu-aarch64); clang-14, libclang-rt-14-dev
# (libFuzzer) and llvm-14 (llvm-symbolizer) for .ci/fuzz.sh; ccache, with which the
# consumer stage's install build takes the native stage's objects (.ci/test.sh).
test_pkgs=(check libpthreadpool-dev cmake qemu-user clang-14 libclang-rt-14-dev llvm-14
           ccache)
# aarch64 cross testing (the NEON variant under qemu-user): cross compilers (with their
# binutils) and the arm64 multiarch libraries the cross build links
# (.ci/cross/aarch64-linux-gnu.ini).
cross_pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu
            check:arm64 libsleef-dev:arm64 libbenchmark-dev:arm64)
# The bench peers (bench/README.md): libdnnl-dev (oneDNN 2.6), libxnnpack-dev (its
# header includes pthreadpool.h, from libpthreadpool-dev), libtorch-dev (ATen 1.13).
peer_pkgs=()
[ "$with_peers" -eq 0 ] || peer_pkgs=(libdnnl-dev libxnnpack-dev libpthreadpool-dev libtorch-dev)
pkgs=("${build_pkgs[@]}" "${bench_pkgs[@]}")
[ "$main_only" -eq 1 ] || pkgs+=("${test_pkgs[@]}" "${cross_pkgs[@]}")
missing=()
for p in "${pkgs[@]}" "${peer_pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  # arm64 packages need the foreign architecture, then a fresh package list.
  if printf '%s\n' "${missing[@]}" | grep -q ':arm64$' &&
     ! dpkg --print-foreign-architectures | grep -qx arm64; then
    $sudo dpkg --add-architecture arm64
  fi
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi
