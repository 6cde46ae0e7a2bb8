#!/usr/bin/env bash
# The GPU check of issue 14, in one go on a CUDA host (one H200, 16 cores, no network): configure and
# build tt with CUDA, run the CUDA tests and the conformance suite, time training steps (small, base, big; fp32
# and bf16, with a per-kernel profile of base bf16) and translation (base, beam 4, batch 64), and print ONE table.
#
# usage: scripts/gpu-check.sh [--build DIR | --bundle FILE] [--demo DIR] [--jobs N] [--budget SECONDS] [--quick]
#   --build DIR     build folder (default build-gpu in the repository root)
#   --bundle FILE   no build here: run what scripts/gpu-bundle.sh packed on a machine with nvcc (tools,
#                   plugin, CUDA and conformance tests, their libraries)
#   --demo DIR      a scripts/demo.sh output (model/, data/test2016.*): adds the features stage, every
#                   decoding option and model file on the CPU and the GPU (scripts/gpu-features.sh)
#   --feature-lines N  source lines per row of the features stage (default 1000: all of test2016)
#   --jobs N        parallel build jobs (default: the number of CPUs)
#   --budget S      wall-clock budget for everything (default 470: under 8 minutes)
#   --build-limit S the build stage's own limit (default 300)
#   --quick         fewer training steps and translated lines (a dry run of the script itself)
# Logs: LOG_DIR/gpu-check.log has everything; LOG_DIR/<stage>.log each stage's output; LOG_DIR/table.txt
# the table. LOG_DIR is $OUT when set, else BUILD/gpu-check.
# Dependencies: tt's Debian libraries (oneDNN, SentencePiece, utf8proc, CLI11, nlohmann-json, Catch2,
# pkgconf) are taken from .gpu-deps/*.deb when that folder exists (scripts/gpu-deps.sh fills it on a
# Debian 12 machine with network), unpacked into BUILD/gpu-deps-root, never into /; else from the system.
# Time: every stage runs under `timeout`, bounded by its own limit and by what is left of the budget; a
# stage that fails or times out is marked in the table and the next one runs. Exit status 0 when every
# stage passed, 1 otherwise.
#
# Model FLOPs (for MFU against the H200's 989 TFLOP/s dense bf16 peak): per sentence of S source and T
# target tokens, 6 FLOPs per matrix-product weight per token it touches (forward 2, backward 4), plus the
# attention products (QK^T and PV, 4 FLOPs per query-key pair per model dimension forward, x3 with
# backward; causal self-attention counted in full, as tt computes it):
#   encoder layer: 6 (4 D^2 + 2 D F) S + 12 S^2 D
#   decoder layer: 6 ((4 D^2 + 2 D^2 + 2 D F) T + 2 D^2 S) + 12 T^2 D + 12 T S D
#                  (self q,k,v,o; cross q,o on T and cross k,v on S; FFN)
#   output projection (tied embedding): 6 V D T
# Embedding gathers, layer norms, softmax, dropout, loss and Adam are not counted.
set -uo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build-gpu
jobs=$(nproc 2>/dev/null || echo 4)
budget=470
build_limit=300
quick=0
bundle=
demo=
feature_lines=1000
while (($#)); do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    --bundle) bundle=$(realpath -m "$2"); shift 2 ;;
    --demo) demo=$(realpath -m "$2"); shift 2 ;;
    --feature-lines) feature_lines=$2; shift 2 ;;
    --jobs) jobs=$2; shift 2 ;;
    --budget) budget=$2; shift 2 ;;
    --build-limit) build_limit=$2; shift 2 ;;
    --quick) quick=1; shift ;;
    -h|--help) sed -n '2,24p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-check: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -z $bundle || -f $bundle ]] || { echo "gpu-check: --bundle $bundle: no such file" >&2; exit 2; }
