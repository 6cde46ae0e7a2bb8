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

# best_time OUTPUT_FILE COMMAND... -> "WALL CPU": the best wall time of $runs runs and the CPU time
# (user + system) of that run, in seconds. On a busy machine the wall ratio of 2 threads understates the
# speed-up; the CPU ratio shows whether the threads add work (1.0: none).
best_time() {
  local out=$1 best="" cpu="" w u s
  shift
  for ((r = 0; r < runs; r++)); do
    read -r w u s < <( { /usr/bin/time -f "%e %U %S" "$@" <"$work/input.txt" >"$out"; } 2>&1 | tail -n 1)
    if [[ -z $best ]] || (($(echo "$w < $best" | bc -l))); then best=$w; cpu=$(echo "$u + $s" | bc -l); fi
  done
  echo "$best $cpu"
}

echo "load average at start: $(cut -d' ' -f1-3 /proc/loadavg)"
for fmt in piece id; do
  read -r spm spm_cpu < <(best_time "$work/spm.out" spm_encode --model="$work/m.model" --output_format="$fmt")
  read -r t1 t1_cpu < <(best_time "$work/tt1.out" "$tok" encode --model "$work/m.model" --format "$fmt" --threads 1)
  read -r t2 t2_cpu < <(best_time "$work/tt2.out" "$tok" encode --model "$work/m.model" --format "$fmt" --threads 2)
  cmp -s "$work/spm.out" "$work/tt1.out" && cmp -s "$work/spm.out" "$work/tt2.out" ||
    { echo "tokenize_speed: outputs differ from spm_encode ($fmt)" >&2; exit 1; }
  printf '%-5s spm_encode %6.2fs (cpu %6.2fs) | tt-tokenize 1 thread %6.2fs (cpu %6.2fs): %.2fx | 2 threads %6.2fs (cpu %6.2fs): %.2fx\n' \
    "$fmt" "$spm" "$spm_cpu" "$t1" "$t1_cpu" "$(echo "$spm / $t1" | bc -l)" "$t2" "$t2_cpu" "$(echo "$spm / $t2" | bc -l)"
done
echo "ratios are spm_encode wall time / tt-tokenize wall time (higher is faster)"
