#!/usr/bin/env bash
# tt-tokenize encode vs Debian's spm_encode (package `sentencepiece`): same model, same large input
# (Multi30k train.en + train.de repeated REPEAT times), output checked identical, best of RUNS timings.
# Target: ratio ~1.0 on one thread, near 2x on two threads (with two idle cores).
# Usage: bench/tokenize_speed.sh [DATA_DIR] [REPEAT]   (defaults: ../shared/data/multi30k, 10)
#        TT_TOKENIZE=path/to/tt-tokenize overrides the binary (default: build/bin/tt-tokenize); RUNS=3.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$repo/../shared/data/multi30k}
repeat=${2:-10}
runs=${RUNS:-3}
tok=${TT_TOKENIZE:-$repo/build/bin/tt-tokenize}
[[ -x $tok ]] || { echo "tokenize_speed: $tok not built" >&2; exit 2; }
command -v spm_encode >/dev/null || { echo "tokenize_speed: spm_encode missing (apt-get install sentencepiece)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
"$tok" train --input "$data/train.en" "$data/train.de" --model-prefix "$work/m" --vocab-size 8000 --quiet
for ((i = 0; i < repeat; i++)); do cat "$data/train.en" "$data/train.de"; done >"$work/input.txt"
echo "input: $(wc -l <"$work/input.txt") lines, $(($(wc -c <"$work/input.txt") / 1048576)) MiB; model: unigram 8000; $(nproc) cores"

best_time() {  # best_time OUTPUT_FILE COMMAND... : best wall time of $runs runs, in seconds
  local out=$1 best="" t0 t1 t
  shift
  for ((r = 0; r < runs; r++)); do
    t0=$(date +%s.%N)
    "$@" <"$work/input.txt" >"$out"
    t1=$(date +%s.%N)
    t=$(echo "$t1 - $t0" | bc -l)
    if [[ -z $best ]] || (($(echo "$t < $best" | bc -l))); then best=$t; fi
  done
  printf '%.3f' "$best"
}

for fmt in piece id; do
  spm=$(best_time "$work/spm.out" spm_encode --model="$work/m.model" --output_format="$fmt")
  t1=$(best_time "$work/tt1.out" "$tok" encode --model "$work/m.model" --format "$fmt" --threads 1)
  t2=$(best_time "$work/tt2.out" "$tok" encode --model "$work/m.model" --format "$fmt" --threads 2)
  cmp -s "$work/spm.out" "$work/tt1.out" && cmp -s "$work/spm.out" "$work/tt2.out" ||
    { echo "tokenize_speed: outputs differ from spm_encode ($fmt)" >&2; exit 1; }
  printf '%-5s spm_encode %7ss | tt-tokenize 1 thread %7ss (speed-up %.2fx) | 2 threads %7ss (speed-up %.2fx)\n' \
    "$fmt" "$spm" "$t1" "$(echo "$spm / $t1" | bc -l)" "$t2" "$(echo "$spm / $t2" | bc -l)"
done
