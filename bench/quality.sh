#!/usr/bin/env bash
# The quality table of a tt-train run, checked like a paper's: test BLEU and chrF (tt-bleu, sacreBLEU-
# identical) of the last checkpoint greedy and with beam 4, of the average of the last 5 checkpoints
# (tt-average) greedy and beam 4, and, when the run validated (run/best), of the average of the 5 best. Flags what should not happen: averaging below the last checkpoint by more
# than noise (0.5 BLEU), beam 4 below greedy.
# usage: bench/quality.sh RUN_DIR TEST_SRC TEST_REF     (THREADS, default 2; PATH or TT_BIN for the tools)
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
run=${1:?usage: quality.sh RUN_DIR TEST_SRC TEST_REF} src=${2:?TEST_SRC} ref=${3:?TEST_REF}
export PATH="${TT_BIN:-$root/build/bin}:$PATH"
threads=${THREADS:-2}
[[ -e $run/last ]] || { echo "quality.sh: $run has no last checkpoint (run/last)" >&2; exit 1; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tt-average --last 5 "$run" -o "$work/avg" -q
models=(last avg)
if [[ -e $run/best ]]; then
  tt-average --best 5 "$run" -o "$work/best" -q
  models+=(best)
fi
num() { grep -o "\"$1\":[0-9.e+-]*" "$2" | tail -n 1 | cut -d: -f2; }
steps=$(num step "$run/log.jsonl")
minutes=$(awk -v s="$(num elapsed_s "$run/log.jsonl")" 'BEGIN { printf "%.1f", s / 60 }')
printf '%-27s %7s %8s %8s %8s\n' model steps minutes BLEU chrF
declare -A bleu
for model in "${models[@]}"; do
  dir=$run/last; [[ $model != last ]] && dir=$work/$model
  for beam in 1 4; do
    tt-translate -m "$dir" --beam "$beam" --threads "$threads" -q <"$src" >"$work/hyp"
    b=$(tt-bleu "$ref" -i "$work/hyp" -m bleu -b -w 2)
    c=$(tt-bleu "$ref" -i "$work/hyp" -m chrf -b -w 2)
    bleu[$model$beam]=$b
    name="last checkpoint"; [[ $model == avg ]] && name="average of last 5"; [[ $model == best ]] && name="average of best 5"
    what=$([[ $beam == 1 ]] && echo greedy || echo "beam 4")
    printf '%-27s %7s %8s %8s %8s\n' "$name, $what" "$steps" "$minutes" "$b" "$c"
  done
done
awk -v a="${bleu[avg4]}" -v l="${bleu[last4]}" -v g="${bleu[avg1]}" 'BEGIN {
  if (a < l - 0.5) print "quality.sh: WARNING: the average scores " l - a " BLEU below the last checkpoint"
  if (a < g) print "quality.sh: WARNING: beam 4 scores below greedy on the averaged model"
}' >&2
