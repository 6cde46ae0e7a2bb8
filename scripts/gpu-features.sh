#!/usr/bin/env bash
# Each decoding feature of tt-translate, and each kind of model file, on the CPU and on the GPU: one row per
# feature with the exit status on each device, how many output lines are identical, and the first error
# line where one failed. Run by scripts/gpu-check.sh (stage "features") on a GPU host; also by hand.
# A feature the CUDA backend does not have must be refused with one message naming the option (exit 1 or 2),
# never crash and never print a partial output: the row says which happened.
#
# usage: scripts/gpu-features.sh --bin DIR --demo DIR [--lines N] [--threads N] [--out DIR]
#   --bin DIR      the tools (tt-translate, tt-convert, tt-bleu)
#   --demo DIR     what scripts/demo.sh made: DIR/model and DIR/data/test2016.{en,de}
#   --lines N      source lines translated per feature (default 1000: all of test2016)
#   --threads N    CPU threads (default: all)
#   --out DIR      outputs and logs (default: a temporary folder, removed)
# Prints the table on stdout. Exit status 0 when every row is as expected (ran on both devices, or refused
# on CUDA with a message), 1 otherwise.
set -uo pipefail
bin='' demo='' lines=1000 threads=0 out=''
while (($#)); do
  case $1 in
    --bin) bin=$2; shift 2 ;;
    --demo) demo=$2; shift 2 ;;
    --lines) lines=$2; shift 2 ;;
    --threads) threads=$2; shift 2 ;;
    --out) out=$2; shift 2 ;;
    -h|--help) sed -n '2,15p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-features: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -x $bin/tt-translate && -d $demo/model && -f $demo/data/test2016.en ]] ||
  { echo "gpu-features: need --bin DIR with tt-translate and --demo DIR with model/ and data/test2016.en" >&2; exit 2; }
repo=$(cd "$(dirname "$0")/.." && pwd)
if [[ -z $out ]]; then
  out=$(mktemp -d "${TMPDIR:-/tmp}/tt-gpu-features.XXXXXX")
  trap 'rm -rf "$out"' EXIT
fi
mkdir -p "$out"
model=$demo/model
head -n "$lines" "$demo/data/test2016.en" >"$out/src.txt"
head -n "$lines" "$demo/data/test2016.de" >"$out/ref.txt"
# A prefix (the reference's first word) and a constraint (its last word of 4+ letters) per line; every
# third line has none, so both the empty and the given cases run.
awk '{ print (NR % 3 ? $1 : "") }' "$out/ref.txt" >"$out/prefix.txt"
awk '{ w = ""; for (i = NF; i > 1; --i) if (length($i) >= 4) { w = $i; break } gsub(/[.,;:!?"]/, "", w)
       print (NR % 3 ? w : "") }' "$out/ref.txt" >"$out/constraints.txt"

# Model files the converters make, for the rows that read them.
"$bin/tt-convert" -q quantize "$model" -o "$out/model-int8" --type int8 >"$out/convert-int8.log" 2>&1
"$bin/tt-convert" -q quantize "$model" -o "$out/model-bf16" --type bf16 >"$out/convert-bf16.log" 2>&1
"$bin/tt-convert" -q import-marian "$repo/tests/data/marian/tiny" -o "$out/model-marian" >"$out/convert-marian.log" 2>&1

# name|model|options. The model column: demo, int8, bf16, marian or ensemble.
features=(
  "greedy|demo|--beam 1"
  "beam 4|demo|--beam 4"
  "beam 4, full beam|demo|--beam 4 --full-beam"
  "n-best 4|demo|--beam 4 --nbest 4"
  "sampling topk:10|demo|--sampling topk:10 --seed 7"
  "sampling topp:0.9, temperature 0.8|demo|--sampling topp:0.9 --temperature 0.8 --seed 7"
  "no-repeat-ngram 2, ban-unk|demo|--no-repeat-ngram 2 --ban-unk"
  "repetition penalty 1.3|demo|--repetition-penalty 1.3"
  "min-len 5, length penalty power 1.2|demo|--min-len 5 --length-penalty power --alpha 1.2"
  "target prefix|demo|--target-prefix $out/prefix.txt"
  "constraints|demo|--constraints $out/constraints.txt"
  "alternatives 3 after the prefix|demo|--target-prefix $out/prefix.txt --alternatives 3"
  "alignment hard|demo|--alignment hard"
  "scores of the references|demo|--score $out/ref.txt"
  "long lines in parts (max-src-len 8)|demo|--max-src-len 8"
  "batch-tokens 200|demo|--batch-tokens 200"
  "flush (line by line)|demo|--flush --beam 2"
  "compute type bf16|demo|--compute-type bf16"
  "compute type int8|demo|--compute-type int8"
  "ensemble of two|ensemble|"
  "int8 model file (tt-convert quantize)|int8|"
  "bf16 model file (tt-convert quantize)|bf16|"
  "Marian import (random weights)|marian|--beam 2"
  "workers 2|demo|--workers 2"
)

