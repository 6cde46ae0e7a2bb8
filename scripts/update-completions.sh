#!/usr/bin/env bash
# Rewrites completions/ from the tools' own flag definitions (`TOOL --completions bash|zsh|fish`, which the
# build also writes to BUILD/completions/). Run it after changing a flag; tests/cli checks the two agree.
#   scripts/update-completions.sh [BUILD]     (default: build)
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build}
cmake --build "$build" --target completions >/dev/null
for shell in bash zsh fish; do
  cp "$build/completions/$shell/"* "completions/$shell/"
done
echo "update-completions: completions/ now matches $build/completions/" >&2
