#!/usr/bin/env bash
# Training-step speed: tt beside PyTorch (../shared/bench/run_anchor.sh, or the PyPI release through
# run_anchor_pypi.sh), same model, same batches (64 x 32 -> 32 tokens, vocab 8000, dropout 0.1 everywhere as
# the anchor), same threads, run ALTERNATELY in one go (tt, torch, tt, torch, ...) because the machine is
# shared and noisy: quote the ratio, with the CPU model and ISA this prints first.
#
# usage: bench/train_speed.sh [--precision fp32|bf16] [--anchor debian|pypi] [--realtime] [PRESETS] [THREADS]
#   --precision  tt-train's --precision (default fp32)
#   --anchor     debian: PyTorch 1.13 at its best (run_anchor.sh; fp32 only); pypi: the current PyPI release
#                (run_anchor_pypi.sh), fp32 with --precision fp32, bf16 autocast with --precision bf16.
#                Default: debian for fp32, pypi for bf16.
#   --realtime   run tt and torch alike under SCHED_FIFO (chrt -f 10; needs root): on a machine other jobs
#                keep busy, a parallel region otherwise waits a scheduler tick (~4 ms) for its second
#                thread, and both sides measure the neighbours. Other processes get the 5 % that RT
#                throttling leaves while a run lasts.
#   PRESETS      "tiny small base" (default), any of them, space or comma separated
#   THREADS      2 (default)
# environment:
#   ROUNDS=2          tt/torch pairs per preset (at least 2)
#   PEAK=measure      oneDNN GEMM GFLOP/s that "% peak" compares with: by default measured first (~20 s) by
#                     ../shared/bench/gemm_peak.cpp --quick on the d=512 training shapes, the best fp32 variant,
#                     or the best bf16 one with --precision bf16, so that it fits the machine and its ISA (the
#                     same figure would be ~210 fp32 / ~400 bf16 on 2 Zen 4 cores, ~900–1,500 bf16 on an AMX Xeon);
#                     PEAK=N takes N instead
#   TT_TRAIN=...      the tt-train binary (default: build/bin/tt-train, then build-*/bin/tt-train)
#   ANCHOR_DIR=...    where run_anchor.sh lives (default: /work/shared/bench, or ../shared/bench)
set -euo pipefail
cd "$(dirname "$0")/.."

precision=fp32 anchor="" prio=()
while [[ $# -gt 0 && $1 == --* ]]; do
  case $1 in
    --precision) precision=${2:?--precision needs fp32 or bf16}; shift 2 ;;
    --anchor) anchor=${2:?--anchor needs debian or pypi}; shift 2 ;;
    --realtime) prio=(chrt -f 10); shift ;;
    -h|--help) sed -n '2,/^set -euo/{/^set -euo/d;s/^# \{0,1\}//;p}' "$0"; exit 0 ;;
    *) echo "train_speed: unknown option $1" >&2; exit 2 ;;
  esac
done
[[ $precision == fp32 || $precision == bf16 ]] || { echo "train_speed: --precision is fp32 or bf16" >&2; exit 2; }
[[ -n $anchor ]] || { [[ $precision == bf16 ]] && anchor=pypi || anchor=debian; }
[[ $anchor == debian || $anchor == pypi ]] || { echo "train_speed: --anchor is debian or pypi" >&2; exit 2; }
[[ $anchor == pypi || $precision == fp32 ]] || { echo "train_speed: the debian anchor has no bf16; use --anchor pypi" >&2; exit 2; }
anchor_amp=none
[[ $precision == bf16 ]] && anchor_amp=bf16