# A refusal: exit 1 or 2, one message, no output. Anything else is a failure. (slug: the current row.)
refused() { (($1 == 1 || $1 == 2)) && [[ ! -s $out/$slug.$2 ]]; }
first() { head -1 "$out/$slug.$1.err" | cut -c1-100; }

failures=0
printf '%-40s %-10s %-10s %-16s %s\n' feature cpu cuda "same lines" "note"
for f in "${features[@]}"; do
  IFS='|' read -r name which opts <<<"$f"
  case $which in
    demo) models=(-m "$model") ;;
    ensemble) models=(-m "$model" "$model") ;;
    *) models=(-m "$out/model-$which") ;;
  esac
  slug=$(echo "$name" | tr -c 'a-zA-Z0-9\n' '-' | tr -s '-')
  # shellcheck disable=SC2086  # opts is a list of words
  timeout 120 "$bin/tt-translate" "${models[@]}" -i "$out/src.txt" -q --device cpu --threads "$threads" $opts \
    >"$out/$slug.cpu" 2>"$out/$slug.cpu.err"
  rc_cpu=$?
  # shellcheck disable=SC2086
  timeout 120 "$bin/tt-translate" "${models[@]}" -i "$out/src.txt" -q --device cuda $opts \
    >"$out/$slug.cuda" 2>"$out/$slug.cuda.err"
  rc_cuda=$?
  same=$(awk 'NR == FNR { a[FNR] = $0; n = FNR; next } { m = FNR; if (FNR in a && a[FNR] == $0) ++s }
              END { printf "%d/%d", s, (n > m ? n : m) }' "$out/$slug.cpu" "$out/$slug.cuda")
  note=
  if ((rc_cpu == 0 && rc_cuda == 0)); then
    n_cpu=$(wc -l <"$out/$slug.cpu") n_cuda=$(wc -l <"$out/$slug.cuda")
    if [[ $name == scores* ]]; then
      note=$(awk 'NR == FNR { a[FNR] = $1; next } { d = $1 - a[FNR]; if (d < 0) d = -d; if (d > m) m = d }
                  END { printf "max |log-prob difference| %.2g", m }' "$out/$slug.cpu" "$out/$slug.cuda")
    elif [[ $name == greedy || $name == "beam 4" || $name == "compute type bf16" ]]; then
      b_cpu=$("$bin/tt-bleu" "$out/ref.txt" -i "$out/$slug.cpu" 2>/dev/null | sed -n 's/.*"score": \([0-9.]*\).*/\1/p')
      b_cuda=$("$bin/tt-bleu" "$out/ref.txt" -i "$out/$slug.cuda" 2>/dev/null | sed -n 's/.*"score": \([0-9.]*\).*/\1/p')
      note="BLEU cpu $b_cpu, cuda $b_cuda"
    fi
    if [[ $name != n-best* && $name != alternatives* && $name != alignment* ]] && ((n_cpu != lines || n_cuda != lines)); then
      note="LINES: $n_cpu on cpu, $n_cuda on cuda for $lines in; $note"
      failures=$((failures + 1))
    fi
  else
    if ((rc_cpu == 0)) && refused "$rc_cuda" cuda; then
      note="refused on cuda: $(first cuda)"
    elif ((rc_cuda == 0)) && refused "$rc_cpu" cpu; then
      note="ran on cuda; refused on this CPU: $(first cpu)"
    elif refused "$rc_cpu" cpu && refused "$rc_cuda" cuda; then
      note="refused on both: $(first cuda)"
    else
      note="FAILED: $(first "$( ((rc_cpu != 0)) && echo cpu || echo cuda)")"
      failures=$((failures + 1))
    fi
  fi
  printf '%-40s %-10s %-10s %-16s %s\n' "$name" "exit $rc_cpu" "exit $rc_cuda" "$same" "$note"
done
((failures == 0))
