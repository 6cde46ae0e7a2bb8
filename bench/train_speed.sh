#!/usr/bin/env bash
# Training-step speed: tt beside PyTorch at its best (../shared/bench/run_anchor.sh), same model, same
# batches (64 x 32 -> 32 tokens, vocab 8000, dropout 0.1 everywhere as the anchor), same threads, run
# ALTERNATELY in one go (tt, torch, tt, torch, ...) because the machine is shared and noisy: quote the ratio.
#
# usage: bench/train_speed.sh [PRESETS] [THREADS]
#   PRESETS  "tiny small base" (default), any of them, space or comma separated
#   THREADS  2 (default)
# environment:
#   ROUNDS=2          tt/torch pairs per preset (at least 2)
#   PEAK=390          oneDNN fp32 GEMM GFLOP/s to compare with; PEAK=measure builds and runs
#                     ../shared/bench/gemm_peak.cpp on the training shapes with THREADS threads
#   TT_TRAIN=...      the tt-train binary (default: build/bin/tt-train, then build-*/bin/tt-train)
#   ANCHOR_DIR=...    where run_anchor.sh lives (default: /work/shared/bench, or ../shared/bench)
set -euo pipefail
cd "$(dirname "$0")/.."

presets=${1:-"tiny small base"}
presets=${presets//,/ }
threads=${2:-2}
rounds=${ROUNDS:-2}
((rounds >= 2)) || rounds=2
peak=${PEAK:-390}

for dir in "${ANCHOR_DIR:-}" /work/shared/bench ../shared/bench; do
  if [[ -n $dir && -x $dir/run_anchor.sh ]]; then anchor_dir=$(cd "$dir" && pwd); break; fi
done
[[ -n ${anchor_dir:-} ]] || { echo "train_speed: cannot find run_anchor.sh; set ANCHOR_DIR" >&2; exit 1; }

tt_train=${TT_TRAIN:-}
if [[ -z $tt_train ]]; then
  for candidate in build/bin/tt-train build-*/bin/tt-train; do
    if [[ -x $candidate ]]; then tt_train=$candidate; break; fi
  done
fi
[[ -n $tt_train && -x $tt_train ]] || { echo "train_speed: no tt-train binary; build first or set TT_TRAIN" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

if [[ $peak == measure ]]; then
  echo "train_speed: measuring the oneDNN GEMM peak ($threads threads)..." >&2
  g++ -O3 -march=native -std=c++17 "$anchor_dir/gemm_peak.cpp" -o "$work/gemm_peak" -ldnnl -fopenmp
  # Best fp32 variant (sgemm or f32 matmul primitive) over the d=512 training shapes.
  peak=$(OMP_NUM_THREADS=$threads "$work/gemm_peak" --quick |
    awk '$1 ~ /^[0-9]+$/ && ($4 ~ /^sgemm/ || $4 ~ /^mm_f32/) && $6+0 > best { best = $6+0 } END { printf "%.0f", best }')
  echo "train_speed: GEMM peak $peak GFLOP/s" >&2
fi

echo "train_speed: tt = $tt_train, anchor = $anchor_dir/run_anchor.sh, $threads threads, $rounds rounds" >&2
for preset in $presets; do
  for ((round = 1; round <= rounds; round++)); do
    echo "train_speed: $preset round $round: tt" >&2
    # 13 steps as the anchor (3 warm-up + 10 timed); tt's median skips the first 3 steps too.
    "$tt_train" --preset "$preset" --vocab-size 8000 --dropout 0.1 --attention-dropout 0.1 --relu-dropout 0.1 \
      --synthetic-steps 13 --batch-size 64 --src-len 32 --tgt-len 32 --threads "$threads" --device cpu \
      --seed "$round" --quiet >>"$work/tt-$preset.jsonl"
    echo "train_speed: $preset round $round: torch" >&2
    "$anchor_dir/run_anchor.sh" "$preset" "$threads" | sed -n 's/^RESULT //p' >>"$work/torch-$preset.jsonl"
  done
done

python3 - "$work" "$peak" "$threads" $presets <<'PY'
import json, statistics, sys

work, peak, threads, presets = sys.argv[1], float(sys.argv[2]), sys.argv[3], sys.argv[4:]
# The anchor's models (../shared/bench/nmt_model.py CONFIGS) and its analytic FLOP count
# (forward_matmul_flops; training = 3 x forward).
configs = {'tiny': dict(d=128, h=4, ff=256, enc=4, dec=4, V=8000),
           'small': dict(d=256, h=4, ff=1024, enc=3, dec=3, V=8000),
           'base': dict(d=512, h=8, ff=2048, enc=6, dec=6, V=8000)}

def forward_matmul_flops(cfg, B, S, T):
    d, ff, V = cfg['d'], cfg['ff'], cfg['V']
    Ns, Nt = B * S, B * T
    enc_layer = 4 * 2 * Ns * d * d + 2 * 2 * B * S * S * d + 2 * 2 * Ns * d * ff
    dec_self = 4 * 2 * Nt * d * d + 2 * 2 * B * T * T * d
    dec_cross = 2 * 2 * Nt * d * d + 2 * 2 * Ns * d * d + 2 * 2 * B * T * S * d
    dec_layer = dec_self + dec_cross + 2 * 2 * Nt * d * ff
    return cfg['enc'] * enc_layer + cfg['dec'] * dec_layer + 2 * Nt * d * V

def load(path):
    with open(path) as f:
        return [json.loads(line) for line in f if line.strip()]

print(f"training step, batch 64 x 32 -> 32, vocab 8000, {threads} threads, GEMM peak {peak:.0f} GFLOP/s")
print(f"{'preset':<7}{'tt tok/s':>10}{'torch tok/s':>13}{'ratio':>7}{'tt GFLOP/s':>12}{'% peak':>8}"
      f"{'torch GFLOP/s':>15}{'tt RSS MB':>11}{'torch RSS MB':>14}  per-round ratios")
summary = {}
for p in presets:
    tt, torch = load(f"{work}/tt-{p}.jsonl"), load(f"{work}/torch-{p}.jsonl")
    flop = 3 * forward_matmul_flops(configs[p], 64, 32, 32)
    tt_tok = statistics.median(r['tgt_tok_s'] for r in tt)
    torch_tok = statistics.median(r['tgt_tok_s'] for r in torch)
    # From the median tokens/s (not a mean of step times), so it agrees with the ratio column.
    tt_gflops = flop * tt_tok / (64 * 32) / 1e9
    torch_gflops = statistics.median(r['achieved_gflops'] for r in torch)
    rounds = [a['tgt_tok_s'] / b['tgt_tok_s'] for a, b in zip(tt, torch)]
    tt_rss = max(r['peak_rss_mb'] for r in tt)
    torch_rss = max(r['peak_rss_mb'] for r in torch)
    print(f"{p:<7}{tt_tok:>10.0f}{torch_tok:>13.0f}{tt_tok / torch_tok:>7.2f}{tt_gflops:>12.1f}"
          f"{100 * tt_gflops / peak:>7.0f}%{torch_gflops:>15.1f}{tt_rss:>11.0f}{torch_rss:>14.0f}  "
          + " ".join(f"{r:.2f}" for r in rounds))
    summary[p] = dict(tt_tgt_tok_s=round(tt_tok, 1), torch_tgt_tok_s=round(torch_tok, 1),
                      ratio=round(tt_tok / torch_tok, 3), round_ratios=[round(r, 3) for r in rounds],
                      tt_gflops=round(tt_gflops, 1), percent_of_peak=round(100 * tt_gflops / peak, 1),
                      torch_gflops=torch_gflops, tt_peak_rss_mb=tt_rss, torch_peak_rss_mb=torch_rss,
                      tt_last_loss=tt[-1]['last_loss'], torch_last_loss=torch[-1]['last_loss'])
print("RESULT " + json.dumps(dict(bench="train_speed", threads=int(threads), gemm_peak_gflops=peak, presets=summary)))
PY
