#!/usr/bin/env bash
# Checks `tt-convert import-marian` against the two engines that run Hugging Face Marian models: converts
# a MarianMTModel directory (OPUS-MT's files) to a tt model, translates the same lines with tt-translate,
# with Transformers (MarianMTModel.generate, one line per call) and with CTranslate2 (after
# ct2-transformers-converter), greedy and beam 4, and prints the share of lines whose output ids are
# identical to each reference's.
#
#   scripts/check-marian.sh HF_DIR SRC [N]
#     HF_DIR  a Hugging Face MarianMTModel directory: config.json, model.safetensors (or pytorch_model.bin),
#             source.spm, target.spm, vocab.json (a download of Helsinki-NLP/opus-mt-en-de, or
#             tests/data/marian/tiny from scripts/make-marian-fixture.py)
#     SRC     raw source text, one sentence a line
#     N       translate the first N lines only (default: all)
# environment:
#   BEAMS="1 4"  MAX_LEN=256  THREADS=2  BATCH=32
#   TT_BIN=build/bin (tt-convert, tt-translate)
#   MARIAN_VENV=${TMPDIR:-/tmp}/tt-marian-venv (PyPI torch, transformers, sentencepiece, sacremoses,
#                ctranslate2; made on first use; TORCH_INDEX_URL=URL installs torch from that index, e.g.
#                one of CPU-only wheels, instead of PyPI's CUDA build of several GB)
#   TT_INPUT=text  what tt-translate reads: text (SRC, tokenised by the converted model: the whole
#                  pipeline) or pieces (Transformers' SentencePiece pieces of SRC: the model alone)
#   STRICT=1     exit 1 unless greedy agrees with both references on every line, and beam search with
#                Transformers on >= 99 % of the lines and with CTranslate2 on >= 99 % of those where the
#                references agree (their searches differ: CTranslate2 searches on after `beam` hypotheses
#                have finished, Transformers and tt --full-beam stop there)
#
# The three search alike: no length penalty (Transformers length_penalty=0, tt --length-penalty none,
# CTranslate2 length_penalty=0); beam search keeps `beam` open hypotheses and stops once `beam` have
# finished (Transformers early_stopping=True, tt --full-beam, CTranslate2's search); <pad> is never
# generated (Transformers bad_words_ids=[[pad]] as OPUS-MT's config; CTranslate2's converter drops <pad>
# from the vocabulary); no forced </s> at the limit (Transformers forced_eos_token_id=None), no n-gram or
# repetition rule; the source gets </s> appended (MarianTokenizer). Length limit: at most MAX_LEN target
# tokens (capped by the model's positions), after which tt forces </s>; the references may go one token
# further (max_new_tokens / max_decoding_length MAX_LEN + 1), so a line that reaches the limit agrees when
# the reference starts with tt's output, and is counted apart. For each differing line the script gives
# the log-probability (tokens and </s>) that the Transformers model assigns to both outputs: where the
# reference's is higher, tt's search missed it, or tt's model differs; where tt's is higher, the
# reference's search missed tt's output. An empty line gives an empty line and counts as agreeing.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
usage() { echo "usage: scripts/check-marian.sh HF_DIR SRC [N]" >&2; exit 2; }
[[ $# -ge 2 && $# -le 3 ]] || usage
hf=$1 src=$2 n=${3:-0}
[[ -f $hf/config.json && -f $hf/vocab.json && -f $hf/source.spm ]] ||
  { echo "check-marian: $hf is not a MarianMTModel directory (config.json, vocab.json, source.spm)" >&2; exit 2; }
[[ -f $src ]] || { echo "check-marian: $src not found" >&2; exit 2; }
[[ $n =~ ^[0-9]+$ ]] || usage
hf=$(cd "$hf" && pwd)

beams=${BEAMS:-"1 4"}
max_len=${MAX_LEN:-256} threads=${THREADS:-2} batch=${BATCH:-32} tt_input=${TT_INPUT:-text}
[[ $tt_input == text || $tt_input == pieces ]] || { echo "check-marian: TT_INPUT is text or pieces" >&2; exit 2; }
bin=${TT_BIN:-$repo/build/bin}
for tool in tt-translate tt-convert; do
  [[ -x $bin/$tool ]] || { echo "check-marian: $bin/$tool not found; build it or set TT_BIN" >&2; exit 2; }
done

py=$("$repo/scripts/marian-venv.sh" check-marian)
tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT

if [[ $n -gt 0 ]]; then head -n "$n" "$src" >"$tmp/src"; else cp "$src" "$tmp/src"; fi
lines=$(wc -l <"$tmp/src")
positions=$("$py" -c 'import json, sys; print(json.load(open(sys.argv[1]))["max_position_embeddings"])' "$hf/config.json")
# At most `limit` tokens before </s>: tt's rule, which caps the limit by the model's positions.
limit=$((max_len < positions - 1 ? max_len : positions - 1))

"$bin/tt-convert" import-marian "$hf" -o "$tmp/tt-model" >&2
"$(dirname "$py")/ct2-transformers-converter" --model "$hf" --output_dir "$tmp/ct2" >"$tmp/ct2.log" 2>&1 ||
  { cat "$tmp/ct2.log" >&2; echo "check-marian: ct2-transformers-converter failed" >&2; exit 1; }

cat >"$tmp/marian_ref.py" <<'EOF'
# translate: Transformers' and CTranslate2's outputs for every line and beam (ids of vocab.json without the
#   decoder start and </s>, one line each, and whether </s> ended them), and Transformers' pieces of the
#   source for tt --input-format pieces.
# compare: the agreement of tt's outputs with both, the log-probabilities of differing outputs under the
#   Transformers model, a summary line per beam; exit status 1 if STRICT's conditions fail.
import json, math, os, sys
import torch
import transformers
from transformers import MarianMTModel, MarianTokenizer

mode, hf, tmp, beams, limit, threads = sys.argv[1:7]
beams, limit, threads = [int(b) for b in beams.split()], int(limit), int(threads)
torch.set_num_threads(threads)
transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()
tok = MarianTokenizer.from_pretrained(hf)
model = MarianMTModel.from_pretrained(hf).eval()
cfg = model.config
pad, eos, start = cfg.pad_token_id, cfg.eos_token_id, cfg.decoder_start_token_id
vocab = json.load(open(os.path.join(hf, 'vocab.json'), encoding='utf-8'))
src = open(os.path.join(tmp, 'src'), encoding='utf-8').read().split('\n')[:-1]


def write(path, outputs):
    """One line per source line: the ids, then a tab and 1 if </s> ended the output (0 if not)."""
    with open(path, 'w') as f:
        for ids, ended in outputs:
            f.write(' '.join(map(str, ids)) + f'\t{int(ended)}\n')


def read(path, tt=False):
    """(ids, ended) per line; tt's lines are ids only, always ended (at the limit by a forced </s>)."""
    out = []
    for line in open(path):
        line = line.rstrip('\n')
        if tt:
            out.append(([int(t) for t in line.split()], True))
        else:
            ids, ended = line.split('\t')
            out.append(([int(t) for t in ids.split()], ended == '1'))
    return out


def hf_translate(line, beam):
    enc = tok(line, return_tensors='pt')
    kw = dict(num_beams=beam, do_sample=False, max_new_tokens=limit + 1, bad_words_ids=[[pad]],
              forced_eos_token_id=None, no_repeat_ngram_size=0, repetition_penalty=1.0, min_length=0,
              renormalize_logits=False, num_return_sequences=1)
    if beam > 1:
        kw.update(length_penalty=0.0, early_stopping=True)
    with torch.no_grad():
        ids = model.generate(**enc, **kw)[0].tolist()
    assert ids[0] == start, ids
    ids = ids[1:]
    return (ids[:-1], True) if ids and ids[-1] == eos else (ids, False)


def log_prob(line, ids, ended):
    """Log-probability of ids (+ </s>) under the Transformers model, as its search counts it: log-softmax
    over the whole vocabulary (<pad> included), no renormalisation after banning <pad>."""
    enc = tok(line, return_tensors='pt')
    target = ids + ([eos] if ended else [])
    with torch.no_grad():
        logits = model(**enc, decoder_input_ids=torch.tensor([[start] + target[:-1]])).logits[0]
    lp = torch.log_softmax(logits.double(), dim=-1)
    return sum(lp[i, t].item() for i, t in enumerate(target))


if mode == 'translate':
    import ctranslate2
    with open(os.path.join(tmp, 'pieces'), 'w', encoding='utf-8') as f:
        for line in src:
            f.write(' '.join(tok.tokenize(line)) + '\n' if line.strip() else '\n')
    ct2 = ctranslate2.Translator(os.path.join(tmp, 'ct2'), device='cpu', compute_type='float32',
                                 inter_threads=1, intra_threads=threads)
    for beam in beams:
        hf_out, ct2_out = [], []
        for line in src:
            if not line.strip():
                hf_out.append(([], True)); ct2_out.append(([], True)); continue
            hf_out.append(hf_translate(line, beam))
            # MarianTokenizer's tokens with </s>, as CTranslate2's documentation feeds Marian models.
            tokens = tok.convert_ids_to_tokens(tok(line)['input_ids'])
            r = ct2.translate_batch([tokens], beam_size=beam, length_penalty=0.0,
                                    max_decoding_length=limit + 1, return_end_token=True)[0].hypotheses[0]
            ended = bool(r) and r[-1] == '</s>'
            ct2_out.append(([vocab.get(p, vocab['<unk>']) for p in (r[:-1] if ended else r)], ended))
        write(os.path.join(tmp, f'hf.{beam}'), hf_out)
        write(os.path.join(tmp, f'ct2.{beam}'), ct2_out)
    sys.exit(0)

status = 0
strict = os.environ.get('STRICT') == '1'
for beam in beams:
    tt = read(os.path.join(tmp, f'tt.{beam}'), tt=True)
    refs = {'Transformers': read(os.path.join(tmp, f'hf.{beam}')),
            'CTranslate2': read(os.path.join(tmp, f'ct2.{beam}'))}
    name = 'greedy' if beam == 1 else f'beam {beam}'
    agreeing = {}   # per reference, the lines where tt agrees with it
    for ref_name, ref in refs.items():
        assert len(ref) == len(tt) == len(src), (ref_name, len(ref), len(tt), len(src))
        whose = ref_name + ("'" if ref_name.endswith('s') else "'s")
        same = limit_same = 0
        differing = []
        for i, ((t, _), (r, r_ended)) in enumerate(zip(tt, ref)):
            if t == r and (r_ended or len(r) == limit):
                same += 1
            elif not r_ended and len(t) == limit and r[:limit] == t:
                limit_same += 1   # tt forced </s> at the limit, the reference went one token further
            else:
                differing.append(i)
        agree = same + limit_same
        agreeing[ref_name] = set(range(len(tt))) - set(differing)
        pct = 100 * agree / len(tt) if tt else 100.0
        line = (f'check-marian: {name:7s} tt = {ref_name}: {agree} of {len(tt)} lines ({pct:.2f} %: {same} '
                f'identical, {limit_same} identical up to the length limit)')
        tt_better = ref_better = 0
        for k, i in enumerate(differing):
            r, r_ended = ref[i]
            # A reference that ran past the limit is scored as tt would have ended it: cut, then </s>.
            cut = not r_ended and len(r) > limit
            lp_tt, lp_ref = log_prob(src[i], tt[i][0], True), log_prob(src[i], r[:limit] if cut else r, cut or r_ended)
            tt_better += lp_tt > lp_ref + 1e-4
            ref_better += lp_ref > lp_tt + 1e-4
            if k < 3:
                print(f'  {name}, line {i + 1}: {src[i][:100]}\n'
                      f'    {"tt".ljust(len(ref_name))}  {" ".join(map(str, tt[i][0]))}\n'
                      f'    {ref_name}  {" ".join(map(str, r))}{"" if r_ended else " (no </s>)"}\n'
                      f'    log-probability under Transformers: tt {lp_tt:.4f}, {ref_name} {lp_ref:.4f}'
                      f'{" (cut at the limit, then </s>)" if cut else ""}', file=sys.stderr)
        if differing:
            line += (f'; differing: {len(differing)}, where tt\'s output is more probable {tt_better}, where '
                     f'{whose} is {ref_better}, equally probable {len(differing) - tt_better - ref_better}')
        print(line)
    # The references' searches differ too (CTranslate2 does not stop when `beam` hypotheses have finished
    # but searches on, and sometimes finds a more probable output): tt is held to CTranslate2 on the lines
    # where the two references agree.
    both = [i for i, (a, b) in enumerate(zip(refs['Transformers'], refs['CTranslate2'])) if a == b]
    tt_both = len(agreeing['CTranslate2'].intersection(both))
    print(f'check-marian: {name:7s} Transformers = CTranslate2: {len(both)} of {len(tt)} lines; '
          f'tt = both on {tt_both} of them')
    if strict:
        n = len(tt)
        if beam == 1:
            failed = len(agreeing['Transformers']) < n or len(agreeing['CTranslate2']) < n
        else:
            failed = len(agreeing['Transformers']) < 0.99 * n or tt_both < 0.99 * len(both)
        status = status or int(failed)
sys.exit(status)
EOF

"$py" "$tmp/marian_ref.py" translate "$hf" "$tmp" "$beams" "$limit" "$threads"
tt_in=$tmp/$([[ $tt_input == text ]] && echo src || echo pieces)
for beam in $beams; do
  "$bin/tt-translate" -m "$tmp/tt-model" --input-format "$tt_input" --output-format ids --beam "$beam" \
    --full-beam --length-penalty none --max-len-a 0 --max-len-b "$limit" --max-src-len "$positions" \
    --batch-size "$batch" --threads "$threads" -q <"$tt_in" >"$tmp/tt.$beam"
done
status=0
"$py" "$tmp/marian_ref.py" compare "$hf" "$tmp" "$beams" "$limit" "$threads" || status=$?
versions=$("$py" -c 'import transformers as t, ctranslate2 as c, torch
print(f"Transformers {t.__version__}, CTranslate2 {c.__version__}, torch {torch.__version__}")')
echo "check-marian: $lines lines of $src, at most $limit target tokens, tt input $tt_input, $versions"
exit "$status"
