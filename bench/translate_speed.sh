#!/usr/bin/env bash
# Translation speed: tt-translate beside CTranslate2 (PyPI, in a throwaway venv) on the same weights
# (tt-convert export-ct2), same input, beam 4, batch 32, 2 threads, run ALTERNATELY in one go
# (tt, CTranslate2, tt, ...) because the machine is shared and noisy: quote the ratio (issue 8, "Speed").
#
# usage: bench/translate_speed.sh [MULTI30K_MODEL_DIR]
#   1. a `base` model (d512, 6+6, vocab 8000) with random weights on the first $N lines of newstest2014
#      (tokenised with a SentencePiece model trained on the bundled Multi30k), every output exactly $LEN
#      tokens including </s> on both sides: tt --min-len/--max-len-b LEN-1 (then the forced </s>),
#      CTranslate2 min_decoding_length = max_decoding_length = LEN;
#   2. with MULTI30K_MODEL_DIR (a trained tt model directory carrying its SentencePiece model): Multi30k
#      test2016, natural lengths (power length penalty, alpha 0.6, max length source + 50).
# Prints, per case and engine, target tokens/s (every generated token including </s>, i.e. decoder steps
# per sentence; decoding time = wall time of the process minus that of the same process on the input's
# first line alone, i.e. without start-up, model load and packing, which tt does at the first batch and
# CTranslate2 before it; best of the rounds), the tt/CTranslate2 ratio, each engine's peak RSS and its
# start-up (the one-line run's wall time, best of the rounds). Ends with the CPU model and its vector flags.
# environment:
#   ROUNDS=2 THREADS=2 BEAM=4 BATCH=32 N=256 LEN=32
#   TT_TYPES="float32"    tt-translate --compute-type values to run (e.g. "float32 int8")
#   CT2_TYPES="float32"   CTranslate2 compute types to run (each is compared with tt's float32, or with
#                         tt's int8 for CTranslate2's int8* types when TT_TYPES has int8;
#                         e.g. "float32 int8_float32 int8" for reference figures)
#   TT_STORED=""          also run a copy of the model stored at these types by tt-convert quantize (e.g.
#                         "int8 bf16"; labelled "tt int8 stored", compared like tt int8)
#   WORKERS="1"           tt-translate --workers values to run (e.g. "1 2": one batch at a time on every
#                         thread, or two batches at once on one thread each)
#   CT2_INTER="1"         CTranslate2 inter_threads values to run (intra_threads = THREADS / inter), e.g. "1 2"
#   CASES="base multi30k" which cases to run (multi30k needs the model dir argument)
#   TT_BIN=build/bin (tt-translate, tt-train, tt-tokenize, tt-convert)
#   CT2_VENV=${TMPDIR:-/tmp}/tt-ct2-venv (ctranslate2; made on first use)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
m30k_model=${1:-}
rounds=${ROUNDS:-2} threads=${THREADS:-2} beam=${BEAM:-4} batch=${BATCH:-32} n=${N:-256} len=${LEN:-32}
ct2_types=${CT2_TYPES:-float32}
tt_types=${TT_TYPES:-float32}
tt_stored=${TT_STORED:-}
workers=${WORKERS:-1} ct2_inter=${CT2_INTER:-1}
cases=${CASES:-"base multi30k"}
((len >= 2)) || { echo "translate_speed: LEN must be at least 2" >&2; exit 2; }
bin=${TT_BIN:-$repo/build/bin}
for tool in tt-translate tt-train tt-tokenize tt-convert; do
  [[ -x $bin/$tool ]] || { echo "translate_speed: $bin/$tool not found; build it or set TT_BIN" >&2; exit 2; }
done
for dir in /work/shared/data/wmt "$repo/../shared/data/wmt"; do
  if [[ -f $dir/newstest2014.en ]]; then newstest=$dir/newstest2014.en; break; fi
done
venv=${CT2_VENV:-${TMPDIR:-/tmp}/tt-ct2-venv}
if ! "$venv/bin/python" -c 'import ctranslate2' 2>/dev/null; then
  echo "translate_speed: making a venv with ctranslate2 in $venv" >&2
  python3 -m venv "$venv" && "$venv/bin/pip" install -q ctranslate2 >&2
fi
py=$venv/bin/python
work=$(mktemp -d); trap 'rm -rf "$work"' EXIT

