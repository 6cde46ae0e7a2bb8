#!/usr/bin/env bash
# The whole test suite: install dependencies, build (Release), run every CTest test.
# On a host without a GPU the CUDA tests (label `cuda`) are built but not run, and the script says so.
#
#   scripts/test.sh [--sanitize] [CTEST ARGS...]
#     --sanitize  build in build-asan with AddressSanitizer + UndefinedBehaviorSanitizer (CUDA off,
#                 -O1 with line tables) and run the same suite there: any sanitizer report fails the test
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh --test
jobs=$(nproc)
build=build
config=(-DCMAKE_BUILD_TYPE=Release -DTT_BUILD_TESTS=ON)
if [ "${1:-}" = "--sanitize" ]; then
  shift
  build=build-asan
  config=(-DCMAKE_BUILD_TYPE=RelWithDebInfo -DTT_BUILD_TESTS=ON -DTT_WITH_CUDA=OFF -DTT_MPI=OFF -DTT_SANITIZE=ON)
  # (MPI off: Open MPI keeps memory until exit that LeakSanitizer would report; the MPI tests skip)
  # halt_on_error: a report is a failure; detect_leaks: a leak is one too. oneDNN's JIT and OpenMP's
  # thread pool keep memory on purpose until exit; those are not leaks in tt (see tests/lsan.supp).
  export ASAN_OPTIONS=${ASAN_OPTIONS:-halt_on_error=1:abort_on_error=1:detect_leaks=1}
  export LSAN_OPTIONS=${LSAN_OPTIONS:-suppressions=$PWD/tests/lsan.supp:print_suppressions=0}
  export UBSAN_OPTIONS=${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}
fi
launcher=()
command -v ccache >/dev/null && launcher=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
cmake -S . -B "$build" "${config[@]}" "${launcher[@]}"
cmake --build "$build" -j"$jobs"
exclude=()
if [ "$build" = build-asan ]; then
  exclude=(-LE cuda)
elif ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test.sh: no GPU on this host: CUDA tests (label 'cuda') are NOT run" >&2
  exclude=(-LE cuda)
fi
ctest --test-dir "$build" --output-on-failure -j"$jobs" "${exclude[@]}" "$@"
