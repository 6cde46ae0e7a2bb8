#!/usr/bin/env bash
# A second opinion from an independent engine: converts a tt model directory to CTranslate2
# (tt-convert export-ct2), translates the same input with tt-translate and with CTranslate2 at the
# same beam, length penalty (tt's `power` form = CTranslate2's length_penalty) and length limits, and
# prints the share of identical output lines, for greedy search and beam 4 (issue 8, "Exactness").
#
#   scripts/check-ct2.sh MODEL_DIR SRC [N]
#     MODEL_DIR  a tt model directory (config.json, model.safetensors and, for text, its SentencePiece model)
#     SRC        raw text, one sentence a line; a model without a "vocab" in config.json (tt-train
#                --synthetic-task copy) takes ids instead (space-separated, as tt-translate --input-format ids)
#     N          translate the first N lines only (default: all)
# environment:
#   BEAMS="1 4"  ALPHA=0.6  MAX_LEN_A=1  MAX_LEN_B=50  MIN_LEN=0  THREADS=2  BATCH=32
#   TT_BIN=build/bin (tt-translate, tt-tokenize, tt-convert)
#   CT2_VENV=${TMPDIR:-/tmp}/tt-ct2-venv (PyPI ctranslate2; made on first use)
#   STRICT=1     exit 1 unless greedy agrees on every line and beam search on >= 99 % of lines
#   TT_SEARCH_FLAGS="--full-beam"  tt-translate's search flags (empty: tt's default, shrinking beam)
#
# By default tt runs the same algorithm as CTranslate2 (--full-beam: `beam` open hypotheses, a sentence
# stops once `beam` have finished). With TT_SEARCH_FLAGS= tt's default search runs instead, whose beam
# shrinks by one per finished hypothesis (Marian), and beam > 1 then differs on ~1 % of lines. For each
# differing line the script says whose output scores better under the model (both report the same
# length-normalised score); a line where CTranslate2 found a better hypothesis than tt is a search miss,
# not a model difference. At the length limit the two differ by construction (tt forces </s> after
# max_len tokens, CTranslate2 goes one token further and stops without </s>): such a line agrees when
# CTranslate2's output starts with tt's, and is counted apart.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/check-ct2.sh MODEL_DIR SRC [N]" >&2; exit 2; }
[[ $# -ge 2 && $# -le 3 ]] || usage
model=$1 src=$2 n=${3:-0}
[[ -f $model/config.json && -f $model/model.safetensors ]] || { echo "check-ct2: $model is not a tt model directory (config.json, model.safetensors)" >&2; exit 2; }
[[ -f $src ]] || { echo "check-ct2: $src not found" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] || usage

beams=${BEAMS:-"1 4"}
alpha=${ALPHA:-0.6} len_a=${MAX_LEN_A:-1} len_b=${MAX_LEN_B:-50} min_len=${MIN_LEN:-0}
threads=${THREADS:-2} batch=${BATCH:-32}
bin=${TT_BIN:-$repo/build/bin}
for tool in tt-translate tt-tokenize tt-convert; do
  [[ -x $bin/$tool ]] || { echo "check-ct2: $bin/$tool not found; build it or set TT_BIN" >&2; exit 2; }
done

venv=${CT2_VENV:-${TMPDIR:-/tmp}/tt-ct2-venv}
if ! "$venv/bin/python" -c 'import ctranslate2' 2>/dev/null; then
  echo "check-ct2: making a venv with ctranslate2 in $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install -q ctranslate2 >&2
fi
py=$venv/bin/python
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

# Inputs: pieces (text models) or ids (models without a vocabulary); empty lines stay empty.
read -r spm max_positions < <("$py" - "$model/config.json" <<'EOF'
import json, os, sys
c = json.load(open(sys.argv[1]))
v = c.get('vocab') or {}
s = v.get('source')
print(os.path.join(os.path.dirname(sys.argv[1]), s) if s else '-', c['model']['max_positions'])
EOF
)
if [[ $n -gt 0 ]]; then head -n "$n" "$src" >"$tmp/src"; else cp "$src" "$tmp/src"; fi
if [[ $spm != - ]]; then
  format=pieces
  "$bin/tt-tokenize" encode -m "$spm" --threads "$threads" <"$tmp/src" >"$tmp/in"
else
  format=ids
  cp "$tmp/src" "$tmp/in"
fi
"$bin/tt-convert" export-ct2 "$model" -o "$tmp/ct2" >&2
lines=$(wc -l <"$tmp/in")

cat >"$tmp/ct2_run.py" <<'EOF'
# CTranslate2 with tt-translate's search settings: per-sentence max length (sentences grouped by length so
# that one translate_batch call shares one limit), </s> kept in the hypothesis so that the power length
# penalty divides by the same L as tt's (tokens + </s>), then stripped.
import json, math, os, sys
import ctranslate2
model, inp, out, scores, fmt, beam, alpha, a, b, min_len, threads, batch, max_pos = sys.argv[1:]
beam, threads, batch, min_len, b, max_pos = map(int, (beam, threads, batch, min_len, b, max_pos))
alpha, a = float(alpha), float(a)
tr = ctranslate2.Translator(model, device='cpu', compute_type='float32', inter_threads=1, intra_threads=threads)
def vocabulary(side):
    path = f'{model}/shared_vocabulary.json'
    return json.load(open(path if os.path.exists(path) else f'{model}/{side}_vocabulary.json'))
vocab, target_vocab = vocabulary('source'), vocabulary('target')
index = {p: i for i, p in enumerate(target_vocab)}
src = []
for line in open(inp, encoding='utf-8'):
    toks = line.split()
    src.append([vocab[int(t)] for t in toks] if fmt == 'ids' else toks)
res = [None] * len(src)
groups = {}
for i, s in enumerate(src):
    if s:
        groups.setdefault(len(s), []).append(i)
for length, idx in sorted(groups.items()):
    max_len = min(math.floor(a * length + b), max_pos - 1)   # tokens before </s>, as tt
    for k in range(0, len(idx), batch):
        chunk = idx[k:k + batch]
        r = tr.translate_batch([src[i] for i in chunk], beam_size=beam, length_penalty=alpha,
                               max_decoding_length=max_len + 1, min_decoding_length=min_len,
                               return_end_token=True, return_scores=True, max_batch_size=batch)
        for i, x in zip(chunk, r):
            res[i] = (x.hypotheses[0], x.scores[0])
with open(out, 'w', encoding='utf-8') as f, open(scores, 'w') as g:
    for s, r in zip(src, res):
        if r is None:
            f.write('\n'); g.write('0\n'); continue
        h, sc = r
        ended = bool(h) and h[-1] == '</s>'
        if ended:
            h = h[:-1]
        f.write(' '.join(str(index[p]) if fmt == 'ids' else p for p in h) + '\n')
        g.write(f'{sc:.6f}{"" if ended else " noeos"}\n')
EOF

status=0
for beam in $beams; do
  "$bin/tt-translate" -m "$model" --input-format "$format" --output-format "$format" --beam "$beam" \
    --length-penalty power --alpha "$alpha" --max-len-a "$len_a" --max-len-b "$len_b" --min-len "$min_len" \
    --batch-size "$batch" --threads "$threads" --scores-file "$tmp/tt.scores" ${TT_SEARCH_FLAGS---full-beam} -q <"$tmp/in" >"$tmp/tt.out"
  "$py" "$tmp/ct2_run.py" "$tmp/ct2" "$tmp/in" "$tmp/ct2.out" "$tmp/ct2.scores" "$format" "$beam" "$alpha" \
    "$len_a" "$len_b" "$min_len" "$threads" "$batch" "$max_positions"
  # One row per line: source, tt output, CTranslate2 output, tt score, CTranslate2 score [noeos].
  report=$(paste -d '\t' "$tmp/in" "$tmp/tt.out" "$tmp/ct2.out" "$tmp/tt.scores" "$tmp/ct2.scores" |
    awk -F '\t' -v a="$len_a" -v b="$len_b" -v maxpos="$max_positions" '
      { n++
        words = split($1, w, " "); max_len = int(a * words + b); if (max_len > maxpos - 1) max_len = maxpos - 1
        split($4, ts, " "); split($5, cs, " ")
        if ($2 == $3) { same++; next }
        # Length limit: tt ended with a forced </s> after max_len tokens, CTranslate2 went one token on
        # without </s>; the decisions up to the limit are still comparable.
        tt_len = split($2, t, " ")
        if (tt_len == max_len && $5 ~ /noeos/) {
          prefix = ""; split($3, c, " ")
          for (i = 1; i <= tt_len; i++) prefix = prefix (i > 1 ? " " : "") c[i]
          if (prefix == $2) { limit_same++; next }
          limit_diff++; next
        }
        d = ts[1] - cs[1]
        if (d > 1e-4) tt_better++
        else if (d < -1e-4) { ct_better++; if (shown++ < 3) printf "  line %d: CTranslate2 scores better (%s vs tt %s)\n", NR, cs[1], ts[1] > "/dev/stderr" }
        else { tie++; if (shown++ < 3) printf "  line %d: different output, same score (%s)\n", NR, ts[1] > "/dev/stderr" }
      }
      END { printf "%d %d %d %d %d %d %d\n", n, same, limit_same, limit_diff, tt_better, ct_better, tie }')
  read -r total same limit_same limit_diff tt_better ct_better tie <<<"$report"
  agree=$((same + limit_same))
  pct=$(awk -v s="$agree" -v t="$total" 'BEGIN { printf "%.2f", t ? 100 * s / t : 0 }')
  name=$([[ $beam == 1 ]] && echo greedy || echo "beam $beam")
  printf 'check-ct2: %-7s %s of %s lines agree (%s %%: %s identical, %s identical up to the length limit); differing: %s at the length limit, %s where tt scores better, %s where CTranslate2 scores better, %s with the same score\n' \
    "$name" "$agree" "$total" "$pct" "$same" "$limit_same" "$limit_diff" "$tt_better" "$ct_better" "$tie"
  if [[ ${STRICT:-0} == 1 ]]; then
    if [[ $beam == 1 && $agree -ne $total ]] || awk -v p="$pct" 'BEGIN { exit !(p < 99) }'; then status=1; fi
  fi
done
echo "check-ct2: $lines lines of $src, alpha $alpha (power), max length ${len_a} * source + ${len_b}, $("$py" -c 'import ctranslate2; print("CTranslate2", ctranslate2.__version__)')"
exit "$status"
