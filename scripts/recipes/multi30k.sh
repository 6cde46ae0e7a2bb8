#!/usr/bin/env bash
# The full Multi30k English->German recipe: joint SentencePiece model, `tiny` preset with layer norm before
# each sub-layer (pre-LN, which trains well at twice the post-LN peak learning rate), token batches,
# inverse-square-root schedule, subword sampling and a moving average of the weights, validation BLEU every
# 500 steps with early stopping; two such models in one time budget (the second gets what the first's early
# stop left), and sacreBLEU-identical scores on test2016 printed as a table for each (bench/quality.sh: last
# checkpoint, average of the last 5, average of the best 5; greedy and beam 4) and for their ensemble.
#
# usage: scripts/recipes/multi30k.sh [DATA_DIR] [RUN_DIR]
#   DATA_DIR  holds train/val/test2016 .en/.de (default: the bundled data/multi30k, decompressed into RUN_DIR)
#   RUN_DIR   default: runs/multi30k (models in train/ and train2/)
# Environment: THREADS (2), TIME_LIMIT (120m, for all models), MODELS (2), MAX_STEPS (0: none), VOCAB (8000),
#   BATCH_TOKENS (4096), NORM (pre; post: the paper's), LR (0.005; post-LN fails at it: use 0.0025), WARMUP
#   (2000), DROPOUT (0.3), SPM_ALPHA (0.5; 0: off), EMA_DECAY (0.999; 0: off), SEED (1; model i: SEED + i - 1),
#   PRECISION (auto: bf16 where the CPU has AVX512-BF16 or AMX and it is faster, else fp32; or fp32, bf16);
#   PATH must hold the tt tools (or TT_BIN=build/bin).
# Measured with these defaults on 2 AMD EPYC Zen 4 cores (AVX512-BF16, no AMX), bf16 (2026-12-07): model 1
#   early-stopped at 18,500 steps after 80 min (best validation BLEU 41.8 at 15,500), test2016 beam 4 BLEU
#   41.1 / chrF 65.1 (average of the last 5), 41.3 (last checkpoint); model 2, 8,306 steps in the 35 min left,
#   40.0 / 40.2; their ensemble 41.55 / chrF 65.3 (41.73 from the two last checkpoints).
#   The post-LN recipe of before (NORM=post LR=0.0025 MODELS=1): early stop at 19,500 steps in 75 min, best
#   validation 41.1, test2016 beam 4 40.6 (average of the last 5), 40.7 (last checkpoint).
#   Post-LN without sampling or average (also SPM_ALPHA=0 EMA_DECAY=0): 16,000 steps in 62 min, 40.0 / 39.5.
# (The demo keeps post-LN, dropout 0.1 and neither sampling nor the average for its 10 minutes.)
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:-} run=${2:-runs/multi30k}
export PATH="${TT_BIN:-$root/build/bin}:$PATH"
threads=${THREADS:-2}
# TIME_LIMIT is the whole budget (tt-train's duration grammar: a number and s, m, h or d): each model gets what
# the ones before it left (early stopping ends a run before its limit), with seeds SEED, SEED + 1, ...
limit=${TIME_LIMIT:-120m}
[[ $limit =~ ^([0-9]+(\.[0-9]+)?)([smhd]?)$ ]] ||
  { echo "multi30k.sh: TIME_LIMIT: expected a duration such as 90s, 10m or 2h, got '$limit'" >&2; exit 1; }
budget=$(awk -v n="${BASH_REMATCH[1]}" -v u="${BASH_REMATCH[3]}" \
  'BEGIN { print int(n * (u == "d" ? 86400 : u == "h" ? 3600 : u == "m" ? 60 : 1)) }')

mkdir -p "$run"
if [[ -z $data ]]; then
  data=$run/data
  mkdir -p "$data"
  for f in train val test2016; do for l in en de; do gzip -dc "$root/data/multi30k/$f.$l.gz" >"$data/$f.$l"; done; done
  (cd "$data" && sha256sum --quiet -c "$root/data/multi30k/SHA256SUMS")
fi
for f in train val test2016; do for l in en de; do
  [[ -r $data/$f.$l ]] || { echo "multi30k.sh: missing $data/$f.$l" >&2; exit 1; }
done; done

tt-tokenize train --input "$data/train.en" "$data/train.de" --model-prefix "$run/spm" --vocab-size "${VOCAB:-8000}" \
  --model-type unigram --character-coverage 1.0 --threads "$threads" --quiet
precision=${PRECISION:-auto}  # tt-train's header names the precision auto picked
models=${MODELS:-2}
used=0  # seconds the models so far trained (their logs' last elapsed_s)
dirs=()
for ((i = 1; i <= models; i++)); do
  dir=$run/train; ((i > 1)) && dir=$run/train$i
  left=$((budget - used))
  ((left >= 60)) || { echo "multi30k.sh: no time left for model $i of $models" >&2; break; }
  stop=(--time-limit "${left}s" --early-stop 6)
  [[ ${MAX_STEPS:-0} -gt 0 ]] && stop+=(--max-steps "$MAX_STEPS")
  tt-train --preset tiny --norm "${NORM:-pre}" --dropout "${DROPOUT:-0.3}" --spm "$run/spm.model" \
    --train "$data/train.en" "$data/train.de" --valid "$data/val.en" "$data/val.de" \
    --batch-tokens "${BATCH_TOKENS:-4096}" --lr "${LR:-0.005}" --warmup-steps "${WARMUP:-2000}" \
    --spm-alpha "${SPM_ALPHA:-0.5}" --ema-decay "${EMA_DECAY:-0.999}" --valid-every 500 --keep-last 5 "${stop[@]}" \
    --threads "$threads" --seed $((${SEED:-1} + i - 1)) --precision "$precision" -o "$dir"
  dirs+=("$dir")
  seconds=$(grep -o '"elapsed_s":[0-9.]*' "$dir/log.jsonl" | tail -n 1 | cut -d: -f2)
  used=$((used + ${seconds%.*} + 1))  # rounded up
done
for d in "${dirs[@]}"; do
  ((${#dirs[@]} > 1)) && echo "$d:"
  THREADS=$threads "$root/bench/quality.sh" "$d" "$data/test2016.en" "$data/test2016.de"
done
if ((${#dirs[@]} > 1)); then  # the ensemble of each run's average of its last 5 checkpoints
  members=()
  for d in "${dirs[@]}"; do tt-average --last 5 "$d" -o "$d-avg5" --force -q; members+=(-m "$d-avg5"); done
  tt-translate "${members[@]}" --beam 4 --threads "$threads" -q <"$data/test2016.en" >"$run/ensemble.hyp"
  minutes=$(awk -v s="$used" 'BEGIN { printf "%.1f", s / 60 }')
  printf '%-27s %7s %8s %8s %8s\n' "ensemble of ${#dirs[@]}, beam 4" - "$minutes" \
    "$(tt-bleu "$data/test2016.de" -i "$run/ensemble.hyp" -m bleu -b -w 2)" \
    "$(tt-bleu "$data/test2016.de" -i "$run/ensemble.hyp" -m chrf -b -w 2)"
fi
