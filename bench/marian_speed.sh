#!/usr/bin/env bash
# Translation speed on a Hugging Face Marian model: tt-translate (after tt-convert import-marian) beside
# CTranslate2 (after its own ct2-transformers-converter) and Transformers' generate, on the same weights and
# the same input, beam 4, batch 32, 2 threads, run ALTERNATELY in one go (tt, CTranslate2, Transformers,
# tt, ...) because the machine is shared and noisy: quote the ratio (as bench/translate_speed.sh).
#
# usage: bench/marian_speed.sh HF_DIR
#   HF_DIR  a MarianMTModel directory (config.json, model.safetensors, source.spm, vocab.json): a download
#           of Helsinki-NLP/opus-mt-en-de, its shape with random weights from scripts/make-marian-fixture.py,
#           or the test suite's tests/data/marian/tiny
# Input: the first $N lines of newstest2014 English (Multi30k test2016 where it is missing), cut into pieces
# by MarianTokenizer once, beforehand (at most min(the model's positions, 256) - 1 pieces a line: none of
# newstest2014 is cut for OPUS-MT); every engine reads those pieces and gets the source </s> appended:
#   tt            tt-translate -m (tt-convert import-marian HF_DIR) --input-format pieces (tt appends </s>),
#                 --length-penalty none --min-len LEN-1 --max-len-a 0 --max-len-b LEN-1, then the forced </s>;
#   ctranslate2   ctranslate2.Translator on the float32 directory of ct2-transformers-converter, its int8
#                 quantized at load by compute_type (as translate_speed.sh), or a directory converted with
#                 --quantization (CT2_STORED); pieces + "</s>" (the converter's config.json says
#                 add_source_eos false: Marian's </s> is the caller's, as MarianTokenizer adds it),
#                 min_decoding_length = max_decoding_length = LEN, length_penalty 0, max_batch_size BATCH;
#   transformers  MarianMTModel.generate in float32 on the CPU (torch threads THREADS), batches of BATCH
#                 sentences sorted by length and padded, num_beams BEAM, min_new_tokens = max_new_tokens =
#                 LEN, forced_eos_token_id None, length_penalty 0: on the first $TF_N lines only (it is
#                 much slower), its tokens/s on those.
# So every output is LEN tokens, LEN decoder steps a sentence: tt's LEN-1 pieces and the forced </s>,
# CTranslate2's and Transformers' LEN pieces (</s> is barred until LEN and the search ends there); the
# script aborts where an engine's line has another count. Prints, per engine and configuration, target
# tokens/s (every generated token including </s>; decoding time = wall time of the process minus that of
# the same process on empty input, i.e. without start-up and model load; best of the rounds), the ratio to
# tt float32 (and for int8 configurations to tt int8), peak RSS; then how many output lines agree between
# runs of the same search (tt at any --workers or stored, CTranslate2 at any layout or stored, Transformers
# with CTranslate2 float32; tt float32 with CTranslate2 float32 on the first LEN-1 tokens, which tt ranks
# with the forced </s>'s probability and so often differs on random weights), tt's ratio to CTranslate2's
# faster layout per compute type (what the project quotes), and the CPU model and its vector flags.
# environment:
#   ROUNDS=2 THREADS=2 BEAM=4 BATCH=32 N=256 LEN=32
#   TF_N=64               lines for Transformers (0: leave it out)
#   TT_TYPES="float32 int8"   tt-translate --compute-type values to run
#   TT_STORED="int8"      also run a copy stored at these types by tt-convert quantize ("tt int8 stored";
#                         empty: none)
#   WORKERS="1 2"         tt-translate --workers values to run (one batch at a time on every thread, or two
#                         batches at once on one thread each)
#   CT2_TYPES="float32 int8"  CTranslate2 compute types to run (int8* types are compared with tt int8)
#   CT2_STORED="int8"     also run a ct2-transformers-converter --quantization copy at these types
#                         ("ctranslate2 int8 stored": the same products, no float32 weights at load;
#                         empty: none). CTranslate2's faster layout is the fastest of its runs of a type.
#   CT2_INTER="1 2"       CTranslate2 inter_threads values to run (intra_threads = THREADS / inter)
#   TT_BIN=build/bin (tt-translate, tt-convert)
#   MARIAN_VENV=${TMPDIR:-/tmp}/tt-marian-venv (torch, transformers, sentencepiece, sacremoses, ctranslate2;
#                made on first use as scripts/check-marian.sh does; TORCH_INDEX_URL=URL installs torch from
#                that index, e.g. one of CPU-only wheels)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
[[ $# -eq 1 ]] || { echo "usage: bench/marian_speed.sh HF_DIR" >&2; exit 2; }
hf=$1
[[ -f $hf/config.json && -f $hf/vocab.json && -f $hf/source.spm ]] ||
  { echo "marian_speed: $hf is not a MarianMTModel directory (config.json, vocab.json, source.spm)" >&2; exit 2; }
hf=$(cd "$hf" && pwd)
rounds=${ROUNDS:-2} threads=${THREADS:-2} beam=${BEAM:-4} batch=${BATCH:-32} n=${N:-256} len=${LEN:-32}
tf_n=${TF_N:-64}
tt_types=${TT_TYPES:-"float32 int8"}
tt_stored=${TT_STORED-int8}
workers=${WORKERS:-"1 2"}
ct2_types=${CT2_TYPES:-"float32 int8"}
ct2_stored=${CT2_STORED-int8}
ct2_inter=${CT2_INTER:-"1 2"}
((len >= 2)) || { echo "marian_speed: LEN must be at least 2" >&2; exit 2; }
bin=${TT_BIN:-$repo/build/bin}
for tool in tt-translate tt-convert; do
  [[ -x $bin/$tool ]] || { echo "marian_speed: $bin/$tool not found; build it or set TT_BIN" >&2; exit 2; }
done
src=
for dir in /work/shared/data/wmt "$repo/../shared/data/wmt"; do
  if [[ -f $dir/newstest2014.en ]]; then src=$dir/newstest2014.en; break; fi
done
py=$("$repo/scripts/marian-venv.sh" marian_speed)
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# run.py: runs one engine as a child process, reports its wall time and peak RSS (wait4), and counts the
# tokens it generated (EOS_ADDED: 1 where the output leaves out the final </s>), checking that every line
# of a non-empty input has exactly LEN of them.
cat >"$work/run.py" <<'EOF'
import json, os, subprocess, sys, time
out_file, stdin_file, eos_added, expect = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
cmd = sys.argv[5:]
with open(stdin_file, 'rb') as fin, open(out_file, 'wb') as fout:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=fin, stdout=fout)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
if status != 0:
    sys.exit(f'marian_speed: {cmd[0]} failed (status {status})')
src = open(stdin_file, encoding='utf-8').read().split('\n')[:-1]
out = open(out_file, encoding='utf-8').read().split('\n')[:-1]
if len(out) != len(src):
    sys.exit(f'marian_speed: {" ".join(cmd[:3])}: {len(out)} output lines for {len(src)} input lines')
tokens = 0
for i, (s, line) in enumerate(zip(src, out)):
    toks = line.split()
    count = len(toks) + (eos_added if toks else 0)
    if count != (expect if s.split() else 0):
        sys.exit(f'marian_speed: {" ".join(cmd[:3])}: line {i + 1} has {count} tokens, not {expect}: {line}')
    tokens += count
print(json.dumps(dict(wall=wall, rss_mb=usage.ru_maxrss / 1024, tokens=tokens, lines=len(src))))
EOF
# ct2.py: one CTranslate2 pass over stdin (pieces a line), the best hypothesis per line on stdout as ids of
# vocab.json, </s> kept (so the count includes it, as tt's). translate_batch sorts by length and cuts
# batches of max_batch_size, spread over the inter_threads translators.
cat >"$work/ct2.py" <<'EOF'
import json, sys
import ctranslate2
model, hf, compute, threads, inter, batch, beam, length = sys.argv[1:]
threads, inter, batch, beam, length = int(threads), int(inter), int(batch), int(beam), int(length)
tr = ctranslate2.Translator(model, device='cpu', compute_type=compute, inter_threads=inter,
                            intra_threads=max(1, threads // inter))
vocab = json.load(open(f'{hf}/vocab.json', encoding='utf-8'))
src = [line.split() for line in sys.stdin]
keep = [i for i, s in enumerate(src) if s]
out = [''] * len(src)
if keep:
    res = tr.translate_batch([src[i] + ['</s>'] for i in keep], beam_size=beam, max_batch_size=batch,
                             min_decoding_length=length, max_decoding_length=length, length_penalty=0.0,
                             return_end_token=True)
    for i, r in zip(keep, res):
        out[i] = ' '.join(str(vocab.get(p, vocab['<unk>'])) for p in r.hypotheses[0])
sys.stdout.write(''.join(line + '\n' for line in out))
EOF
# hf.py: one Transformers pass over stdin (pieces a line, ids of vocab.json + </s>, as MarianTokenizer),
# batches of BATCH sentences sorted by length, padded on the right with an attention mask; the generated
# ids after the decoder start on stdout, up to and including the first </s>.
cat >"$work/hf.py" <<'EOF'
import json, sys
import torch
import transformers
from transformers import MarianMTModel
hf, threads, batch, beam, length = sys.argv[1], *map(int, sys.argv[2:])
torch.set_num_threads(threads)
transformers.logging.set_verbosity_error()
transformers.logging.disable_progress_bar()
model = MarianMTModel.from_pretrained(hf, dtype=torch.float32).eval()
pad, eos = model.config.pad_token_id, model.config.eos_token_id
vocab = json.load(open(f'{hf}/vocab.json', encoding='utf-8'))
src = [[vocab.get(p, vocab['<unk>']) for p in line.split()] + [eos] for line in sys.stdin]
keep = sorted((i for i, s in enumerate(src) if len(s) > 1), key=lambda i: len(src[i]))
out = [''] * len(src)
with torch.inference_mode():
    for k in range(0, len(keep), batch):
        part = keep[k:k + batch]
        width = max(len(src[i]) for i in part)
        ids = torch.full((len(part), width), pad, dtype=torch.long)
        mask = torch.zeros((len(part), width), dtype=torch.long)
        for row, i in enumerate(part):
            ids[row, :len(src[i])] = torch.tensor(src[i])
            mask[row, :len(src[i])] = 1
        gen = model.generate(input_ids=ids, attention_mask=mask, num_beams=beam, do_sample=False,
                             min_new_tokens=length, max_new_tokens=length, forced_eos_token_id=None,
                             length_penalty=0.0, early_stopping=True, bad_words_ids=[[pad]],
                             num_return_sequences=1)
        for row, i in enumerate(part):
            t = gen[row, 1:].tolist()
            out[i] = ' '.join(map(str, t[:t.index(eos) + 1] if eos in t else t))
sys.stdout.write(''.join(line + '\n' for line in out))
EOF

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512|amx|avx_vnni)' | sort | tr '\n' ' ')
echo "marian_speed: $cpu, $(nproc) CPUs, $threads threads, beam $beam, batch $batch, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

if [[ -n $src ]]; then
  head -n "$n" "$src" >"$work/src"
else
  echo "marian_speed: newstest2014.en not found under ../shared/data/wmt; Multi30k test2016 instead" >&2
  src=$repo/data/multi30k/test2016.en.gz
  gzip -dc "$src" | head -n "$n" >"$work/src"
fi
# MarianTokenizer's pieces, at most min(the model's positions, 256: tt's --max-src-len) - 1 a line (then
# </s>): a longer line would be split into sentences by tt and cut or refused by the others. OPUS-MT's
# 512 positions cut no line of newstest2014; the tiny fixture's 128 cut a few of its near-letter pieces.
"$py" - "$hf" "$work/src" >"$work/pieces" <<'EOF'
import json, os, sys
import transformers
from transformers import MarianTokenizer
transformers.logging.set_verbosity_error()
tok = MarianTokenizer.from_pretrained(sys.argv[1])
limit = min(json.load(open(os.path.join(sys.argv[1], 'config.json')))['max_position_embeddings'], 256) - 1
cut = 0
for line in open(sys.argv[2], encoding='utf-8'):
    pieces = tok.tokenize(line.rstrip('\n')) if line.strip() else []
    cut += len(pieces) > limit
    print(' '.join(pieces[:limit]))
if cut:
    print(f'marian_speed: {cut} lines cut to {limit} pieces (+ </s>)', file=sys.stderr)
EOF
head -n "$tf_n" "$work/pieces" >"$work/pieces.tf"
: >"$work/empty"
echo "marian_speed: $hf, $(wc -l <"$work/pieces") lines of $src ($(wc -l <"$work/pieces.tf") for Transformers), $len tokens each" >&2

"$bin/tt-convert" import-marian "$hf" -o "$work/tt" >&2
for type in $tt_stored; do
  "$bin/tt-convert" quantize "$work/tt" -o "$work/tt.$type" --type "$type" -q
done
ct2_convert() {  # DIR [--quantization TYPE]
  local dir=$1
  shift
  "$(dirname "$py")/ct2-transformers-converter" --model "$hf" --output_dir "$dir" "$@" >"$work/ct2.log" 2>&1 ||
    { cat "$work/ct2.log" >&2; echo "marian_speed: ct2-transformers-converter failed" >&2; exit 1; }
}
ct2_convert "$work/ct2"
for type in $ct2_stored; do ct2_convert "$work/ct2.$type" --quantization "$type"; done
echo "marian_speed: CTranslate2's config.json: $(tr -d '\n ' <"$work/ct2/config.json")" >&2

results=$work/results.jsonl
: >"$results"
# measure LABEL INPUT EOS_ADDED COMMAND...: COMMAND on empty input (start-up) and on INPUT, into results;
# the output of the last round is kept as out.LABEL for the comparison with tt float32
measure() {
  local label=$1 input=$2 eos_added=$3
  shift 3
  echo "marian_speed: round $round: $label" >&2
  local load full
  load=$("$py" "$work/run.py" "$work/out" "$work/empty" "$eos_added" "$len" "$@")
  full=$("$py" "$work/run.py" "$work/out.${label// /_}" "$input" "$eos_added" "$len" "$@")
  echo "{\"engine\": \"$label\", \"load\": $load, \"full\": $full}" >>"$results"
}
# run_ct2 LABEL MODEL TYPE: CTranslate2 at every inter_threads value
run_ct2() {
  local model=$2 type=$3 inter label
  for inter in $ct2_inter; do
    label=$1
    ((inter == 1)) || label+=" inter$inter"
    measure "$label" "$work/pieces" 0 "$py" "$work/ct2.py" "$model" "$hf" "$type" "$threads" "$inter" "$batch" "$beam" "$len"
  done
}
tt_args=(--input-format pieces --output-format ids --beam "$beam" --batch-size "$batch" --threads "$threads"
         --device cpu -q --length-penalty none --min-len $((len - 1)) --max-len-a 0 --max-len-b $((len - 1)))
for ((round = 1; round <= rounds; round++)); do
  for type in $tt_types; do
    for w in $workers; do
      label="tt $type"
      ((w == 1)) || label+=" ${w}w"
      measure "$label" "$work/pieces" 1 "$bin/tt-translate" -m "$work/tt" "${tt_args[@]}" --compute-type "$type" --workers "$w"
    done
  done
  for type in $tt_stored; do
    for w in $workers; do
      label="tt $type stored"
      ((w == 1)) || label+=" ${w}w"
      measure "$label" "$work/pieces" 1 "$bin/tt-translate" -m "$work/tt.$type" "${tt_args[@]}" --workers "$w"
    done
  done
  for type in $ct2_types; do run_ct2 "ctranslate2 $type" "$work/ct2" "$type"; done
  for type in $ct2_stored; do run_ct2 "ctranslate2 $type stored" "$work/ct2.$type" "$type"; done
  if ((tf_n > 0)); then
    measure transformers "$work/pieces.tf" 0 "$py" "$work/hf.py" "$hf" "$threads" "$batch" "$beam" "$len"
  fi
done

"$py" - "$results" "$work" "$len" <<'EOF'
import json, os, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
work = sys.argv[2]
best = {}
for r in rows:
    t = r['full']['wall'] - r['load']['wall']
    if t < 0.01:  # a run shorter than the noise of start-up (a tiny model): a token rate, but a meaningless one
        print(f"marian_speed: {r['engine']}: decoding took {t:.3f} s (the run minus its start-up); counted as "
              f"0.01 s: give it more lines", file=sys.stderr)
        t = 0.01
    tok_s = r['full']['tokens'] / t
    e = best.setdefault(r['engine'], dict(tok_s=0, rss=0, all=[]))
    e['all'].append(round(tok_s))
    e['tok_s'] = max(e['tok_s'], tok_s)
    e['rss'] = max(e['rss'], r['full']['rss_mb'])
    e['tokens'], e['lines'] = r['full']['tokens'], r['full']['lines']
engines = list(best)


def is_tt(name, kind, stored=False):
    """name is tt's run at compute type `kind` (any --workers), read from the float32 or the stored model"""
    rest = name.split()
    return rest[:2] == ['tt', kind] and (rest[2:3] == ['stored']) == stored


def ref(kind):
    """tt's run at kind from the float32 model, with the first --workers value run"""
    return next((m for m in engines if is_tt(m, kind)), None)


def kind_of(name):
    """the tt compute type a run is compared with beside float32"""
    t = name.split()[1] if name != 'transformers' else 'float32'
    return 'int8' if t.startswith('int8') else 'bf16' if t in ('bf16', 'bfloat16') else 'float32'


def outputs(name, cut=None):
    """the output ids per line of the last round (tt's without the forced </s>), the first `cut` of each"""
    lines = open(os.path.join(work, 'out.' + name.replace(' ', '_')), encoding='utf-8').read().split('\n')[:-1]
    return [l.split()[:cut] for l in lines]


def same(name, other, cut=None):
    mine, theirs = outputs(name, cut), outputs(other, cut)
    return f"{name} = {other} on {sum(a == b for a, b in zip(mine, theirs))} of {min(len(mine), len(theirs))}"


for name in engines:
    e = best[name]
    ratio = ''
    for kind in dict.fromkeys(['float32', kind_of(name)]):
        r = ref(kind)
        if r and r != name:
            ratio += f"  this/{r} {e['tok_s'] / best[r]['tok_s']:.2f}x"
    print(f"marian {name:28} {e['tok_s']:8.0f} tgt tok/s  (rounds: {', '.join(map(str, e['all']))}; "
          f"{e['tokens']} tokens, {e['lines']} lines)  peak RSS {e['rss']:.0f} MB{ratio}")
# Identical searches give identical lines: tt's at any --workers and from the stored model, CTranslate2's
# at any inter_threads and stored or not, Transformers' and CTranslate2's float32 (LEN free tokens each)
# where the two searches agree; tt's float32 ranks its LEN-1 tokens with the forced </s>, so it differs
# from CTranslate2's first LEN-1 where the search picked another hypothesis for that.
checks = []
for name in engines:
    if name.startswith('tt '):
        other = ref(name.split()[1])
    elif name.startswith('ctranslate2 '):
        other = next(m for m in engines if m.split()[:2] == name.split()[:2])
    else:
        other = 'ctranslate2 float32' if 'ctranslate2 float32' in best else None
    if other and other != name:
        checks.append(same(name, other))
c32 = next((m for m in engines if m.split()[:2] == ['ctranslate2', 'float32']), None)
if ref('float32') and c32:
    checks.append(same(ref('float32'), c32, int(sys.argv[3]) - 1) + f' (first {int(sys.argv[3]) - 1} tokens)')
if checks:
    print(f"marian outputs of the last round: {'; '.join(checks)}")
# tt against CTranslate2's faster layout (of its inter_threads values, stored or not) per compute type
for t in dict.fromkeys(n.split()[1] for n in engines if n.startswith('ctranslate2 ')):
    group = [n for n in engines if n.startswith('ctranslate2 ') and n.split()[1] == t]
    fast = max(group, key=lambda n: best[n]['tok_s'])
    kind = kind_of(fast) if ref(kind_of(fast)) else 'float32'
    tts = [n for n in engines if is_tt(n, kind) or is_tt(n, kind, stored=True)]
    print(f"marian tt/CTranslate2 {t}, against its faster layout ({fast}: {best[fast]['tok_s']:.0f} tok/s, "
          f"{best[fast]['rss']:.0f} MB): "
          + ', '.join(f"{n} {best[n]['tok_s'] / best[fast]['tok_s']:.2f}x ({best[n]['rss']:.0f} MB)" for n in tts))
EOF
versions=$("$py" -c 'import transformers as t, ctranslate2 as c, torch
print(f"Transformers {t.__version__}, CTranslate2 {c.__version__}, torch {torch.__version__}")')
echo "versions: $versions"
echo "cpu: $cpu; flags: $flags"
