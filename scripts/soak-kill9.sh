#!/usr/bin/env bash
# kill -9 soak for tt-train's run directory: trains a small model on the first lines of the bundled
# Multi30k, kills the run with SIGKILL at random instants (during saves too: it saves every step),
# continues it with --resume each time, and checks that the end is byte-for-byte the end of the same run
# trained without interruption: the last checkpoint's model.safetensors and optimizer.safetensors. It also
# checks what the kills must never leave: a temporary in the run directory, a log line that is not JSON.
# Not timed, not part of the test suite; a few minutes on 2 cores.
#
# usage: scripts/soak-kill9.sh [--build DIR] [--kills N] [--steps N] [--out DIR] [--seed N] [--max-wait S]
#   --build DIR     where tt-train and tt-tokenize were built (default: build)
#   --kills N       SIGKILLs to land before the run may finish (default 20)
#   --steps N       optimizer steps of the whole run (default 1000)
#   --out DIR       work directory (default: a new temporary one, removed when the soak passes)
#   --seed N        seed of the run and of the kill instants (default 1)
#   --max-wait S    a kill comes 0.05 to S seconds after the (re)start (default 2)
# Exit status: 0 the bytes match, 1 they differ or something broke (the work directory is kept), 2 usage.
set -euo pipefail
cd "$(dirname "$0")/.."
build=build kills=20 steps=1000 out="" seed=1 max_wait=2.0
while (($#)); do
  case $1 in
    --build) build=${2:?--build needs a directory}; shift 2 ;;
    --kills) kills=${2:?--kills needs a number}; shift 2 ;;
    --steps) steps=${2:?--steps needs a number}; shift 2 ;;
    --out) out=${2:?--out needs a directory}; shift 2 ;;
    --seed) seed=${2:?--seed needs a number}; shift 2 ;;
    --max-wait) max_wait=${2:?--max-wait needs seconds}; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "soak-kill9.sh: unknown option '$1' (see --help)" >&2; exit 2 ;;
  esac
done
bin=$(cd "$build/bin" && pwd)
for t in tt-train tt-tokenize; do
  [[ -x $bin/$t ]] || { echo "soak-kill9.sh: $bin/$t is missing; build it first" >&2; exit 2; }
done
own_out=0
if [[ -z $out ]]; then out=$(mktemp -d "${TMPDIR:-/tmp}/tt-soak-XXXXXX"); own_out=1; fi
mkdir -p "$out"
out=$(cd "$out" && pwd)
RANDOM=$seed
fail() { echo "soak-kill9.sh: FAIL: $*" >&2; echo "soak-kill9.sh: the work directory is kept: $out" >&2; exit 1; }

# Data: 2,000 training pairs, 100 validation pairs, a joint 500-piece model.
d=$out/data
mkdir -p "$d"
for l in en de; do
  head -n 2000 <(gzip -dc "data/multi30k/train.$l.gz") >"$d/train.$l"  # not a pipe: gzip's SIGPIPE would fail it
  head -n 100 <(gzip -dc "data/multi30k/val.$l.gz") >"$d/val.$l"
done
"$bin/tt-tokenize" train -i "$d/train.en" "$d/train.de" -o "$d/spm" --vocab-size 500 --threads 1 --quiet

# Small enough to take a few tens of ms a step on one thread; a save every step and a validation every
# 25 (run/best moves) keep the disk busy, so that many kills land in a save. One thread: a resumed run
# is bit-identical on the CPU for the same thread count (man tt-train).
train_args=(--preset tiny --d-model 64 --d-ff 128 --heads 2 --layers 2 --spm "$d/spm.model"
  --train "$d/train.en" "$d/train.de" --valid "$d/val.en" "$d/val.de" --valid-metric loss
  --batch-tokens 600 --accum 2 --lr 1e-3 --warmup-steps 50 --seed "$seed" --threads 1 --device cpu)
run_args=(--max-steps "$steps" --save-every 1 --valid-every 25 --keep-last 3 --report-every 5 -q)

echo "soak-kill9.sh: reference: $steps steps without interruption" >&2
"$bin/tt-train" "${train_args[@]}" "${run_args[@]}" -o "$out/reference" >/dev/null 2>"$out/reference.err" ||
  fail "the reference run failed: $(cat "$out/reference.err")"

