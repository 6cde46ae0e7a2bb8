#!/usr/bin/env bash
# Regenerates expected/*.txt with sacreBLEU itself: for each line "NAME<TAB>ARGS" of cases.tsv,
#   sacrebleu ARGS -q > expected/NAME.txt     (run in this folder, NO_COLOR=1, sacrebleu 2.6.0)
# Usage: tests/data/metrics/make_expected.sh [path/to/sacrebleu]
set -euo pipefail
cd "$(dirname "$0")"
sacrebleu=${1:-sacrebleu}
mkdir -p expected
while IFS=$'\t' read -r name args; do
  # shellcheck disable=SC2086
  NO_COLOR=1 "$sacrebleu" $args -q > "expected/$name.txt"
done < cases.tsv
