#!/usr/bin/env bash
# Checks tt-tokenize against Debian's SentencePiece tools (package `sentencepiece`) on real text:
#   - encode is byte-identical to spm_encode and decode to spm_decode, for pieces and ids, 1 and 2 threads;
#   - `tt-tokenize train` gives the same vocabulary as spm_train with the same options;
# for a unigram and a BPE model trained on Multi30k train, checked on Multi30k validation.
# Usage: scripts/check-spm.sh [DATA_DIR]   (default: ../shared/data/multi30k relative to the repo)
#        TT_TOKENIZE=path/to/tt-tokenize overrides the binary (default: build/bin/tt-tokenize).
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$repo/../shared/data/multi30k}
tok=${TT_TOKENIZE:-$repo/build/bin/tt-tokenize}
for f in "$data/train.en" "$data/train.de" "$data/val.en" "$data/val.de"; do
  [[ -r $f ]] || { echo "check-spm: cannot read $f (pass the Multi30k directory as an argument)" >&2; exit 2; }
done
[[ -x $tok ]] || { echo "check-spm: $tok not built (cmake --build build --target tt-tokenize)" >&2; exit 2; }
command -v spm_encode >/dev/null || { echo "check-spm: spm_encode missing (apt-get install sentencepiece)" >&2; exit 2; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
failures=0
check() {  # check NAME FILE_A FILE_B
  if cmp -s "$2" "$3"; then
    echo "ok    $1 ($(wc -l <"$2") lines)"
  else
    echo "FAIL  $1"; diff "$2" "$3" | head -5; failures=$((failures + 1))
  fi
}

for type in unigram bpe; do
  m=$work/$type
  "$tok" train --input "$data/train.en" "$data/train.de" --model-prefix "$m" --vocab-size 8000 \
    --model-type "$type" --threads 2 --quiet
  spm_train --input="$data/train.en,$data/train.de" --model_prefix="$m.spm" --vocab_size=8000 \
    --model_type="$type" --num_threads=2 --pad_id=0 --unk_id=1 --bos_id=2 --eos_id=3 \
    --minloglevel=2 2>/dev/null
  check "$type: train vocabulary == spm_train" "$m.vocab" "$m.spm.vocab"
  for lang in en de; do
    val=$data/val.$lang
    for fmt in piece id; do
      spm_encode --model="$m.model" --output_format="$fmt" <"$val" >"$work/ref.$fmt"
      for threads in 1 2; do
        "$tok" encode --model "$m.model" --format "$fmt" --threads "$threads" <"$val" >"$work/out.$fmt"
        check "$type $lang: encode --format $fmt --threads $threads == spm_encode" "$work/out.$fmt" "$work/ref.$fmt"
      done
      spm_decode --model="$m.model" --input_format="$fmt" <"$work/ref.$fmt" >"$work/ref.dec"
      "$tok" decode --model "$m.model" --format "$fmt" --threads 2 <"$work/ref.$fmt" >"$work/out.dec"
      check "$type $lang: decode --format $fmt == spm_decode" "$work/out.dec" "$work/ref.dec"
    done
  done
done

if ((failures)); then
  echo "check-spm: $failures check(s) failed" >&2
  exit 1
fi
echo "check-spm: all checks passed"