presets=${1:-"tiny small base"}
presets=${presets//,/ }
threads=${2:-2}
rounds=${ROUNDS:-2}
((rounds >= 2)) || rounds=2
peak=${PEAK:-measure}

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
  # No -march=native: oneDNN picks its kernels at run time, and the timed code is all oneDNN's.
  g++ -O3 -std=c++17 "$anchor_dir/gemm_peak.cpp" -o "$work/gemm_peak" -ldnnl -fopenmp
  # Best fp32 variant (sgemm or f32 matmul primitive), or best bf16 one, over the d=512 training shapes.
  peak=$(OMP_NUM_THREADS=$threads "$work/gemm_peak" --quick |
    awk -v p="$precision" '$1 ~ /^[0-9]+$/ && (p == "bf16" ? $4 ~ /^mm_bf16/ : ($4 ~ /^sgemm/ || $4 ~ /^mm_f32/)) &&
      $6+0 > best { best = $6+0 } END { printf "%.0f", best }')
  echo "train_speed: GEMM peak $peak GFLOP/s" >&2
fi
[[ $peak =~ ^[0-9]+([.][0-9]+)?$ ]] && awk -v p="$peak" 'BEGIN { exit !(p > 0) }' ||
  { echo "train_speed: no GEMM peak ('$peak'); set PEAK=N (GFLOP/s)" >&2; exit 1; }

if [[ $anchor == pypi ]]; then anchor_cmd=("$anchor_dir/run_anchor_pypi.sh"); else anchor_cmd=("$anchor_dir/run_anchor.sh"); fi
cpu_model=$(sed -n 's/^model name[[:space:]]*: //p' /proc/cpuinfo | head -1)
cpu_flags=$(grep -m1 '^flags' /proc/cpuinfo | tr ' ' '\n' | grep -E '^(avx2|avx512f|avx512_bf16|avx512_fp16|avx_vnni|amx_bf16|amx_tile)$' | tr '\n' ' ')
echo "train_speed: CPU $cpu_model; flags ${cpu_flags:-(none of avx2/avx512/bf16/amx)}" >&2
echo "train_speed: tt = $tt_train --precision $precision, anchor = ${anchor_cmd[0]} ($anchor_amp), $threads threads, $rounds rounds${prio:+, SCHED_FIFO}; load $(cut -d' ' -f1-3 /proc/loadavg)" >&2
for preset in $presets; do
  for ((round = 1; round <= rounds; round++)); do
    echo "train_speed: $preset round $round: tt" >&2
    # 13 steps as the anchor (3 warm-up + 10 timed); tt's median skips the first 3 steps too.
    "${prio[@]}" "$tt_train" --preset "$preset" --vocab-size 8000 --dropout 0.1 --attention-dropout 0.1 --relu-dropout 0.1 \
      --synthetic-steps 13 --batch-size 64 --src-len 32 --tgt-len 32 --threads "$threads" --device cpu \
      --seed "$round" --precision "$precision" --quiet >>"$work/tt-$preset.jsonl"
    echo "train_speed: $preset round $round: torch" >&2
    if [[ $anchor == pypi ]]; then
      "${prio[@]}" "${anchor_cmd[0]}" "$preset" "$threads" "$anchor_amp"
    else
      "${prio[@]}" "${anchor_cmd[0]}" "$preset" "$threads"
    fi | sed -n 's/^RESULT //p' >>"$work/torch-$preset.jsonl"
  done
done

python3 - "$work" "$peak" "$threads" "$precision" "$anchor" "$cpu_model" "$cpu_flags" $presets <<'PY'
import json, statistics, sys

work, peak, threads = sys.argv[1], float(sys.argv[2]), sys.argv[3]
precision, anchor, cpu_model, cpu_flags, presets = sys.argv[4], sys.argv[5], sys.argv[6], sys.argv[7].split(), sys.argv[8:]
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

isas = sorted({r.get('matmul_isa', '?') for p in presets for r in load(f"{work}/tt-{p}.jsonl")})
print(f"CPU {cpu_model}; flags {' '.join(cpu_flags)}; tt's oneDNN ISA {', '.join(isas)}")
print(f"training step, batch 64 x 32 -> 32, vocab 8000, {threads} threads, tt {precision} vs torch ({anchor}"
      f"{', bf16 autocast' if precision == 'bf16' else ''}), GEMM peak {peak:.0f} GFLOP/s")
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
print("RESULT " + json.dumps(dict(bench="train_speed", threads=int(threads), precision=precision, anchor=anchor,
                                 cpu=cpu_model, cpu_flags=cpu_flags, matmul_isa=isas, gemm_peak_gflops=peak,
                                 presets=summary)))
PY