[[ -z $demo || -d $demo/model ]] || { echo "gpu-check: --demo $demo: no model/ in it" >&2; exit 2; }
start=$(date +%s)
deadline=$((start + budget))
logdir=${OUT:-$build/gpu-check}
mkdir -p "$logdir" || { echo "gpu-check: cannot create $logdir" >&2; exit 2; }
log=$logdir/gpu-check.log
: >"$log"
work=$(mktemp -d "${TMPDIR:-/tmp}/tt-gpu-check.XXXXXX")
trap 'rm -rf "$work"' EXIT
bin=$build/bin
peak_tflops=989
vocab=37000
batch=500 src_len=50 tgt_len=50  # 25,000 target (and source) tokens a step
steps=10                          # the median skips the first 3 (tt-train --synthetic-steps)
lines=512 out_len=32              # translation: every output exactly out_len tokens including </s>
if ((quick)); then steps=4 lines=64; fi

note() { echo "gpu-check: $*" | tee -a "$log" >&2; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.1f", b - a }'; }

# The table: one row per stage.
rows=()
failures=0
row() {  # row NAME STATUS SECONDS RESULT
  rows+=("$1|$2|$3|$4")
  [[ $2 == ok || $2 == skipped* ]] || failures=$((failures + 1))
}

# run_stage NAME LIMIT CMD...: runs CMD under timeout (the stage limit or what is left of the budget,
# whichever is less) with its output in $logdir/NAME.log (appended to the full log too). Sets rc (124:
# timed out, 125: no time left) and secs.
run_stage() {
  local name=$1 limit=$2
  shift 2
  local left=$((deadline - $(date +%s) - 5))
  secs=0
  if ((left < 5)); then
    rc=125
    note "$name: no time left in the ${budget} s budget"
    echo "no time left in the budget" >"$logdir/$name.log"
    return
  fi
  ((limit > left)) && limit=$left
  note "$name (at most ${limit} s): $*"
  local t0
  t0=$(now)
  timeout -k 5 "$limit" "$@" >"$logdir/$name.log" 2>&1 </dev/null
  rc=$?
  secs=$(elapsed "$t0")
  { echo "----- $name: exit $rc after $secs s"; cat "$logdir/$name.log"; echo; } >>"$log"
  ((rc == 124 || rc == 137)) && note "$name: timed out after $limit s"
  ((rc != 0 && rc != 124 && rc != 137)) && note "$name: failed (exit $rc); last lines:" &&
    tail -n 5 "$logdir/$name.log" | sed 's/^/    /' >&2
}

status_of() {  # the table's status word for rc
  case $1 in
    0) echo ok ;;
    124|137) echo TIMEOUT ;;
    125) echo "NO TIME" ;;
    *) echo "FAILED ($1)" ;;
  esac
}

# ---- the machine ----------------------------------------------------------------------------------
{
  echo "gpu-check: $(date -u +%Y-%m-%dT%H:%M:%SZ), repo $repo ($(git -C "$repo" rev-parse --short HEAD 2>/dev/null || echo 'no git'))"
  echo "cpu: $(lscpu 2>/dev/null | sed -n 's/^Model name: *//p' | head -1), $(nproc) CPUs"
  timeout 20 nvidia-smi --query-gpu=name,driver_version,memory.total,clocks.max.sm --format=csv 2>&1 ||
    echo "nvidia-smi: not available"
} >>"$log" 2>&1
gpu=$(timeout 20 nvidia-smi --query-gpu=name --format=csv,noheader 2>/dev/null | head -1)
[[ -n $gpu ]] || gpu="no GPU visible (nvidia-smi)"
note "GPU: $gpu; budget $budget s; logs in $logdir"
if ! command -v nvcc >/dev/null && [[ -x /usr/local/cuda/bin/nvcc ]]; then export PATH=/usr/local/cuda/bin:$PATH; fi
for tool in nvcc cmake g++; do
  { command -v $tool && timeout 20 $tool --version | head -4; } >>"$log" 2>&1 || echo "$tool: not found" >>"$log"
done

