#!/usr/bin/env bash
# Full comparison of tt-bleu against sacreBLEU over real MT outputs: every system in every folder of the
# data dir, scored against all references (and reference A alone), for every BLEU tokenizer and
# smoothing and the chrF/TER options, at corpus level and (for a few) sentence level, with -w 4.
# Prints each mismatch and a pass/fail summary; exits 1 on any mismatch.
#
#   scripts/check-sacrebleu.sh [DATA_DIR] [TT_BLEU]
#     DATA_DIR  default: ../shared/data/mt-outputs relative to the repository
#     TT_BLEU   default: build/bin/tt-bleu (or $TT_BLEU)
# sacreBLEU comes from $SACREBLEU, else a venv under ${TMPDIR:-/tmp} created on first use.
# sacreBLEU's TER is slow (about 10 s per run): TER_SYSTEMS=first checks TER on the first system of
# each folder only (default: all).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$repo/../shared/data/mt-outputs}
tt=${2:-${TT_BLEU:-$repo/build/bin/tt-bleu}}
[[ -x $tt ]] || { echo "check-sacrebleu: $tt not found; build tt-bleu or pass its path" >&2; exit 2; }
[[ -d $data ]] || { echo "check-sacrebleu: data dir $data not found" >&2; exit 2; }
if [[ -z ${SACREBLEU:-} ]]; then
  venv=${TMPDIR:-/tmp}/tt-sacrebleu-venv
  if [[ ! -x $venv/bin/sacrebleu ]]; then
    python3 -m venv "$venv" && "$venv/bin/pip" install -q 'sacrebleu==2.6.0' >&2
  fi
  SACREBLEU=$venv/bin/sacrebleu
fi
export NO_COLOR=1
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Each run scores all three metrics, one option variant of each, so every tokenizer and option is
# covered with a third of sacreBLEU's (slow) runs. The first three also run against reference A alone.
variants=(
  "-m bleu chrf ter"
  "-m bleu chrf ter -tok intl --chrf-word-order 2 --ter-normalized"
  "-m bleu chrf ter -tok zh --chrf-whitespace --ter-normalized --ter-asian-support"
  "-m bleu chrf ter -tok char --chrf-lowercase --ter-no-punct"
  "-m bleu chrf ter -tok none --chrf-eps-smoothing --ter-no-punct --ter-asian-support"
  "-m bleu chrf ter -lc -cc 4 -cw 1 --chrf-beta 3 --ter-case-sensitive"
  "-m bleu -s floor" "-m bleu -s add-k" "-m bleu -s none" "-m bleu -tok intl -lc -s floor -sv 0.2"
)
# sentence level (one score per line, so per-segment statistics are compared too)
sentence_variants=("-m bleu" "-m bleu -tok zh" "-m chrf -cw 2" "-m ter --ter-normalized")
checks=0 failures=0
compare() {  # name, args...
  local name=$1; shift
  checks=$((checks + 1))
  "$SACREBLEU" "$@" -w 4 -f text -q >"$tmp/want" 2>"$tmp/want.err" || true
  "$tt" "$@" -w 4 -f text -q >"$tmp/got" 2>"$tmp/got.err" || true
  if ! cmp -s "$tmp/want" "$tmp/got"; then
    failures=$((failures + 1))
    echo "MISMATCH $name: $*"
    diff "$tmp/want" "$tmp/got" | head -6
  fi
}
for dir in "$data"/*/; do
  refs_all=("$dir"ref.*)
  first_system=1
  for hyp in "$dir"hyp.*; do
    for k in "${!variants[@]}"; do
      v=${variants[$k]}
      if [[ ${TER_SYSTEMS:-all} == first && $first_system -eq 0 ]]; then
        v=$(sed -e 's/ ter//' -e 's/--ter-[a-z-]*//g' <<<"$v")
      fi
      # shellcheck disable=SC2086
      compare "$(basename "$dir")/$(basename "$hyp") refs" "${refs_all[@]}" -i "$hyp" $v
      # shellcheck disable=SC2086
      [[ ${#refs_all[@]} -gt 1 && $k -lt 3 ]] && compare "$(basename "$dir")/$(basename "$hyp") refA" "${refs_all[0]}" -i "$hyp" $v
    done
    for v in "${sentence_variants[@]}"; do
      [[ ${TER_SYSTEMS:-all} == first && $first_system -eq 0 && $v == *ter* ]] && continue
      # shellcheck disable=SC2086
      compare "$(basename "$dir")/$(basename "$hyp") sentences" "${refs_all[@]}" -i "$hyp" $v --sentence-level
    done
    first_system=0
    echo "check-sacrebleu: $(basename "$dir")/$(basename "$hyp") done ($checks comparisons, $failures mismatches)" >&2
  done
done
echo "check-sacrebleu: $checks comparisons, $failures mismatches"
if [[ $failures -eq 0 ]]; then echo "PASS"; else echo "FAIL"; exit 1; fi
