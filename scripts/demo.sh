#!/usr/bin/env bash
# The README's "install everything and run the main job": installs the Debian packages, builds tt
# (Release, every target), then runs the most complete end-to-end job tt has so far:
#   1. tt-train --dry-run: resolve and validate a configuration, count its parameters
#   2. a short training run on a learnable synthetic task (copy the source) whose loss visibly falls,
#      saved as a model directory (config.json + model.safetensors) and reloaded to continue
#   3. tt-tokenize and tt-bleu on tiny bundled inputs, when those tools are built
# Needs nothing outside the repository; a few minutes on 2 cores.
# usage: scripts/demo.sh [--no-build] [BUILD_DIR]   (default: build; --no-build uses the tools already there)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
build_first=1
if [[ ${1:-} == --no-build ]]; then build_first=0; shift; fi
build=${1:-build}

say() { printf '\n\033[1m== %s\033[0m\n' "$*" >&2; }
run() {
  printf '$ %s\n' "$*" >&2
  "$@"
}

if ((build_first)); then
  say "install dependencies"
  ./scripts/install-deps.sh
  say "build (Release)"
  cmake -S . -B "$build" -DCMAKE_BUILD_TYPE=Release >/dev/null
  cmake --build "$build" -j"$(nproc)"
fi
bin=$root/$build/bin
export PATH="$bin:$PATH"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
cd "$work"

say "1. resolve a model configuration (tiny preset, vocabulary 1000)"
run tt-train --preset tiny --vocab-size 1000 --dry-run
# One JSON field without needing python: "parameters":N
field() { grep -o "\"$1\":[^,}]*" "${2:--}" | head -n 1 | cut -d: -f2; }
printf '$ tt-train --preset base --vocab-size 37000 --dry-run\n' >&2
echo "base with a 37000 vocabulary: $(tt-train --preset base --vocab-size 37000 --dry-run | field parameters)" \
  "parameters (the paper's 65M)"
echo "and an invalid one (d_model not divisible by heads) is refused:" >&2
tt-train --preset tiny --vocab-size 1000 --d-model 130 --dry-run || echo "(exit status $?)" >&2

say "2. train a small tiny-preset Transformer to copy its input (synthetic data, CPU)"
# 8-token sentences over a 16-word vocabulary, two layers per stack, no dropout: the loss falls from
# about 3.5 (guessing) to well under 1 (copying) in a few hundred 0.03-second steps. A model this small
# runs best on one thread.
common=(--synthetic-task copy --batch-size 64 --src-len 8 --tgt-len 8 --warmup-steps 40 --lr-scale 0.5
  --threads 1 --device cpu)
first=(tt-train --preset tiny --layers 2 --vocab-size 16 --dropout 0 --synthetic-steps 300 "${common[@]}" -o copy-model)
printf '$ %s\n' "${first[*]}" >&2
"${first[@]}" 2>train.log >first.json
awk '/^step/ && (++n == 1 || n % 25 == 0)' train.log >&2
echo "saved model directory:" >&2
ls -l copy-model >&2

say "   reload the saved model and continue: the loss starts where it ended, not from scratch"
run tt-train --init copy-model --synthetic-steps 5 --seed 7 "${common[@]}" >second.json
echo "result line (stdout) of the first run, without its per-step times:"
sed 's/,"step_times":\[[^]]*\]//' first.json
echo "loss $(field first_loss first.json) at the start -> $(field last_loss first.json) after" \
  "$(field steps first.json) steps; $(field first_loss second.json) on a fresh batch after reloading"

say "3. subwords and scores"
if [[ -x $bin/tt-tokenize ]]; then
  run tt-tokenize train --input "$root/tests/data/tokenize/corpus.en" --model-prefix demo --vocab-size 100 --quiet
  echo "Two dogs are playing in the snow." | run tt-tokenize encode -m demo.model
  echo "Two dogs are playing in the snow." | tt-tokenize encode -m demo.model --format id |
    tt-tokenize decode -m demo.model --format id
else
  echo "tt-tokenize is not built yet: skipped" >&2
fi
if [[ -x $bin/tt-bleu ]]; then
  printf 'A man is riding a bike down the street.\nTwo dogs play in the snow.\n' >ref.txt
  printf 'A man rides a bike down the street.\nTwo dogs are playing in the snow.\n' >hyp.txt
  run tt-bleu ref.txt -i hyp.txt -m bleu chrf -f text
else
  echo "tt-bleu is not built yet: skipped" >&2
fi

say "done"