# ---- a bundle instead of a build ------------------------------------------------------------------
# Unpacked into the repository root; its test binaries name the paths of the machine that built them, so
# that repository path is linked here when it is free.
built=0
if [[ -n $bundle ]]; then
  run_stage bundle 60 tar -xJf "$bundle" -C "$repo"
  name=$(tar -tJf "$bundle" | head -1 | cut -d/ -f1)
  build=$repo/$name bin=$repo/$name/bin
  root=$(cat "$build/bundle-root.txt" 2>/dev/null)
  if ((rc == 0)) && [[ -n $root && $root != "$repo" && ! -e $root ]]; then
    mkdir -p "$(dirname "$root")" && ln -s "$repo" "$root" && note "linked $root -> $repo (the bundle's paths)"
  fi
  export LD_LIBRARY_PATH=$build/bundle-libs:/usr/local/cuda/lib64:/usr/local/cuda/lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  missing=$(ldd "$bin/tt-train" "$build/lib/tt/libtt_cuda.so" 2>&1 | grep -c 'not found')
  if ((rc == 0 && missing == 0)) && [[ -n $root ]] && [[ $(realpath "$root") == "$(realpath "$repo")" ]]; then
    built=1
    row "bundle (built elsewhere, $(cat "$build/bundle-commit.txt"))" ok "$secs" "$(find "$build/bundle-libs" -type f | wc -l) libraries"
  else
    row "bundle" "FAILED" "$secs" "unpacked: exit $rc; libraries not found: $missing; paths: ${root:-none} -> $repo"
  fi
fi

# ---- dependencies ---------------------------------------------------------------------------------
if [[ -z $bundle ]]; then
cmake_args=(-DCMAKE_BUILD_TYPE=Release -DTT_BUILD_TESTS=ON -DTT_WITH_CUDA=ON -DTT_MPI=OFF
            -DCMAKE_CUDA_ARCHITECTURES="${CUDA_ARCH:-90}")
