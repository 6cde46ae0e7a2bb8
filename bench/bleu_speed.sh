#!/usr/bin/env bash
# tt-bleu beside sacreBLEU on a large corpus made by repeating a real test set (WMT22 en-de,
# JDExploreAcademy against reference A; 2037 lines x 100 = 203,700 lines) for BLEU, chrF and TER.
# Prints wall and CPU (user+sys) seconds of each tool and the sacreBLEU/tt-bleu ratios; tt-bleu runs
# with --threads 1 (one core, as sacreBLEU) and with all cores. Both must print the same score.
# sacreBLEU's TER is very slow, so TER uses the first $TER_LINES lines (default 20000).
#
#   bench/bleu_speed.sh [DATA_DIR] [TT_BLEU]       (defaults: ../shared/data/mt-outputs, build/bin/tt-bleu)
#   env: REPEAT (100), TER_LINES (20000), METRICS ("bleu chrf ter"),
#        SACREBLEU (path; else a venv under ${TMPDIR:-/tmp})
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
data=${1:-$repo/../shared/data/mt-outputs}
tt=${2:-${TT_BLEU:-$repo/build/bin/tt-bleu}}
repeat=${REPEAT:-100}
ter_lines=${TER_LINES:-20000}
[[ -x $tt ]] || { echo "bleu_speed: $tt not found; build tt-bleu or pass its path" >&2; exit 2; }
if [[ -z ${SACREBLEU:-} ]]; then
  venv=${TMPDIR:-/tmp}/tt-sacrebleu-venv
  [[ -x $venv/bin/sacrebleu ]] || { python3 -m venv "$venv" && "$venv/bin/pip" install -q 'sacrebleu==2.6.0' >&2; }
  SACREBLEU=$venv/bin/sacrebleu
fi
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$repeat"); do cat "$data/wmt22.en-de/hyp.JDExploreAcademy.de"; done >"$tmp/hyp"
for _ in $(seq "$repeat"); do cat "$data/wmt22.en-de/ref.A.de"; done >"$tmp/ref"
head -n "$ter_lines" "$tmp/hyp" >"$tmp/hyp.ter"
head -n "$ter_lines" "$tmp/ref" >"$tmp/ref.ter"

# run NAME CMD... -> prints "wall cpu" and leaves the score in $tmp/NAME.out
run() {
  local name=$1; shift
  /usr/bin/time -f "%e %U %S" -o "$tmp/$name.time" "$@" >"$tmp/$name.out" 2>/dev/null
  awk '{printf "%.2f %.2f", $1, $2 + $3}' "$tmp/$name.time"
}
printf '%-5s %8s  %-24s %-24s %-24s %s\n' metric lines "sacrebleu wall/cpu s" "tt-bleu -j1 wall/cpu s" \
  "tt-bleu all wall/cpu s" "ratio (cpu, -j1 | wall, all)"
for metric in ${METRICS:-bleu chrf ter}; do
  hyp=$tmp/hyp ref=$tmp/ref
  [[ $metric == ter ]] && hyp=$tmp/hyp.ter ref=$tmp/ref.ter
  read -r s_wall s_cpu <<<"$(run s_$metric "$SACREBLEU" "$ref" -i "$hyp" -m $metric -b -w 4)"
  read -r t_wall t_cpu <<<"$(run t_$metric "$tt" "$ref" -i "$hyp" -m $metric -b -w 4 --threads 1)"
  read -r a_wall a_cpu <<<"$(run a_$metric "$tt" "$ref" -i "$hyp" -m $metric -b -w 4)"
  cmp -s "$tmp/s_$metric.out" "$tmp/t_$metric.out" || echo "bleu_speed: $metric scores differ!" >&2
  printf '%-5s %8s  %-24s %-24s %-24s %s\n' $metric "$(wc -l <"$hyp")" "$s_wall / $s_cpu" "$t_wall / $t_cpu" \
    "$a_wall / $a_cpu" "$(awk -v s="$s_cpu" -v t="$t_cpu" -v sw="$s_wall" -v aw="$a_wall" \
      'BEGIN {printf "%.1fx | %.1fx", s / (t > 0 ? t : 0.01), sw / (aw > 0 ? aw : 0.01)}')"
done
