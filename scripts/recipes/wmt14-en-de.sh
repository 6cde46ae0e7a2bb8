#!/usr/bin/env bash
# The paper's base recipe (Vaswani et al. 2017, §5): joint ~37k BPE vocabulary, `base` preset, about 25k
# source + 25k target tokens per step (token batches x --accum), the paper's schedule (warmup 4000), 100k
# steps, a checkpoint every 10 minutes, the average of the last 5, beam 4, alpha 0.6, max length input + 50,
# scored on newstest2014. Meant for a GPU host (--device cuda) or an MPI cluster (mpirun -np N ...).
#
# usage: scripts/recipes/wmt14-en-de.sh DATA_DIR [RUN_DIR]
#   DATA_DIR holds train.{en,de} (WMT14 en-de), newstest2013.{en,de} (validation), newstest2014.{en,de} (test)
# Environment (defaults = the paper): VOCAB 37000, STEPS 100000, BATCH_TOKENS 6250 and ACCUM 4 (25k a side),
#   DEVICE auto, THREADS 0 (all cores), LINES (0: all; use the first N training pairs — for a smoke test),
#   VALID_EVERY 5000, SAVE_MINUTES 10, LAUNCH (a prefix such as "mpirun -np 8").
set -euo pipefail
root=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:?usage: wmt14-en-de.sh DATA_DIR [RUN_DIR]} run=${2:-runs/wmt14-en-de}
export PATH="${TT_BIN:-$root/build/bin}:$PATH"
for f in train.en train.de newstest2013.en newstest2013.de newstest2014.en newstest2014.de; do
  [[ -r $data/$f ]] || { echo "wmt14-en-de.sh: missing $data/$f" >&2; exit 1; }
done
mkdir -p "$run"
train_en=$data/train.en train_de=$data/train.de
if [[ ${LINES:-0} -gt 0 ]]; then
  head -n "$LINES" "$data/train.en" >"$run/train.en"; head -n "$LINES" "$data/train.de" >"$run/train.de"
  train_en=$run/train.en train_de=$run/train.de
fi
tt-tokenize train --input "$train_en" "$train_de" --model-prefix "$run/bpe" --vocab-size "${VOCAB:-37000}" \
  --model-type bpe --character-coverage 1.0 --input-sentence-size 10000000 --seed 1 --quiet
${LAUNCH:-} tt-train --preset base --spm "$run/bpe.model" --train "$train_en" "$train_de" \
  --valid "$data/newstest2013.en" "$data/newstest2013.de" --valid-metric loss \
  --batch-tokens "${BATCH_TOKENS:-6250}" --accum "${ACCUM:-4}" --warmup-steps 4000 \
  --max-steps "${STEPS:-100000}" --valid-every "${VALID_EVERY:-5000}" --save-minutes "${SAVE_MINUTES:-10}" \
  --keep-last 5 --device "${DEVICE:-auto}" --threads "${THREADS:-0}" --seed 1 -o "$run/train"
tt-average --last 5 "$run/train" -o "$run/avg" --force
tt-translate -m "$run/avg" --beam 4 --alpha 0.6 --length-penalty gnmt --max-len-a 1 --max-len-b 50 \
  --device "${DEVICE:-auto}" --threads "${THREADS:-0}" <"$data/newstest2014.en" >"$run/newstest2014.de"
tt-bleu "$data/newstest2014.de" -i "$run/newstest2014.de" -m bleu chrf -f text
