#!/usr/bin/env bash
# .ci/deps.sh — installs the Debian 12 packages simdpool's build, tests and bench need, if missing.
#   bash .ci/deps.sh           what the build and every test suite need (.ci/test.sh)
#   bash .ci/deps.sh --peers   also the bench's peer libraries, for a -Dpeers=enabled
#                              build (.ci/main.sh): oneDNN, XNNPACK and PyTorch's
#                              libtorch (about 165 packages more; no test needs them)
set -euo pipefail
with_peers=0
for arg in "$@"; do
  case "$arg" in
    --peers) with_peers=1 ;;
    *) echo "usage: $0 [--peers]" >&2; exit 2 ;;
  esac
done
# libpthreadpool-dev: the pthreadpool adapter and its test; clang-14,
# libclang-rt-14-dev (libFuzzer) and llvm-14 (llvm-symbolizer): .ci/fuzz.sh.
pkgs=(gcc g++ libc6-dev pkg-config meson ninja-build check libsleef-dev
      libbenchmark-dev gnuplot-nox libpthreadpool-dev
      clang-14 libclang-rt-14-dev llvm-14)
# aarch64 cross testing (the NEON variant under qemu-user): cross compilers, qemu, and
# the arm64 multiarch libraries the cross build links (.ci/cross/aarch64-linux-gnu.ini).
cross_pkgs=(gcc-aarch64-linux-gnu g++-aarch64-linux-gnu qemu-user
            check:arm64 libsleef-dev:arm64 libbenchmark-dev:arm64)
# The bench peers (bench/README.md): libdnnl-dev (oneDNN 2.6), libxnnpack-dev (its
# header includes pthreadpool.h, from libpthreadpool-dev above), libtorch-dev (ATen 1.13).
peer_pkgs=()
[ "$with_peers" -eq 0 ] || peer_pkgs=(libdnnl-dev libxnnpack-dev libtorch-dev)
missing=()
for p in "${pkgs[@]}" "${cross_pkgs[@]}" "${peer_pkgs[@]}"; do
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
