#!/usr/bin/env bash
# The whole test suite: install dependencies, build (Release), run every CTest test.
# On a host without a GPU the CUDA tests (label `cuda`) are built but not run, and the script says so.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/install-deps.sh
jobs=$(nproc)
cmake -S . -B build -DCMAKE_BUILD_TYPE=Release -DTT_BUILD_TESTS=ON
cmake --build build -j"$jobs"
exclude=()
if ! nvidia-smi -L >/dev/null 2>&1; then
  echo "test.sh: no GPU on this host: CUDA tests (label 'cuda') are NOT run" >&2
  exclude=(-LE cuda)
fi
ctest --test-dir build --output-on-failure -j"$jobs" "${exclude[@]}" "$@"