command -v nvcc >/dev/null && cmake_args+=(-DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
command -v ninja >/dev/null && cmake_args+=(-G Ninja)
if command -v ccache >/dev/null; then
  cmake_args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
fi
if compgen -G "$repo/.gpu-deps/*.deb" >/dev/null; then
  deps=$build/gpu-deps-root  # stable: the CMake cache of a rerun still points here
  unpack_debs() {
    rm -rf "$deps" && mkdir -p "$deps"
    for deb in "$repo"/.gpu-deps/*.deb; do
      if command -v dpkg-deb >/dev/null; then
        dpkg-deb -x "$deb" "$deps" || return 1
      else  # a .deb is an ar archive holding data.tar.*
        (cd "$work" && ar x "$deb" && tar -xf data.tar.* -C "$deps" && rm -f data.tar.* control.tar.* debian-binary) ||
          return 1
      fi
    done
  }
  export -f unpack_debs
  export deps repo work
  run_stage deps 60 bash -c unpack_debs
  debs=("$repo"/.gpu-deps/*.deb)
  row "dependencies (.gpu-deps)" "$(status_of $rc)" "$secs" "${#debs[@]} packages unpacked"
  lib=$deps/usr/lib/x86_64-linux-gnu
  export PATH=$deps/usr/bin:$PATH
  export LD_LIBRARY_PATH=$lib${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
  export PKG_CONFIG_LIBDIR=$lib/pkgconfig:$deps/usr/share/pkgconfig:$deps/usr/lib/pkgconfig
  export PKG_CONFIG_SYSROOT_DIR=$deps  # the .pc files say prefix=/usr
  cmake_args+=(-DCMAKE_PREFIX_PATH="$deps/usr" -DCMAKE_LIBRARY_PATH="$lib" -DCMAKE_INCLUDE_PATH="$deps/usr/include"
               -DPKG_CONFIG_EXECUTABLE="$deps/usr/bin/pkgconf")
else
  note "no .gpu-deps/*.deb: tt's libraries must be installed on this host (scripts/gpu-deps.sh makes them)"
fi

# ---- build ----------------------------------------------------------------------------------------
# first_error LOG: the first line that says what went wrong, for the table.
first_error() { grep -m1 -E 'Error|error|Could not|No such' "$1" | cut -c1-120; }

run_stage configure 90 cmake -S "$repo" -B "$build" "${cmake_args[@]}"
if ((rc == 0)); then
  result="nvcc $(nvcc --version 2>/dev/null | sed -n 's/.*release \([0-9.]*\).*/\1/p'), g++ $(g++ -dumpfullversion 2>/dev/null)"
else
  result=$(first_error "$logdir/configure.log")
fi
row "configure (CUDA on, sm_${CUDA_ARCH:-90})" "$(status_of $rc)" "$secs" "$result"
if ((rc == 0)); then
  run_stage build "$build_limit" cmake --build "$build" -j "$jobs" --target tt_test_cuda tt_test_conformance \
    tt-train tt-translate tt-convert tt-bleu bench_step_profile
  if ((rc == 0)); then built=1 result=built; else result=$(first_error "$logdir/build.log"); fi
  row "build (-j$jobs: CUDA and conformance tests, tools)" "$(status_of $rc)" "$secs" "$result"
else
  row "build" "skipped: configure failed" 0 ""
fi
fi  # not a bundle

# ---- CUDA tests -----------------------------------------------------------------------------------
if ((built)); then
  # The CUDA tests and the conformance suite, whose cases run on every backend the host has, CUDA too.
  run_stage ctest 180 ctest --test-dir "$build" -R '^(cuda|conformance): ?' --output-on-failure --timeout 120 -j 4
  total=$(sed -n 's/.*tests \(failed\|passed\) out of \([0-9]*\).*/\2/p' "$logdir/ctest.log" | tail -1)
  failed=$(sed -n 's/.* \([0-9]*\) tests failed out of.*/\1/p' "$logdir/ctest.log" | tail -1)
  grep -q '100% tests passed' "$logdir/ctest.log" && failed=0
  skipped=$(grep -c '(Skipped)' "$logdir/ctest.log")
  result="${total:-?} tests: $((${total:-0} - ${failed:-0} - skipped)) passed, ${failed:-?} failed, $skipped skipped"
  if ((rc == 0 && skipped > 0)); then
    row "ctest: cuda and conformance" "FAILED (skipped: no GPU?)" "$secs" "$result"
  else
    row "ctest: cuda and conformance" "$(status_of $rc)" "$secs" "$result"
  fi
  grep -E '\*\*\*Failed|\*\*\*Timeout|\*\*\*Exception' "$logdir/ctest.log" | head -5 | sed 's/^/    /' >&2
else
  row "ctest: cuda and conformance" "skipped: no build" 0 ""
fi

# ---- every decoding option and model file on the GPU beside the CPU ---------------------------------
if ((built)) && [[ -n $demo ]]; then
  run_stage features 180 "$repo/scripts/gpu-features.sh" --bin "$bin" --demo "$demo" --out "$logdir/features" \
    --lines "$( ((quick)) && echo 100 || echo "$feature_lines")"
  table=$logdir/features.log
  ran=$(grep -c ' exit 0 *exit 0 ' "$table") refused=$(grep -c 'refused on cuda' "$table")
  bad=$(grep -c -E 'FAILED|LINES|PARTIAL' "$table")
  row "features: decoding options, model files (CPU vs GPU)" "$(status_of $rc)" "$secs" \
      "$ran ran on both, $refused refused on cuda, $bad failed (table in features.log)"
elif ((built)); then
  row "features: decoding options, model files (CPU vs GPU)" "skipped: no --demo" 0 ""
fi

# ---- training speed -------------------------------------------------------------------------------
# field NAME FILE: a number from tt-train's one-line JSON.
field() { grep -o "\"$1\":[-0-9.e+]*" "$2" | head -1 | cut -d: -f2; }

# Model FLOPs of one step from the preset's resolved config (see the header comment).
step_flops() {
  local cfg=$work/$1.json
  "$bin/tt-train" --preset "$1" --vocab-size "$vocab" --dry-run >"$cfg" 2>/dev/null || return 1
  awk -v D="$(field d_model "$cfg")" -v F="$(field d_ff "$cfg")" -v Le="$(field n_layers_enc "$cfg")" \
      -v Ld="$(field n_layers_dec "$cfg")" -v V="$(field vocab_size_tgt "$cfg")" -v S="$src_len" -v T="$tgt_len" \
      -v B="$batch" 'BEGIN {
    enc = 6 * (4 * D * D + 2 * D * F) * S + 12 * S * S * D
    dec = 6 * ((6 * D * D + 2 * D * F) * T + 2 * D * D * S) + 12 * T * T * D + 12 * T * S * D
    out = 6 * V * D * T
    printf "%.6e\n", B * (Le * enc + Ld * dec + out) }'
}

for spec in base:bf16 base:fp32 small:bf16 small:fp32 big:bf16 big:fp32; do
  preset=${spec%:*} precision=${spec#*:}
  name="train $preset $precision"
  if ((!built)); then row "$name" "skipped: no build" 0 ""; continue; fi
  run_stage "train-$preset-$precision" 90 "$bin/tt-train" --preset "$preset" --vocab-size "$vocab" --device cuda \
    --precision "$precision" --synthetic-steps "$steps" --batch-size "$batch" --src-len "$src_len" \
    --tgt-len "$tgt_len"
  out=$logdir/train-$preset-$precision.log
  if ((rc == 0)) && tok_s=$(field tgt_tok_s "$out") && [[ -n $tok_s ]]; then
    step_s=$(field median_step_s "$out")
    flops=$(step_flops "$preset") || flops=0
    result=$(awk -v t="$tok_s" -v s="$step_s" -v f="$flops" -v p="$peak_tflops" -v B="$batch" -v T="$tgt_len" 'BEGIN {
      printf "%.0f tgt tok/s, %.1f ms/step (%d tgt tokens)", t, 1000 * s, B * T
      if (f > 0) printf ", %.0f TFLOP/s, MFU %.1f%%", f / s / 1e12, 100 * f / s / 1e12 / p }')
    row "$name" ok "$secs" "$result"
  else
    row "$name" "$(status_of $((rc == 0 ? 1 : rc)))" "$secs" "$(first_error "$out")"
  fi
done

# ---- where a step's time goes ------------------------------------------------------------------------
# bench_step_profile brackets every backend call by a synchronisation: per kernel, device time plus one
# launch; the row gives the products' share. The whole table is in profile-base-bf16.log.
if ((built)); then
  run_stage profile-base-bf16 90 env TT_PROFILE_DEVICE=cuda TT_PROFILE_PRECISION=bf16 \
    TT_PROFILE_BATCH="${batch}x${src_len}x${tgt_len}" TT_PROFILE_VOCAB="$vocab" "$bin/bench_step_profile" base 1 5
  out=$logdir/profile-base-bf16.log
  if ((rc == 0)); then
    row "profile train base bf16 (bench_step_profile)" ok "$secs" \
        "$(sed -n 's/^GEMMs \([0-9.]*\) ms.step.*other kernels \([0-9.]*\) ms, outside kernels \([-0-9.]*\) ms/products \1 ms, other kernels \2 ms, outside \3 ms/p' "$out")"
  else
    row "profile train base bf16 (bench_step_profile)" "$(status_of $rc)" "$secs" "$(first_error "$out")"
  fi
fi

# ---- translation speed ----------------------------------------------------------------------------
# A base model with (almost) its random initialisation, random source ids, every output forced to
# exactly out_len tokens (as bench/translate_speed.sh does): decoding speed without the luck of lengths.
# Decoding time = wall time on the input minus wall time on an empty input (start-up and model load).
if ((built)); then
  model=$work/base-model
  run_stage translate-model 90 "$bin/tt-train" --preset base --vocab-size "$vocab" --synthetic-steps 1 \
    --batch-size 1 --src-len 2 --tgt-len 2 --device cpu --threads "$jobs" --quiet -o "$model"
  if ((rc == 0)); then
    awk -v n="$lines" -v len="$out_len" -v V="$vocab" 'BEGIN { srand(1); for (i = 0; i < n; ++i) {
      line = ""; for (j = 0; j < len - 1; ++j) line = line (j ? " " : "") int(4 + rand() * (V - 4)); print line } }' \
      >"$work/src.ids"
    translate=("$bin/tt-translate" -m "$model" --input-format ids --output-format ids --device cuda --beam 4
               --batch-size 64 --length-penalty none --min-len $((out_len - 1)) --max-len-a 0
               --max-len-b $((out_len - 1)))
    : >"$work/empty.ids"
    # One row per compute type; a type the CUDA backend lacks must be refused with a message (exit 1).
    for ct in float32 bf16 int8; do
      run_stage "translate-load-$ct" 60 "${translate[@]}" --compute-type "$ct" -i "$work/empty.ids"
      load_s=$secs load_rc=$rc
      # shellcheck disable=SC2016  # $0 and $@ belong to the inner shell
      run_stage "translate-$ct" 120 bash -c '"$@" >"$0"' "$work/hyp-$ct.ids" "${translate[@]}" --compute-type "$ct" \
        -i "$work/src.ids"
      full_rc=$rc full_s=$secs
      # Tokens: every output id plus its </s>; all lines should have out_len.
      tokens=$(awk '{ n += NF + 1 } END { print n + 0 }' "$work/hyp-$ct.ids" 2>/dev/null)
      if ((load_rc == 0 && full_rc == 0)); then
        result=$(awk -v n="$lines" -v t="$tokens" -v len="$out_len" -v a="$load_s" -v b="$full_s" 'BEGIN {
          printf "%.0f tgt tok/s (%d lines, %d tokens (%d expected) in %.1f s after %.1f s load)", t / (b - a), n, t,
                 n * len, b - a, a }')
        row "translate base beam 4 batch 64, $ct" ok "$full_s" "$result"
      elif ((load_rc == 1 && full_rc == 1)) && [[ ! -s $work/hyp-$ct.ids ]]; then
        row "translate base beam 4 batch 64, $ct" "skipped: refused" "$full_s" \
            "$(grep -m1 'error' "$logdir/translate-$ct.log" | cut -c1-120)"
      else
        row "translate base beam 4 batch 64, $ct" "$(status_of $((full_rc ? full_rc : load_rc)))" "$full_s" \
            "$(first_error "$logdir/translate-$( ((load_rc)) && echo load-)$ct.log")"
      fi
    done
    # --device auto: the default picks the GPU and the header says so; an index past the last GPU is refused.
    # shellcheck disable=SC2016
    run_stage device-auto 60 bash -c 'echo "5 6 7" | "$@" --max-len-b 3' _ "$bin/tt-translate" -m "$model" \
      --input-format ids --output-format ids
    header=$(grep -m1 '^tt-translate: ' "$logdir/device-auto.log")
    if ((rc == 0)) && [[ $header == "tt-translate: cuda:"* ]]; then
      row "--device auto (tt-translate header)" ok "$secs" "${header#tt-translate: }"
    else
      row "--device auto (tt-translate header)" "$(status_of $((rc ? rc : 1)))" "$secs" "${header:-no header}"
    fi
  else
    row "translate base beam 4 batch 64" "$(status_of $rc) (model)" "$secs" \
        "$(first_error "$logdir/translate-model.log" || head -1 "$logdir/translate-model.log")"
  fi
else
  row "translate base beam 4 batch 64" "skipped: no build" 0 ""
fi
if python3 -c 'import ctranslate2' 2>/dev/null; then
  row "CTranslate2 beside tt" "skipped: not scripted" 0 "ctranslate2 is importable here: run bench/translate_speed.sh"
else
  row "CTranslate2 beside tt" "skipped: not installed" 0 "no ctranslate2 on this host (no network): no comparison"
fi

# ---- the table ------------------------------------------------------------------------------------
{
  echo
  echo "gpu-check: $gpu, $(elapsed "$start") s of a ${budget} s budget; logs in $logdir"
  printf '%-52s %-26s %7s  %s\n' stage status seconds result
  for r in "${rows[@]}"; do
    IFS='|' read -r name status seconds result <<<"$r"
    printf '%-52s %-26s %7s  %s\n' "$name" "$status" "$seconds" "$result"
  done
} | tee "$logdir/table.txt" | tee -a "$log"
((failures == 0))
