#!/usr/bin/env bash
# The README's main job, on a fresh Debian 12 machine: install the packages, build tt, then
#   1. unpack the bundled Multi30k (data/multi30k, checksums checked) and train a joint SentencePiece model
#   2. train a `tiny` Transformer English->German for 3,600 steps (reproducible from --seed) or 10 minutes,
#      whichever comes first, validating (loss, greedy BLEU) as it goes
#   3. average the last checkpoints (tt-average), translate test2016 greedy and with beam 4 (tt-translate)
#   4. score both with tt-bleu (BLEU, chrF), dump and render the attention of one sentence (tt-attnviz)
#   5. draw the learning curve (SVG) and print a summary of where everything is
# Needs nothing outside the repository. About 10 minutes of training on 2 cores (--quick: about 1 minute).
#
# usage: scripts/demo.sh [--no-build BUILD_DIR] [--quick] [--out DIR] [--lines N] [--steps N] [--threads N]
#   --no-build DIR  use the tools already built in DIR (default: install + build into build/)
#   --quick         a short run (fewer steps, lower BLEU) — what the test suite runs, with --lines
#   --out DIR       where the run, translations and pictures go (default: BUILD_DIR/demo)
#   --lines N       use only the first N training pairs and N test/validation pairs (end-to-end test)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build=build build_first=1 quick=0 out="" lines=0 steps="" threads=2
while (($#)); do
  case $1 in
    --no-build) build_first=0; build=${2:?--no-build needs a build directory}; shift 2 ;;
    --quick) quick=1; shift ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --lines) lines=${2:?--lines needs a number}; shift 2 ;;
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    --threads) threads=${2:?--threads needs a number}; shift 2 ;;
    -h | --help) sed -n '2,17p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "demo.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
run() { printf '$ %s\n' "$*" >&2; "$@"; }

if ((build_first)); then
  say "install dependencies"
  ./scripts/install-deps.sh
  say "build (Release)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
bin=$(cd "$build" && pwd)/bin
export PATH="$bin:$PATH"
out=${out:-$build/demo}
rm -rf "$out"
mkdir -p "$out/data"
out=$(cd "$out" && pwd)

# The recipe: tiny preset (4+4 layers, d_model 128), a joint 8k SentencePiece vocabulary, token batches,
# the inverse-square-root schedule with a peak learning rate (what short runs on small data want).
vocab=8000 batch_tokens=2048 lr=0.0015 warmup=400 valid_every=400 save_every=100 dropout=0.1
# bf16 products where the CPU has them and they are faster (AVX512-BF16 on a Zen 4, AMX; not an Intel Xeon
# without AMX, where they are slower than fp32): tt-train --precision auto decides, asked once by a one-step
# synthetic run so that the summary can name the pick. 3,600 steps, or 10 minutes where that comes first
# (validation BLEU is still rising at the end): on a Zen 4, 3,600 bf16 steps took 8.1 min (fp32 would stop
# near 3,000), on an Intel Xeon without AMX 3,000 fp32 steps took 6.9 min; bf16 stayed within 0.2 test BLEU
# of fp32 at equal steps. A checkpoint every 100 steps: the last 5 averaged span 400 steps, not 1,600.
precision=$(tt-train --preset tiny --d-model 32 --d-ff 64 --heads 2 --layers 1 --vocab-size 30 --threads 1 \
  --synthetic-steps 1 --batch-size 4 --src-len 6 --tgt-len 6 --precision auto -q |
  grep -o '"precision":"[a-z0-9]*"' | cut -d'"' -f4)
max_steps=${steps:-3600} time_limit=10m
if ((quick)); then
  vocab=1000 batch_tokens=2048 warmup=60 valid_every=100
  max_steps=${steps:-200}
fi

say "1. data: bundled Multi30k (train 29,000 / val 1,014 / test2016 1,000 pairs) and a joint subword model"
for f in train val test2016; do
  for l in en de; do gzip -dc "data/multi30k/$f.$l.gz" >"$out/data/$f.$l"; done
done
(cd "$out/data" && sha256sum --quiet -c "$root/data/multi30k/SHA256SUMS") ||
  { echo "demo.sh: the bundled Multi30k does not match its checksums (data/multi30k/SHA256SUMS)" >&2; exit 1; }
