#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/oldcpu.sh — runs an already-built native x86-64 build's test suite again on older
# CPUs emulated by qemu-x86_64: Nehalem (SSE4.1, no AVX) and Haswell (AVX2, no AVX-512).
# On each, tests/isa_probe must see AUTO pick sse41 resp. avx2 and forcing a missing ISA
# fail cleanly, and `meson test --wrapper qemu-x86_64` must pass with isa-avx512 (and on
# Nehalem isa-avx2) skipped. Usage: .ci/oldcpu.sh [build dir, default build-test]
#
# Environment: SIMDPOOL_OLDCPU_SCALE (default 0.05) replaces SIMDPOOL_TEST_SCALE of every
# test under emulation (emulation is 10-50x slower).
# The isa-* runs are brief everywhere (tests/meson.build): the `kernels` run on the same
# emulated CPU sweeps every ISA the model has.
set -euo pipefail
cd "$(dirname "$0")/.."
dir=${1:-build-test}
scale=${SIMDPOOL_OLDCPU_SCALE:-0.05}
start=$(date +%s)

command -v qemu-x86_64 >/dev/null ||
  { echo "oldcpu: qemu-x86_64 not found (Debian package qemu-user)" >&2; exit 1; }
if [ ! -x "$dir/tests/isa_probe" ] || [ ! -f "$dir/build.ninja" ]; then
  echo "oldcpu: $dir is not a built native build with tests (no tests/isa_probe)" >&2
  exit 1
fi

# The emulated CPU models. Haswell without the features TCG cannot emulate anyway (it
# would warn about each one in every test log); none of them affects AVX2 or FMA.
nehalem_cpu="Nehalem"
haswell_cpu="Haswell,-pcid,-x2apic,-tsc-deadline,-hle,-invpcid,-rtm"
# On the Haswell model glibc picks its AVX2 string functions (memset, memcmp, ...),
# which QEMU 7.2 emulates so slowly that the suite took 4-5x longer than on Nehalem.
# This tunable changes only glibc's own choice; simdpool reads CPUID itself, so AUTO
# still picks avx2 and the AVX2 kernels run.
haswell_env="GLIBC_TUNABLES=glibc.cpu.hwcaps=-AVX2,-AVX_Fast_Unaligned_Load"
# QEMU 7.2 lets VMASKMOVPS loads fault on masked-off lanes (hardware suppresses the
# fault), so the guard-page test cannot pass on the Haswell model: AVX2 tail loads end
# exactly at its PROT_NONE pages. It runs natively, under ASan and on Nehalem.
# The AVX2 kernels are covered here by kernels, model, isa-avx2 and isa-probe.
# fpenv (the public calls under every caller environment, 100-140 s on this model) runs
# natively, under ASan and on Nehalem; the AVX2 kernels' environment handling is covered
# here by the `kernels` run (every kernel called through dispatch under each caller
# environment).
# The threading suites (parallel, concurrency, pthreadpool) test how work is cut into
# chunks and run on threads, which no CPU feature changes: parallel runs every x86 ISA's
# kernels through every split natively, and all three run under TSan. Under emulation
# parallel was the longest test on both models (46 s on Nehalem, 65 s on Haswell, a
# third of this stage) while checking nothing the kernels run here does not.
threads_skip="parallel concurrency pthreadpool"
haswell_skip="guard fpenv $threads_skip"