run=$out/run
landed=0 in_save=0 starting=0 before_first=0 before_own=0 starts=0 finished=0
starts_logged() { grep -c '"type":"start"' "$run/log.jsonl" 2>/dev/null || true; }
while ((landed < kills)); do
  if [[ -L $run/last ]]; then
    cmd=("$bin/tt-train" --resume "$run" "${run_args[@]}")
  else  # killed before its first checkpoint: nothing to resume, start again
    cmd=("$bin/tt-train" "${train_args[@]}" "${run_args[@]}" -o "$run")
  fi
  ((++starts))
  logged=$(starts_logged) last_before=$(readlink "$run/last" 2>/dev/null || true)
  "${cmd[@]}" >/dev/null 2>>"$out/run.err" &
  pid=$!
  wait_s=$(awk -v r="$RANDOM" -v m="$max_wait" 'BEGIN { printf "%.3f", 0.05 + (m - 0.05) * r / 32767 }')
  sleep "$wait_s"
  kill -KILL "$pid" 2>/dev/null || true
  status=0
  wait "$pid" 2>/dev/null || status=$?
  if ((status != 128 + 9)); then  # it ended by itself first
    ((status == 0)) || fail "start $starts exited with $status: $(tail -n 3 "$out/run.err")"
    finished=1
    break
  fi
  ((++landed))
  # In a save: the killed process's temporary checkpoint or link is still there.
  if compgen -G "$run/checkpoints/*.tmp.$pid.*" >/dev/null || compgen -G "$run/last.tmp.$pid.*" >/dev/null ||
    compgen -G "$run/best.tmp.$pid.*" >/dev/null; then
    ((++in_save))
    where="in a save"
  elif [[ $(starts_logged) == "$logged" ]]; then  # still reading the corpus or the checkpoint
    ((++starting))
    where="while starting"
  elif [[ ! -L $run/last ]]; then
    ((++before_first))
    where="before the first checkpoint"
  elif [[ $(readlink "$run/last") == "$last_before" ]]; then
    ((++before_own))
    where="before its first save"
  else
    where="between saves"
  fi
  step=$(readlink "$run/last" 2>/dev/null | sed 's/.*step-0*//' || true)
  echo "soak-kill9.sh: kill $landed after ${wait_s}s, $where (last checkpoint: step ${step:-none})" >&2
done

if ((!finished)); then
  echo "soak-kill9.sh: $landed kills landed; resuming to the end" >&2
  ((++starts))
  "$bin/tt-train" --resume "$run" "${run_args[@]}" >/dev/null 2>>"$out/run.err" ||
    fail "the final resume failed: $(tail -n 3 "$out/run.err")"
fi

# What the kills must not leave behind: temporaries (the last start removed the dead ones), a log line
# that is not JSON, a run that ended anywhere but the last step.
leftovers=$(find "$run" -name '*.tmp.*' | head -n 5)
[[ -z $leftovers ]] || fail "temporaries left in the run directory: $leftovers"
if command -v python3 >/dev/null; then
  python3 -c 'import json, sys
for n, line in enumerate(open(sys.argv[1]), 1):
    try: json.loads(line)
    except ValueError: sys.exit(f"{sys.argv[1]}:{n}: not JSON: {line[:80]!r}")' "$run/log.jsonl" || fail "the log is not JSON lines"
fi
expected="checkpoints/step-$(printf '%06d' "$steps")"
[[ $(readlink "$run/last") == "$expected" ]] || fail "run/last is $(readlink "$run/last"), not $expected"

notes=$(grep -c 'tt-train: note:' "$out/run.err" || true)
echo "soak-kill9.sh: $starts starts, $landed kills: $in_save in a save (a temporary left), $starting while starting," \
  "$before_first before the run's first checkpoint, $before_own before the start's first save," \
  "$((landed - in_save - starting - before_first - before_own)) between saves; $notes notes of repairs" >&2
for f in model.safetensors optimizer.safetensors; do
  cmp "$out/reference/last/$f" "$run/last/$f" || fail "$f differs from the uninterrupted run's"
done
echo "soak-kill9.sh: PASS: after $landed kills the weights and optimizer state match the uninterrupted run byte for byte" >&2
if ((own_out)); then rm -rf "$out"; fi