echo "checksums of all six files match data/multi30k/SHA256SUMS" >&2
if ((lines > 0)); then
  for f in train val test2016; do
    for l in en de; do head -n "$lines" "$out/data/$f.$l" >"$out/data/$f.$l.cut" && mv "$out/data/$f.$l.cut" "$out/data/$f.$l"; done
  done
  echo "(using the first $lines pairs of each split)" >&2
fi
d=$out/data
if ((lines > 0 && lines < 1000)); then vocab=300; fi  # a few hundred lines hold fewer pieces than 1000
run tt-tokenize train --input "$d/train.en" "$d/train.de" --model-prefix "$d/spm" --vocab-size "$vocab" \
  --model-type unigram --character-coverage 1.0 --threads "$threads" --quiet

say "2. train a tiny Transformer en->de ($max_steps steps or $time_limit, $precision products)"
started=$(date +%s)
run tt-train --preset tiny --dropout "$dropout" --spm "$d/spm.model" --train "$d/train.en" "$d/train.de" --valid "$d/val.en" "$d/val.de" \
  --batch-tokens "$batch_tokens" --lr "$lr" --warmup-steps "$warmup" --max-steps "$max_steps" --time-limit "$time_limit" \
  --valid-every "$valid_every" --save-every "$save_every" --keep-last 5 --precision "$precision" \
  --threads "$threads" --seed 1 -o "$out/run"
train_minutes=$(awk -v s="$started" -v e="$(date +%s)" 'BEGIN { printf "%.1f", (e - s) / 60 }')
trained_steps=$(grep '"type":"end"' "$out/run/log.jsonl" | grep -o '"step":[0-9]*' | cut -d: -f2)

say "3. average the last checkpoints, translate test2016"
run tt-average --last 5 "$out/run" -o "$out/model" --force
run tt-translate -m "$out/model" --beam 1 --threads "$threads" <"$d/test2016.en" >"$out/test2016.greedy.de"
run tt-translate -m "$out/model" --beam 4 --threads "$threads" <"$d/test2016.en" >"$out/test2016.beam4.de"

for f in "$out/test2016.greedy.de" "$out/test2016.beam4.de"; do  # one line out per line in, always
  [[ $(wc -l <"$f") == $(wc -l <"$d/test2016.en") ]] || { echo "demo.sh: $f has the wrong line count" >&2; exit 1; }
done

say "4. score with tt-bleu (sacreBLEU-identical)"
score() {  # "BLEU chrF" of a translation of test2016
  echo "$(tt-bleu "$d/test2016.de" -i "$1" -m bleu -b -w 2) $(tt-bleu "$d/test2016.de" -i "$1" -m chrf -b -w 2)"
}
greedy=$(score "$out/test2016.greedy.de")
beam=$(score "$out/test2016.beam4.de")
run tt-bleu "$d/test2016.de" -i "$out/test2016.beam4.de" -m bleu chrf -f text

if [[ -x $bin/tt-attnviz ]]; then
  say "   attention of the first test sentence"
  head -n 1 "$d/test2016.en" |
    run tt-attnviz -m "$out/model" --format json --html "$out/attention.html" >"$out/attention.jsonl"
fi

say "5. learning curve"
./scripts/learning_curve.sh "$out/run/log.jsonl" >"$out/learning_curve.svg"
grep -q '<polyline' "$out/learning_curve.svg" || { echo "demo.sh: the learning curve has no data" >&2; exit 1; }

say "summary"
read -r gb gc <<<"$greedy"
read -r bb bc <<<"$beam"
cat <<SUMMARY
tiny Transformer, Multi30k en->de, $trained_steps steps ($precision) in $train_minutes min on $threads threads ($(nproc) cores:
$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'))
  test2016, greedy, averaged model:  BLEU $gb  chrF $gc
  test2016, beam 4, averaged model:  BLEU $bb  chrF $bc
model directory:     $out/model   (tt-translate -m $out/model < in.en > out.de)
translations:        $out/test2016.beam4.de, $out/test2016.greedy.de
run directory:       $out/run     (checkpoints/, last, best, log.jsonl)
learning curve:      $out/learning_curve.svg
SUMMARY
if [[ -f $out/attention.jsonl ]]; then
  echo "attention maps:      $out/attention.jsonl, $out/attention.html"
fi
