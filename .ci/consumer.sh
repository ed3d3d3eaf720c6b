#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/consumer.sh — installs simdpool with the README's install recipe (run as written, in a
# copy of this source tree, into a temporary prefix) and builds and runs tests/consumer/ (C,
# C++ and, where the pthreadpool adapter is built, a pthreadpool program) the three ways an
# outside project uses it: through pkg-config, through the CMake package
# (find_package(simdpool), which must also refuse versions the ABI policy excludes), and as a
# Meson subproject (which must build no simdpool test, bench or example). Then the same
# recipe with -Ddefault_library=static: the installed archive must define no global symbol
# but simdpool_*, and the CMake consumer must link it statically and run. Everything
# happens in a temporary directory; nothing under the repository is written. Fails on any
# error. With a native build's directory as the argument (.ci/test.sh's build-test), the
# subproject build compiles, of the x86 SIMD variants, only the one AUTO picks there
# (.ci/widest-isa.sh): it checks how a parent builds and links simdpool, and each variant's
# kernels are half a minute of CI at -O0.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/simdpool-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT

# The README's install recipe: the lines of the ```sh block after the marker line.
recipe=$(awk '/<!-- install recipe/ {marked = 1; next}
              marked && /^```/ {if (inside) exit; inside = 1; next}
              inside {print}' README.md)
[ -n "$recipe" ] || { echo "consumer: no install recipe found in README.md" >&2; exit 1; }
echo "README install recipe:"
printf '  %s\n' "$recipe"

# install_with_recipe <label> <prefix> [extra meson setup options]: runs the recipe in a fresh copy of
# the source tree (without build directories) with PREFIX=<prefix>.
install_with_recipe() {
  local label=$1 src="$tmp/src-$1"
  export PREFIX=$2
  shift 2
  mkdir -p "$src"
  tar -C "$root" --exclude='./build*' --exclude=./.git --exclude=./subprojects -cf - . |
    tar -C "$src" -xf -
  local line log="$tmp/install-$label.log"
  while IFS= read -r line; do
    [ -n "$line" ] || continue
    # The extra options go to `meson setup` only.
    case "$line" in meson\ setup*) [ $# -eq 0 ] || line="$line $*" ;; esac
    echo "  [$label] $line" >>"$log"
    (cd "$src" && eval "$line") >>"$log" 2>&1 || { cat "$log"; exit 1; }
  done <<<"$recipe"
  echo "installed ($label): $(cd "$PREFIX" && find . -type f -o -type l | sort | tr '\n' ' ')"
  unset PREFIX
}

run_programs() { # <build dir> <label>: runs every consumer program built there
  local prog ran=0
  for prog in consumer_c consumer_cpp consumer_pthreadpool; do
    [ -x "$1/$prog" ] || continue
    echo "-- $2: $prog"
    "$1/$prog"
    ran=$((ran + 1))
  done
  if [ -n "$adapter" ] && [ ! -x "$1/consumer_pthreadpool" ]; then
    echo "consumer: the adapter is installed, but $2 built no consumer_pthreadpool" >&2
    exit 1
  fi
  [ "$ran" -ge 2 ] || { echo "consumer: $2 built no consumer programs" >&2; exit 1; }
}

loads_from() { # <program> <prefix>: the program must load libsimdpool from the prefix
  local so
  so=$(ldd "$1" | awk '/libsimdpool\.so/ {print $3}')
  case "$so" in
    "$2/"*) echo "$(basename "$1") loads ${so#"$tmp/"}" ;;
    *) echo "consumer: $1 loads libsimdpool from '$so', not $2" >&2; exit 1 ;;
  esac
}

prefix="$tmp/prefix"
install_with_recipe shared "$prefix"
pc=$(find "$prefix" -name simdpool.pc -print -quit)
[ -n "$pc" ] || { echo "consumer: the install wrote no simdpool.pc" >&2; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
[ -f "$prefix/include/simdpool.h" ] ||
  { echo "consumer: simdpool.h was not installed" >&2; exit 1; }
[ -f "$libdir/cmake/simdpool/simdpoolConfig.cmake" ] &&
  [ -f "$libdir/cmake/simdpool/simdpoolConfigVersion.cmake" ] ||
  { echo "consumer: no CMake package files in $libdir/cmake/simdpool" >&2; exit 1; }
adapter=$(find "$libdir" -maxdepth 1 -name 'libsimdpool_pthreadpool.so*' -print -quit)
version=$(sed -n 's/^#define SIMDPOOL_VERSION_STRING "\(.*\)"$/\1/p' "$prefix/include/simdpool.h")
IFS=. read -r major minor patch <<<"$version"
echo "simdpool $version; pthreadpool adapter: $([ -n "$adapter" ] && echo yes || echo no)"

echo "== consumer 1/4: installed library through pkg-config =="
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "pkg-config --cflags --libs simdpool: $(pkg-config --cflags --libs simdpool)"
cp -r tests/consumer "$tmp/consumer-pc"
meson setup "$tmp/build-pc" "$tmp/consumer-pc" -Dmode=pkg-config >"$tmp/pc-setup.log" ||
  { cat "$tmp/pc-setup.log"; exit 1; }
grep -E "^Message: simdpool" "$tmp/pc-setup.log"
ninja -C "$tmp/build-pc" >"$tmp/pc-build.log" || { cat "$tmp/pc-build.log"; exit 1; }
# The programs must load the installed copy, not one from a build tree.
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for prog in consumer_c consumer_cpp; do loads_from "$tmp/build-pc/$prog" "$prefix"; done
run_programs "$tmp/build-pc" pkg-config
unset PKG_CONFIG_PATH

echo "== consumer 2/4: installed library through CMake's find_package(simdpool) =="
# cmake_build <build dir> <prefix> [cmake options]
cmake_build() {
  local bdir=$1 pfx=$2
  shift 2
  cmake -S tests/consumer -B "$bdir" -G Ninja -DCMAKE_BUILD_TYPE=Release \
    -DCMAKE_PREFIX_PATH="$pfx" "$@" >"$bdir.log" 2>&1
}
cmake_build "$tmp/build-cmake" "$prefix" -DSIMDPOOL_WANT="$major.$minor" ||
  { cat "$tmp/build-cmake.log"; exit 1; }
grep -E "^-- simdpool " "$tmp/build-cmake.log"
cmake --build "$tmp/build-cmake" >"$tmp/cmake-build.log" 2>&1 ||
  { cat "$tmp/cmake-build.log"; exit 1; }
for prog in consumer_c consumer_cpp; do loads_from "$tmp/build-cmake/$prog" "$prefix"; done
run_programs "$tmp/build-cmake" cmake
# The version file follows the ABI policy: before 1.0 another minor is incompatible, and
# so is a version newer than the installed one.
if [ "$major" -eq 0 ]; then
  refuse=("$major.$((minor + 1))" "$major.$minor.$((patch + 1))" "$((major + 1)).0")
else
  refuse=("$major.$((minor + 1))" "$((major + 1)).0")
fi
for want in "${refuse[@]}"; do
  if cmake_build "$tmp/build-cmake-$want" "$prefix" -DSIMDPOOL_WANT="$want"; then
    echo "consumer: find_package(simdpool $want) accepted simdpool $version" >&2
    exit 1
  fi
  grep -q "simdpoolConfig.cmake, version: $version" "$tmp/build-cmake-$want.log" ||
    { cat "$tmp/build-cmake-$want.log"; exit 1; }
done
echo "find_package(simdpool X) refuses X = ${refuse[*]} (installed: $version)"
unset LD_LIBRARY_PATH

echo "== consumer 3/4: the library as a Meson subproject =="
# A copy of the consumer whose subprojects/simdpool links to this source tree.
cp -r tests/consumer "$tmp/consumer-sub"
mkdir -p "$tmp/consumer-sub/subprojects"
ln -s "$root" "$tmp/consumer-sub/subprojects/simdpool"
# Unoptimised (-O0): this checks how a parent project builds and links the subproject,
# not kernel speed, and an -O3 build of every ISA's kernels took a minute of CI.
sub_isa=()
if [ -n "${1:-}" ]; then
  read -r -a sub_isa <<<"$(bash "$root/.ci/widest-isa.sh" "$1" | sed 's/-D/-Dsimdpool:/g')"
fi
meson setup "$tmp/build-sub" "$tmp/consumer-sub" -Dmode=subproject \
  -Dbuildtype=debug "${sub_isa[@]}" >"$tmp/sub-setup.log" ||
  { cat "$tmp/sub-setup.log"; exit 1; }
grep -E "^Message: simdpool" "$tmp/sub-setup.log"
ninja -C "$tmp/build-sub" >"$tmp/sub-build.log" || { cat "$tmp/sub-build.log"; exit 1; }
run_programs "$tmp/build-sub" subproject
# Without any option from the parent, simdpool builds no tests, bench or examples.
meson test -C "$tmp/build-sub" --no-rebuild --list >"$tmp/sub-tests.txt" 2>&1
echo "subproject consumer's tests: $(tr '\n' ' ' <"$tmp/sub-tests.txt")"
if grep -q "simdpool" "$tmp/sub-tests.txt"; then
  echo "consumer: the subproject build lists simdpool tests" >&2
  exit 1
fi
progs=$(find "$tmp/build-sub/subprojects" -type f -perm -u+x ! -name '*.so*' -print)
if [ -n "$progs" ]; then
  echo "consumer: the subproject build built programs of simdpool: $progs" >&2
  exit 1
fi

echo "== consumer 4/4: the static library (the recipe plus -Ddefault_library=static) =="
sprefix="$tmp/prefix-static"
# At the recipe's optimisation: the kernels' objects (internal static libraries in
# either build) then have the shared install's compile commands and come from the run's
# ccache; an -O0 build of them took about a minute of CI.
install_with_recipe static "$sprefix" -Ddefault_library=static
archive=$(find "$sprefix" -name libsimdpool.a -print -quit)
[ -n "$archive" ] || { echo "consumer: no libsimdpool.a installed" >&2; exit 1; }
if find "$sprefix" -name 'libsimdpool*.so*' | grep -q .; then
  echo "consumer: the static install has shared libraries" >&2
  exit 1
fi
python3 tests/check_symbols.py --static "$archive" --static-header include/simdpool.h |
  grep -v '^  '
cmake_build "$tmp/build-static" "$sprefix" -DSIMDPOOL_WANT="$major.$minor" ||
  { cat "$tmp/build-static.log"; exit 1; }
cmake --build "$tmp/build-static" >"$tmp/static-build.log" 2>&1 ||
  { cat "$tmp/static-build.log"; exit 1; }
for prog in consumer_c consumer_cpp; do
  if ldd "$tmp/build-static/$prog" | grep -q libsimdpool; then
    echo "consumer: $prog links libsimdpool dynamically" >&2
    exit 1
  fi
done
adapter=$(find "$sprefix" -name 'libsimdpool_pthreadpool.a' -print -quit)
run_programs "$tmp/build-static" cmake-static

echo "== consumer: pkg-config, CMake, Meson subproject and static, passed in $(( $(date +%s) - start )) s =="
