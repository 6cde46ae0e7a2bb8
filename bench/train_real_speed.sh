#!/usr/bin/env bash
# Training speed on real batches: the bundled Multi30k (data/multi30k), a joint 8k SentencePiece model and
# the demo's recipe (scripts/demo.sh: tiny, dropout 0.1, token batches), for one or more tt-train binaries
# run ALTERNATELY (A, B, A, B, ...) because the machine is shared and noisy: compare binaries by the ratio
# within one run, with the CPU model this prints first.
#
# usage: bench/train_real_speed.sh [TT_TRAIN...]     (default: build/bin/tt-train)
#   A TT_TRAIN may carry flags, as one word: "build/bin/tt-train --spm-alpha 0.1" times subword sampling
#   against the same binary without it.
# environment:
#   TOKENS="2048 4096"  --batch-tokens values (padded tokens a side)
#   STEPS=60            optimizer steps a run; tok/s is the median of the log's reports after the first, and
#                       the whole run's rate (their harmonic mean: work done off the training threads, such
#                       as an epoch's subword sampling, shows there even when most reports miss it)
#   THREADS=2  ROUNDS=2  PRESET=tiny
#   WORK=DIR            keep the unpacked corpus and SentencePiece model there (default: a temporary dir)
#   REALTIME=1          run each tt-train under SCHED_FIFO (chrt -f 10; needs root), as train_speed.sh --realtime
# tt-tokenize (for the SentencePiece model) is the one beside the last binary.
set -euo pipefail
cd "$(dirname "$0")/.."

tokens=${TOKENS:-"2048 4096"}
steps=${STEPS:-60}
threads=${THREADS:-2}
rounds=${ROUNDS:-2}
preset=${PRESET:-tiny}
bins=("$@")
prio=()
[[ ${REALTIME:-0} == 1 ]] && prio=(chrt -f 10)
((${#bins[@]})) || bins=(build/bin/tt-train)
for b in "${bins[@]}"; do
  read -r exe _ <<<"$b"
  [[ -x $exe ]] || { echo "train_real_speed: $exe is not an executable tt-train" >&2; exit 1; }
done
read -r exe _ <<<"${bins[-1]}"
tokenize=$(dirname "$exe")/tt-tokenize
[[ -x $tokenize ]] || { echo "train_real_speed: no tt-tokenize beside ${bins[-1]}" >&2; exit 1; }

if [[ -n ${WORK:-} ]]; then
  work=$WORK
  mkdir -p "$work"
else
  work=$(mktemp -d)
  trap 'rm -rf "$work"' EXIT
fi
for l in en de; do
  [[ -s $work/train.$l ]] || gzip -dc "data/multi30k/train.$l.gz" >"$work/train.$l"
done
if [[ ! -s $work/spm.model ]]; then
  echo "train_real_speed: training the SentencePiece model (8000 pieces) in $work" >&2
  "$tokenize" train --input "$work/train.en" "$work/train.de" --model-prefix "$work/spm" --vocab-size 8000 \
    --model-type unigram --character-coverage 1.0 --threads "$threads" --quiet
fi

cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
echo "train_real_speed: CPU $cpu_model; $threads threads, $steps steps${prio:+, SCHED_FIFO}, load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
results=$work/results.txt
: >"$results"
for t in $tokens; do
  for ((round = 1; round <= rounds; round++)); do
    for i in "${!bins[@]}"; do
      run=$work/run-$t-$i
      rm -rf "$run"
      read -r -a cmd <<<"${bins[$i]}"
      "${prio[@]}" "${cmd[@]}" --preset "$preset" --dropout 0.1 --spm "$work/spm.model" --train "$work/train.en" "$work/train.de" \
        --batch-tokens "$t" --lr 0.0015 --warmup-steps 400 --max-steps "$steps" --report-every 10 \
        --threads "$threads" --device cpu --seed 1 -q -o "$run" >/dev/null
      # The first report includes the warm-up (arena growth, oneDNN primitives): skipped.
      read -r tok_s whole < <(python3 -c '
import json, statistics, sys
r = [x["tgt_tok_s"] for x in map(json.loads, open(sys.argv[1])) if x["type"] == "train"][1:]
print(round(statistics.median(r), 1), round(statistics.harmonic_mean(r), 1))' "$run/log.jsonl")
      echo "$t $i $tok_s $whole" >>"$results"
      echo "train_real_speed: batch-tokens $t round $round ${bins[$i]}: $tok_s tgt tok/s (whole run $whole)" >&2
    done
  done
done
python3 - "$results" "${bins[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if l.strip()]
bins = sys.argv[2:]
print(f"{'batch tokens':>12}  {'rate':>10}  " + "  ".join(f"{b:>36}" for b in bins) + ("  ratio (last/first)" if len(bins) > 1 else ""))
for t in dict.fromkeys(r[0] for r in rows):
    for col, name in ((2, "median"), (3, "whole run")):
        med = [statistics.median(float(r[col]) for r in rows if r[0] == t and int(r[1]) == i) for i in range(len(bins))]
        print(f"{t:>12}  {name:>10}  " + "  ".join(f"{m:>36.1f}" for m in med) + (f"  {med[-1] / med[0]:.3f}" if len(bins) > 1 else ""))
PY
