#!/usr/bin/env bash
# Terminology constraints measured (tt-translate --constraints): for every line of SRC, up to 2 words of
# its reference REF (at least 5 letters, punctuation stripped, first in the reference's order) that the
# unconstrained beam output lacks become that line's constraints (lines with none stay empty). Then,
# with and without them, alternately ROUNDS times: the share of constraints the output holds, BLEU and
# chrF against REF, target tokens/s (the outputs' pieces plus </s> per line over the best wall time), and
# whether the lines without constraints came out exactly as without the option. Ends with the CPU model.
#
# usage: bench/constraints.sh MODEL_DIR SRC REF
# environment: BEAM=4 THREADS=2 ROUNDS=2 TT_BIN=build/bin
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage="usage: bench/constraints.sh MODEL_DIR SRC REF"
model=${1:?$usage} src=${2:?$usage} ref=${3:?$usage}
beam=${BEAM:-4} threads=${THREADS:-2} rounds=${ROUNDS:-2}
bin=${TT_BIN:-$repo/build/bin}
for tool in tt-translate tt-bleu tt-tokenize; do
  [[ -x $bin/$tool ]] || { echo "constraints: $bin/$tool not found; build it or set TT_BIN" >&2; exit 2; }
done
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
tt() { "$bin/tt-translate" -m "$model" -q --threads "$threads" --beam "$beam" "$@" <"$src"; }
tt >"$work/plain"
# Each line's constraints: reference words the output lacks (as a word), tab-separated.
paste -d '\n' "$ref" "$work/plain" | awk '
  function clean(w) { gsub(/^[[:punct:]„“”‚‘’]+|[[:punct:]„“”‚‘’]+$/, "", w); return w }
  NR % 2 == 1 { r = $0; next }
  {
    delete have; n = split($0, h, " "); for (i = 1; i <= n; ++i) have[clean(h[i])] = 1
    out = ""; k = 0; m = split(r, w, " ")
    for (i = 1; i <= m && k < 2; ++i) {
      c = clean(w[i])
      if (length(c) >= 5 && !(c in have) && index("\t" out "\t", "\t" c "\t") == 0) { out = out (k ? "\t" : "") c; ++k }
    }
    print out
  }' >"$work/constraints"
# seconds OUT COMMAND...: COMMAND's stdout to OUT (stderr to OUT.err), its wall time on stdout
seconds() {
  local out=$1 t0 t1
  shift
  t0=$(date +%s.%N)
  "$@" >"$out" 2>"$out.err"
  t1=$(date +%s.%N)
  echo "$t1 - $t0" | bc -l
}
best_plain="" best_constrained=""
for ((r = 0; r < rounds; ++r)); do
  t=$(seconds "$work/plain" tt)
  [[ -n $best_plain ]] && (($(echo "$t >= $best_plain" | bc -l))) || best_plain=$t
  t=$(seconds "$work/constrained" tt --constraints "$work/constraints")
  [[ -n $best_constrained ]] && (($(echo "$t >= $best_constrained" | bc -l))) || best_constrained=$t
done
pieces() { "$bin/tt-tokenize" encode -m "$model/spm.model" <"$1" | awk '{ n += NF + 1 } END { print n }'; }
held=$(paste "$work/constraints" "$work/constrained" | awk -F'\t' '
  { n = NF - 1; for (i = 1; i <= n; ++i) if ($i != "") { ++all; if (index($NF, $i)) ++ok } }
  END { printf "%d of %d", ok, all }')
lines=$(grep -c . "$work/constraints" || true)
same=$(paste -d '\n' "$work/constraints" "$work/plain" "$work/constrained" | awk '
  NR % 3 == 1 { c = $0; next } NR % 3 == 2 { p = $0; next }
  c == "" { ++n; if ($0 == p) ++s } END { printf "%d of %d", s, n }')
bleu() { "$bin/tt-bleu" -b -m bleu chrf "$ref" <"$1" | tr '\n' ' '; }
printf '%s lines, %s with constraints (%s words), beam %d, %d threads, best of %d\n' \
  "$(wc -l <"$src")" "$lines" "$(awk -F'\t' 'NF { n += NF } END { print n }' "$work/constraints")" "$beam" "$threads" "$rounds"
printf '  constraints held: %s\n' "$held"
printf '  BLEU chrF without: %s\n  BLEU chrF with:    %s\n' "$(bleu "$work/plain")" "$(bleu "$work/constrained")"
tp=$(echo "$(pieces "$work/plain") / $best_plain" | bc -l)
tc=$(echo "$(pieces "$work/constrained") / $best_constrained" | bc -l)
printf '  target tokens/s without: %.0f  with: %.0f  (%.2f of the speed)\n' "$tp" "$tc" "$(echo "$tc / $tp" | bc -l)"
printf '  lines without constraints that came out as without the option: %s\n' "$same"
printf '  warnings: %s\n' "$(wc -l <"$work/constrained.err")"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
