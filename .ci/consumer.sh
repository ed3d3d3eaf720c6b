#!/usr/bin/env bash
# .ci/consumer.sh — builds and runs tests/consumer/ (a C and a C++ program that use
# simdpool like an outside project) twice: against a copy of the library installed
# with `meson install` into a temporary prefix and found through pkg-config, and with
# the library as a Meson subproject. Everything happens in a temporary directory;
# nothing under the repository is written. Fails on any error.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/simdpool-consumer.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
lib_opts=(--buildtype=release --werror -Dtests=disabled -Dbench=disabled -Dexamples=false)

run_consumer() { # <build dir> <label>
  for prog in consumer_c consumer_cpp; do
    echo "-- $2: $prog"
    "$1/$prog"
  done
}

echo "== consumer 1/2: installed library through pkg-config =="
meson setup "$tmp/lib-build" --prefix="$tmp/prefix" "${lib_opts[@]}" >"$tmp/lib-setup.log" ||
  { cat "$tmp/lib-setup.log"; exit 1; }
ninja -C "$tmp/lib-build" install >"$tmp/lib-install.log" ||
  { cat "$tmp/lib-install.log"; exit 1; }
# libdir is lib/ or lib/<multiarch triplet>/ depending on the platform.
pc=$(find "$tmp/prefix" -name simdpool.pc -print -quit)
[ -n "$pc" ] || { echo "consumer: meson install wrote no simdpool.pc" >&2; exit 1; }
pcdir=$(dirname "$pc")
libdir=$(dirname "$pcdir")
[ -f "$tmp/prefix/include/simdpool.h" ] ||
  { echo "consumer: simdpool.h was not installed" >&2; exit 1; }
echo "installed: $(cd "$tmp/prefix" && find . -type f -o -type l | sort | tr '\n' ' ')"
export PKG_CONFIG_PATH="$pcdir${PKG_CONFIG_PATH:+:$PKG_CONFIG_PATH}"
echo "pkg-config --cflags --libs simdpool: $(pkg-config --cflags --libs simdpool)"
cp -r tests/consumer "$tmp/consumer-pc"
meson setup "$tmp/build-pc" "$tmp/consumer-pc" -Dmode=pkg-config >"$tmp/pc-setup.log" ||
  { cat "$tmp/pc-setup.log"; exit 1; }
grep -E "^Message: simdpool" "$tmp/pc-setup.log"
ninja -C "$tmp/build-pc" >"$tmp/pc-build.log" || { cat "$tmp/pc-build.log"; exit 1; }
# The programs must load the installed copy, not one from a build tree.
export LD_LIBRARY_PATH="$libdir${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}"
for prog in consumer_c consumer_cpp; do
  so=$(ldd "$tmp/build-pc/$prog" | awk '/libsimdpool\.so/ {print $3}')
  case "$so" in
    "$tmp/prefix/"*) echo "$prog loads ${so#"$tmp/"}" ;;
    *) echo "consumer: $prog loads libsimdpool from '$so', not the prefix" >&2; exit 1 ;;
  esac
done
run_consumer "$tmp/build-pc" pkg-config
unset PKG_CONFIG_PATH LD_LIBRARY_PATH

echo "== consumer 2/2: the library as a Meson subproject =="
# A copy of the consumer whose subprojects/simdpool links to this source tree.
cp -r tests/consumer "$tmp/consumer-sub"
mkdir -p "$tmp/consumer-sub/subprojects"
ln -s "$root" "$tmp/consumer-sub/subprojects/simdpool"
meson setup "$tmp/build-sub" "$tmp/consumer-sub" -Dmode=subproject \
  -Dbuildtype=release >"$tmp/sub-setup.log" || { cat "$tmp/sub-setup.log"; exit 1; }
grep -E "^Message: simdpool" "$tmp/sub-setup.log"
ninja -C "$tmp/build-sub" >"$tmp/sub-build.log" || { cat "$tmp/sub-build.log"; exit 1; }
run_consumer "$tmp/build-sub" subproject
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

echo "== consumer: C and C++, pkg-config and subproject, passed in $(( $(date +%s) - start )) s =="
