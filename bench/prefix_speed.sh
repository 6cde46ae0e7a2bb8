#!/usr/bin/env bash
# A target prefix fed to the decoder in one pass, against generating as many tokens (CTranslate2 spends
# about as long on a prefix as on generating it: its issue #1689). For the first N lines of INPUT, the
# prefixes are the model's own greedy translations forced to P pieces; then, alternately, ROUNDS times:
#   base      --max-len-a 0 --max-len-b 0                     encoder and one step (</s>)
#   prefix    the same with --target-prefix (P pieces)        encoder, the one pass, one step
#   generate  --min-len P --max-len-a 0 --max-len-b P         encoder, P steps, one step
# and prints the best wall time of each and (prefix - base) / (generate - base): the prefix's share of
# the time generating it takes. Ends with the CPU model.
#
# usage: bench/prefix_speed.sh MODEL_DIR INPUT
# environment: N=500 P=20 BEAM=4 THREADS=2 ROUNDS=3 TT_BIN=build/bin
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
model=${1:?usage: bench/prefix_speed.sh MODEL_DIR INPUT} input=${2:?usage: bench/prefix_speed.sh MODEL_DIR INPUT}
n=${N:-500} p=${P:-20} beam=${BEAM:-4} threads=${THREADS:-2} rounds=${ROUNDS:-3}
bin=${TT_BIN:-$repo/build/bin}
[[ -x $bin/tt-translate ]] || { echo "prefix_speed: $bin/tt-translate not found; build it or set TT_BIN" >&2; exit 2; }
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
head -n "$n" "$input" >"$work/src"
tt() { "$bin/tt-translate" -m "$model" -q --threads "$threads" --max-len-a 0 "$@" <"$work/src"; }
tt --beam 1 --min-len "$p" --max-len-b "$p" >"$work/prefix"
pieces=$("$bin/tt-translate" -m "$model" -q --beam 1 --min-len "$p" --max-len-a 0 --max-len-b "$p" --output-format pieces \
  <"$work/src" | awk '{ s += NF } END { printf "%.1f", s / NR }')
seconds() { local t0 t1; t0=$(date +%s.%N); "$@" >/dev/null; t1=$(date +%s.%N); echo "$t1 - $t0" | bc -l; }
declare -A best
for ((r = 0; r < rounds; ++r)); do
  for kind in base prefix generate; do
    case $kind in
      base) t=$(seconds tt --beam "$beam" --max-len-b 0) ;;
      prefix) t=$(seconds tt --beam "$beam" --max-len-b 0 --target-prefix "$work/prefix") ;;
      generate) t=$(seconds tt --beam "$beam" --min-len "$p" --max-len-b "$p") ;;
    esac
    [[ -z ${best[$kind]:-} ]] || (($(echo "$t < ${best[$kind]}" | bc -l))) && best[$kind]=$t
  done
done
printf 'lines %d, prefix %s pieces a line on average (P = %d), beam %d, %d threads, best of %d\n' \
  "$n" "$pieces" "$p" "$beam" "$threads" "$rounds"
for kind in base prefix generate; do printf '  %-9s %.3f s\n' "$kind" "${best[$kind]}"; done
share=$(echo "(${best[prefix]} - ${best[base]}) / (${best[generate]} - ${best[base]})" | bc -l)
printf '  the prefix pass takes %.3f of the time generating the same number of tokens takes\n' "$share"
echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')"