# Tests run under emulation: every test whose program is built in this build dir. Left
# out: programs that are not ours (python3 scripts: README sync, exported symbols, bench
# summary; they test nothing CPU-specific), the bench suite (timing runs; its smoke
# test alone takes minutes under emulation) and the proof suite (the division's whole
# proof, which plain `meson test` leaves out too; `divide` runs its subset here).
mapfile -t tests < <(meson introspect "$dir" --tests | python3 -c '
import json, os, sys
build = os.path.realpath(sys.argv[1])
for t in json.load(sys.stdin):
    exe = os.path.realpath(t["cmd"][0])
    if exe.startswith(build + os.sep) and not any(
            s.split(":")[-1] in ("bench", "proof") for s in t["suite"]):
        print(t["name"])
' "$dir")
excluded=$(meson introspect "$dir" --tests | python3 -c '
import json, sys
names = set(sys.argv[1:])
print(" ".join(t["name"] for t in json.load(sys.stdin) if t["name"] not in names))
' "${tests[@]}")
echo "== oldcpu: $dir under qemu-x86_64 ($(qemu-x86_64 --version | head -1)) =="
echo "tests run: ${tests[*]}"
echo "left out:  ${excluded:-none} (not built here, or the bench or proof suite)"
echo "SIMDPOOL_TEST_SCALE=$scale under emulation"

# QEMU 7.2 (Debian 12) decodes a VSIB index register number 4 (xmm4/ymm4) of AVX2
# gathers as "no index": every lane then loads element 0. Real CPUs do not, so a build
# whose AVX2 code holds such a gather cannot be tested under this emulator; the Haswell
# run then uses a copy built with -ffixed-xmm4 (the compiler never allocates xmm4; the
# code is otherwise the same source and flags). The AVX2 kernels hold no gather today
# (vec-avx2.h loads strided columns with scalar loads), so this copy is built only if
# one comes back, written or made by the compiler's vectoriser.
vsib4_gathers() { # <elf file>: counts VEX (AVX2) gathers indexed by xmm4/ymm4
  objdump -d --no-show-raw-insn "$1" |
    grep -cE '\sv(p)?gather[dq][dqps]+\s+%[xy]mm[0-9]+,[^(]*\(%[a-z0-9]+,%[xy]mm4,' || true
}
haswell_dir=$dir
lib=$(find "$dir" -maxdepth 1 -name 'libsimdpool.so*' -type f -print -quit)
if [ -n "$lib" ] && command -v objdump >/dev/null; then
  n=$(vsib4_gathers "$lib")
  if [ "$n" -gt 0 ]; then
    haswell_dir="$dir-qemu-haswell"
    echo "note: $lib has $n AVX2 gather(s) indexed by ymm4, which qemu-x86_64 7.2 mis-emulates;"
    echo "      the Haswell run uses $haswell_dir (same sources, -Dc_args=-ffixed-xmm4)"
    if [ ! -f "$haswell_dir/build.ninja" ]; then
      meson setup "$haswell_dir" --buildtype=release --werror -Dbench=disabled \
        -Dc_args=-ffixed-xmm4 >"$dir/meson-logs/oldcpu-haswell-setup.txt" ||
        { cat "$dir/meson-logs/oldcpu-haswell-setup.txt"; exit 1; }
    fi
    ninja -C "$haswell_dir" >"$dir/meson-logs/oldcpu-haswell-build.txt" ||
      { tail -40 "$dir/meson-logs/oldcpu-haswell-build.txt"; exit 1; }
    hlib=$(find "$haswell_dir" -maxdepth 1 -name 'libsimdpool.so*' -type f -print -quit)
    [ "$(vsib4_gathers "$hlib")" -eq 0 ] ||
      { echo "oldcpu: -ffixed-xmm4 did not remove the ymm4-indexed gathers" >&2; exit 1; }
  fi
fi

echo "-- native: isa_probe --native"
"$dir/tests/isa_probe" --native | tail -1

# check_log <meson-logs dir> <log base> <label>: the isa-* runs that must skip (and run)
# on this CPU, from meson's JSON log (named after --logbase plus the wrapper program).
check_log() {
  python3 - "$@" <<'PY'
import glob, json, os, sys
logdir, log, label = sys.argv[1:4]
files = sorted(glob.glob(os.path.join(logdir, log + "*.json")))
if not files:
    print("no JSON test log %s*.json" % os.path.join(logdir, log))
    sys.exit(1)
res = {}
with open(files[-1]) as f:
    for line in f:
        if line.strip():
            t = json.loads(line)
            # "simdpool / isa-avx2" when the build has subprojects.
            res[t["name"].split(" / ")[-1]] = t["result"]
want = {"isa-avx512": "SKIP", "isa-neon": "SKIP", "isa-sse41": "OK",
        "isa-scalar": "OK", "isa-probe": "OK"}
want["isa-avx2"] = "SKIP" if label == "Nehalem" else "OK"
bad = ["%s is %s, expected %s" % (n, res.get(n, "missing"), r)
       for n, r in sorted(want.items()) if res.get(n) != r]
counts = {}
for r in res.values():
    counts[r] = counts.get(r, 0) + 1
print(", ".join("%s %d" % kv for kv in sorted(counts.items())) +
      ("; " + "; ".join(bad) if bad else "; isa-* OK/SKIP as expected"))
sys.exit(1 if bad else 0)
PY
}

summary=()
fail=0
# run_cpu <label> <qemu cpu> <build dir> <extra env> <tests left out> <expected AUTO isa>
#         <ISAs that must be missing...>
run_cpu() {
  local label=$1 cpu=$2 bdir=$3 extra_env=$4 skip=$5 expect=$6
  shift 6
  local t0 probe=ok suite=ok run=() t log counts
  t0=$(date +%s)
  for t in "${tests[@]}"; do
    [[ " $skip " == *" $t "* ]] || run+=("$t")
  done
  echo "== $label (qemu-x86_64 -cpu $cpu): AUTO must be $expect; unsupported: $* =="
  [ -z "$skip" ] || echo "left out on $label: $skip"
  # shellcheck disable=SC2086 # extra_env is empty or one VAR=value word
  if ! env $extra_env qemu-x86_64 -cpu "$cpu" "$bdir/tests/isa_probe" "$expect" "$@"; then
    probe=FAIL
    fail=1
  fi
  log="oldcpu-${label,,}"
  rm -f "$bdir/meson-logs/$log"*.json
  if ! meson test -C "$bdir" --no-rebuild --print-errorlogs --num-processes 2 \
      --timeout-multiplier 3 --logbase "$log" \
      --wrapper "env SIMDPOOL_TEST_SCALE=$scale $extra_env qemu-x86_64 -cpu $cpu" \
      "${run[@]}"; then
    suite=FAIL
    fail=1
  fi
  counts=$(check_log "$bdir/meson-logs" "$log" "$label") || { suite=FAIL; fail=1; }
  summary+=("$label: isa_probe $probe; meson test $suite ($counts); $(( $(date +%s) - t0 )) s")
}

run_cpu Nehalem "$nehalem_cpu" "$dir" "" "$threads_skip" sse41 avx2 avx512 neon
run_cpu Haswell "$haswell_cpu" "$haswell_dir" "$haswell_env" "$haswell_skip" avx2 avx512 neon

echo "== oldcpu summary =="
printf '%s\n' "${summary[@]}"
echo "(logs: $dir/meson-logs/oldcpu-nehalem-*.txt, $haswell_dir/meson-logs/oldcpu-haswell-*.txt)"
if [ "$fail" -ne 0 ]; then
  echo "== oldcpu: FAILED after $(( $(date +%s) - start )) s ==" >&2
  exit 1
fi
echo "== oldcpu: passed in $(( $(date +%s) - start )) s =="