# run.py: runs one engine as a child process, reports its wall time and peak RSS (wait4), and counts the
# tokens it generated. CTranslate2 runs through ct2.py below so that both are whole processes.
cat >"$work/run.py" <<'EOF'
import json, os, subprocess, sys, time
out_file, stdin_file, eos_added = sys.argv[1], sys.argv[2], int(sys.argv[3])
cmd = sys.argv[4:]
with open(stdin_file, 'rb') as fin, open(out_file, 'wb') as fout:
    t0 = time.perf_counter()
    p = subprocess.Popen(cmd, stdin=fin, stdout=fout)
    _, status, usage = os.wait4(p.pid, 0)
    wall = time.perf_counter() - t0
if status != 0:
    sys.exit(f'translate_speed: {cmd[0]} failed (status {status})')
tokens = 0
with open(out_file, encoding='utf-8') as f:
    for line in f:
        toks = line.split()
        tokens += len(toks) + (eos_added if toks else 0)
print(json.dumps(dict(wall=wall, rss_mb=usage.ru_maxrss / 1024, tokens=tokens)))
EOF
cat >"$work/ct2.py" <<'EOF'
# One CTranslate2 pass over stdin (pieces or ids a line), best hypothesis per line on stdout, </s> kept
# (so the count includes it, as tt's). translate_batch sorts by length and cuts batches of max_batch_size.
import json, sys
import ctranslate2
model, fmt, compute, threads, inter, batch, beam, fixed, alpha, a, b = sys.argv[1:]
threads, inter, batch, beam, fixed, b = int(threads), int(inter), int(batch), int(beam), int(fixed), int(b)
tr = ctranslate2.Translator(model, device='cpu', compute_type=compute, inter_threads=inter,
                            intra_threads=max(1, threads // inter))
vocab = json.load(open(f'{model}/shared_vocabulary.json'))
index = {p: i for i, p in enumerate(vocab)}
src = [[vocab[int(t)] for t in line.split()] if fmt == 'ids' else line.split() for line in sys.stdin]
keep = [i for i, s in enumerate(src) if s]
if fixed:
    kw = dict(min_decoding_length=fixed, max_decoding_length=fixed, length_penalty=0.0)
else:
    longest = max((len(src[i]) for i in keep), default=0)
    kw = dict(max_decoding_length=int(float(a) * longest + b) + 1, length_penalty=float(alpha))
out = [''] * len(src)
if keep:
    res = tr.translate_batch([src[i] for i in keep], beam_size=beam, max_batch_size=batch,
                             return_end_token=True, **kw)
    for i, r in zip(keep, res):
        out[i] = ' '.join(str(index[p]) if fmt == 'ids' else p for p in r.hypotheses[0])
sys.stdout.write(''.join(line + '\n' for line in out))
EOF

cpu=$(lscpu | sed -n 's/^Model name: *//p' | head -1)
flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|fma|avx512|amx|avx_vnni)' | sort | tr '\n' ' ')
echo "translate_speed: $cpu, $(nproc) CPUs, $threads threads, beam $beam, batch $batch, $rounds rounds; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# run_tt LABEL ARGS...: tt-translate ARGS on the first line (start-up) and on bench's input, into its results
run_tt() {
  local label=$1
  shift
  echo "translate_speed: $name round $round: $label" >&2
  local tt=("$py" "$work/run.py" "$work/out" "$work/first" 1 "$bin/tt-translate" "$@") load full
  load=$("${tt[@]}")
  tt[3]=$input
  full=$("${tt[@]}")
  echo "{\"engine\": \"$label\", \"load\": $load, \"full\": $full}" >>"$results"
}

# bench NAME TT_MODEL CT2_MODEL FORMAT INPUT FIXED_LEN
bench() {
  local name=$1 tt_model=$2 ct2_model=$3 format=$4 input=$5 fixed=$6
  local tt_args=(-m "$tt_model" --input-format "$format" --output-format "$format" --beam "$beam" --batch-size "$batch"
                 --threads "$threads" --device cpu -q)
  if ((fixed > 0)); then
    tt_args+=(--length-penalty none --min-len $((fixed - 1)) --max-len-a 0 --max-len-b $((fixed - 1)))
  else
    tt_args+=(--length-penalty power --alpha 0.6 --max-len-a 1 --max-len-b 50)
  fi
  head -n 1 "$input" >"$work/first"
  local results=$work/$name.jsonl
  : >"$results"
  for ((round = 1; round <= rounds; round++)); do
    local load full
    for type in $tt_types; do
      for w in $workers; do
        local label="tt $type"
        ((w == 1)) || label+=" ${w}w"
        run_tt "$label" "${tt_args[@]}" --compute-type "$type" --workers "$w"
      done
    done
    for type in $tt_stored; do
      [[ -d $work/$name.$type ]] || "$bin/tt-convert" quantize "$tt_model" -o "$work/$name.$type" --type "$type" -q
      local stored=("${tt_args[@]}")
      stored[1]=$work/$name.$type  # -m: the stored copy, run at its stored type
      for w in $workers; do
        local label="tt $type stored"
        ((w == 1)) || label+=" ${w}w"
        run_tt "$label" "${stored[@]}" --workers "$w"
      done
    done
    for type in $ct2_types; do
      for inter in $ct2_inter; do
        local label="ctranslate2 $type"
        ((inter == 1)) || label+=" inter$inter"
        echo "translate_speed: $name round $round: $label" >&2
        local ct2=("$py" "$work/ct2.py" "$ct2_model" "$format" "$type" "$threads" "$inter" "$batch" "$beam" "$fixed" 0.6 1 50)
        load=$("$py" "$work/run.py" "$work/out" "$work/first" 0 "${ct2[@]}")
        full=$("$py" "$work/run.py" "$work/out" "$input" 0 "${ct2[@]}")
        echo "{\"engine\": \"$label\", \"load\": $load, \"full\": $full}" >>"$results"
      done
    done
  done
  "$py" - "$results" "$name" <<'EOF'
import json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
best = {}
for r in rows:
    t = r['full']['wall'] - r['load']['wall']
    tok_s = (r['full']['tokens'] - r['load']['tokens']) / t
    e = best.setdefault(r['engine'], dict(tok_s=0, rss=0, all=[], start=float('inf')))
    e['all'].append(round(tok_s))
    e['tok_s'] = max(e['tok_s'], tok_s)
    e['start'] = min(e['start'], r['load']['wall'])
    e['rss'] = max(e['rss'], r['full']['rss_mb'])
    e['tokens'] = r['full']['tokens']
engines = list(best)
for name in engines:
    e = best[name]
    ratio = ''
    if name.startswith('ctranslate2'):  # against every tt run of the same kind (float32 or int8)
        has_int8 = any(m == 'tt int8' or m.startswith('tt int8 ') for m in engines)
        kind = 'tt int8' if name.split()[1].startswith('int8') and has_int8 else 'tt float32'
        mine = [m for m in engines if m == kind or m.startswith(kind + ' ')]
        ratio = ''.join(f"  {m}/this {best[m]['tok_s'] / e['tok_s']:.2f}x" for m in mine)
    print(f"{sys.argv[2]:9} {name:24} {e['tok_s']:8.0f} tgt tok/s  (rounds: {', '.join(map(str, e['all']))}; "
          f"{e['tokens']} tokens)  peak RSS {e['rss']:.0f} MB  start-up {e['start']:.2f} s{ratio}")
EOF
}

if [[ " $cases " == *" base "* ]]; then
  [[ -n ${newstest:-} ]] || { echo "translate_speed: newstest2014.en not found under ../shared/data/wmt" >&2; exit 2; }
  echo "translate_speed: base model (random weights), SentencePiece on Multi30k, $n lines of newstest2014" >&2
  for l in en de; do gzip -dc "$repo/data/multi30k/train.$l.gz" >"$work/train.$l"; done
  "$bin/tt-tokenize" train -i "$work/train.en" "$work/train.de" -o "$work/spm" --vocab-size 8000 --threads "$threads" -q
  head -n "$n" "$newstest" | "$bin/tt-tokenize" encode -m "$work/spm.model" --format id --threads "$threads" >"$work/base.ids"
  # One step on a 1 x 2 -> 2 batch: the weights stay (almost) the random initialisation.
  "$bin/tt-train" --preset base --vocab-size 8000 --synthetic-steps 1 --batch-size 1 --src-len 2 --tgt-len 2 \
    --threads "$threads" --quiet -o "$work/base" >/dev/null
  "$bin/tt-convert" export-ct2 "$work/base" -o "$work/base.ct2" >&2
  bench base "$work/base" "$work/base.ct2" ids "$work/base.ids" "$len"
fi
if [[ " $cases " == *" multi30k "* && -n $m30k_model ]]; then
  spm=$("$py" -c 'import json, os, sys; d = sys.argv[1]; print(os.path.join(d, json.load(open(d + "/config.json"))["vocab"]["source"]))' "$m30k_model")
  gzip -dc "$repo/data/multi30k/test2016.en.gz" | "$bin/tt-tokenize" encode -m "$spm" --threads "$threads" >"$work/m30k.pieces"
  "$bin/tt-convert" export-ct2 "$m30k_model" -o "$work/m30k.ct2" >&2
  bench multi30k "$m30k_model" "$work/m30k.ct2" pieces "$work/m30k.pieces" 0
fi
echo "cpu: $cpu; flags: $flags"
