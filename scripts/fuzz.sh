#!/usr/bin/env bash
# Builds the libFuzzer targets (tests/fuzz/fuzz_*.cpp) with clang + ASan/UBSan in build-fuzz and runs each
# for SECONDS (default 30) on its seed corpus tests/fuzz/corpus/<name>/. New interesting inputs go to
# build-fuzz/corpus/<name>/ (the seed corpus in git is not touched); a crash leaves its input in
# build-fuzz/artifacts/ and makes the script exit 1. Add a crashing input to the seed corpus with the fix.
#
#   scripts/fuzz.sh [SECONDS] [TARGET...]     e.g. scripts/fuzz.sh 600 config
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-30}
shift || true
jobs=${JOBS:-$(nproc)}
export CCACHE_BASEDIR=${CCACHE_BASEDIR:-$PWD}
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_WITH_CUDA=OFF \
  -DTT_BUILD_TESTS=OFF -DTT_FUZZ=ON "${launcher[@]}" >/dev/null
cmake --build build-fuzz -j"$jobs" --target fuzzers
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  for f in tests/fuzz/fuzz_*.cpp; do t=${f##*/fuzz_}; targets+=("${t%.cpp}"); done
fi
mkdir -p build-fuzz/artifacts
export ASAN_OPTIONS=${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1}
export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
failed=()
for t in "${targets[@]}"; do
  mkdir -p "build-fuzz/corpus/$t"
  echo "fuzz.sh: fuzz_$t for ${seconds}s" >&2
  # -rss_limit_mb: a reader that allocates what a corrupt header says must be caught, not swap.
  if ! "build-fuzz/fuzz/fuzz_$t" -max_total_time="$seconds" -rss_limit_mb=2048 -max_len=65536 \
      -artifact_prefix="build-fuzz/artifacts/$t-" -print_final_stats=1 \
      "build-fuzz/corpus/$t" "tests/fuzz/corpus/$t" 2>"build-fuzz/fuzz_$t.log"; then
    failed+=("$t")
    tail -40 "build-fuzz/fuzz_$t.log" >&2
  fi
  grep -E "^stat::number_of_executed_units|^stat::new_units_added" "build-fuzz/fuzz_$t.log" | sed "s/^/  $t /" >&2 || true
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz.sh: FAILED: ${failed[*]} (inputs in build-fuzz/artifacts/)" >&2
  exit 1
fi
echo "fuzz.sh: ${#targets[@]} targets, ${seconds}s each: no findings" >&2
