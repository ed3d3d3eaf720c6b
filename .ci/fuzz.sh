#!/usr/bin/env bash
# SPDX-License-Identifier: MIT
# .ci/fuzz.sh [build dir] — builds the libFuzzer target tests/fuzz/fuzz_pool with clang-14
# under ASan+UBSan in the build dir (default build-fuzz), configured by .ci/asan-setup.sh
# unless it already is (.ci/test.sh passes its sanitizer build), replays the committed
# corpus, then fuzzes for FUZZ_TIME seconds (default 60) from a copy of it. Fails on any crash, leak,
# sanitizer report, timeout or variant mismatch (the target aborts), printing the input in hex;
# prints the executions, exec/s and coverage (libFuzzer's cov:/ft:) of the run.
# FUZZ_CORPUS_OUT=dir keeps the grown corpus there.
set -euo pipefail
cd "$(dirname "$0")/.."
bash .ci/deps.sh
# deps.sh installs clang-14, libclang-rt-14-dev (libFuzzer and the sanitizer
# runtimes, which clang-14 does not pull in) and llvm-14 (llvm-symbolizer).

fuzz_time=${FUZZ_TIME:-60}
dir=${1:-build-fuzz}
start=$(date +%s)
echo "== libFuzzer build in $dir (clang-14, ASan+UBSan) =="
if [ ! -f "$dir/build.ninja" ]; then
  bash .ci/asan-setup.sh "$dir" >/dev/null
fi
meson introspect "$dir" --buildoptions |
  python3 -c 'import json, sys
sys.exit(0 if any(o["name"] == "fuzz" and o["value"] for o in json.load(sys.stdin)) else 1)' ||
  { echo "fuzz: $dir is not configured with -Dfuzz=true (.ci/asan-setup.sh)" >&2; exit 1; }
# Only the fuzz executables (and the library); a build made for the suite has them already.
ninja -C "$dir" tests/fuzz/fuzz_pool tests/fuzz/fuzz_replay
echo "== built in $(( $(date +%s) - start )) s =="

export ASAN_OPTIONS=detect_leaks=1
if [ -x /usr/lib/llvm-14/bin/llvm-symbolizer ]; then
  export ASAN_SYMBOLIZER_PATH=/usr/lib/llvm-14/bin/llvm-symbolizer
fi
export UBSAN_OPTIONS=halt_on_error=1:print_stacktrace=1

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir "$work/corpus" "$work/artifacts"

# Seeds and regress-* inputs of earlier findings, at the replay's larger size cap.
echo "== corpus replay (tests/fuzz/corpus) =="
if ! "$dir"/tests/fuzz/fuzz_replay tests/fuzz/corpus >"$work/replay.log" 2>&1; then
  echo "== corpus replay FAILED; the end of its log: ==" >&2
  tail -n 12 "$work/replay.log" >&2
  echo "Reproduce with $dir/tests/fuzz/fuzz_replay <file>." >&2
  exit 1
fi
tail -n 1 "$work/replay.log"
cp tests/fuzz/corpus/* "$work/corpus/"

echo "== fuzzing for ${fuzz_time} s =="
rc=0
"$dir"/tests/fuzz/fuzz_pool "$work/corpus" -max_total_time="$fuzz_time" \
  -print_final_stats=1 -timeout=10 -rss_limit_mb=2048 -max_len=4096 \
  -artifact_prefix="$work/artifacts/" >"$work/fuzz.log" 2>&1 || rc=$?

# Progress lines: the first (seed corpus loaded) and the last few.
grep -E '^#[0-9]+' "$work/fuzz.log" | head -n 2 || true
echo "..."
grep -E '^#[0-9]+' "$work/fuzz.log" | tail -n 3 || true
if [ "$rc" -ne 0 ] || ls "$work/artifacts"/* >/dev/null 2>&1; then
  echo "== fuzz_pool FAILED (exit $rc); the end of its log: ==" >&2
  grep -vE '^#[0-9]+' "$work/fuzz.log" | tail -n 60 >&2
  for a in "$work/artifacts"/*; do
    [ -e "$a" ] || continue
    echo "== input $(basename "$a") ($(stat -c %s "$a") bytes), hex: ==" >&2
    od -An -tx1 -v "$a" | tr -d ' \n' >&2
    echo >&2
  done
  echo "Save it as tests/fuzz/corpus/regress-<what> and reproduce with" \
    "$dir/tests/fuzz/fuzz_replay <file>." >&2
  exit 1
fi
if [ -n "${FUZZ_CORPUS_OUT:-}" ]; then
  mkdir -p "$FUZZ_CORPUS_OUT"
  cp "$work/corpus/"* "$FUZZ_CORPUS_OUT/"
fi

last=$(grep -E '^#[0-9]+' "$work/fuzz.log" | tail -n 1)
execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$work/fuzz.log")
rate=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$work/fuzz.log")
rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$work/fuzz.log")
cov=$(sed -n 's/.* cov: \([0-9]*\).*/\1/p' <<<"$last")
ft=$(sed -n 's/.* ft: \([0-9]*\).*/\1/p' <<<"$last")
corp=$(sed -n 's/.* corp: \([^ ]*\).*/\1/p' <<<"$last")
echo "== fuzz_pool: ${execs} executions in ${fuzz_time} s (${rate} exec/s)," \
  "coverage cov: ${cov} ft: ${ft}, corpus ${corp}, peak RSS ${rss} MB;" \
  "no crash, leak or mismatch =="
echo "== fuzz.sh passed in $(( $(date +%s) - start )) s =="
