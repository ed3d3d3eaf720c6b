#!/usr/bin/env bash
# .ci/deps.sh — installs the Debian 12 packages simdpool's build, tests and bench need, if missing.
set -euo pipefail
pkgs=(gcc g++ libc6-dev pkg-config meson ninja-build check libsleef-dev
      libbenchmark-dev gnuplot-nox)
missing=()
for p in "${pkgs[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" ||
    missing+=("$p")
done
if [ ${#missing[@]} -gt 0 ]; then
  echo "deps: installing ${missing[*]}"
  sudo=""
  [ "$(id -u)" -eq 0 ] || sudo=sudo
  $sudo apt-get update -qq
  DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq \
    --no-install-recommends "${missing[@]}"
fi
