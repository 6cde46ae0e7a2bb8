#!/usr/bin/env bash
# The throwaway Python environment scripts/check-marian.sh and bench/marian_speed.sh run Transformers and
# CTranslate2 in: made on first use, then reused. Prints its python's path.
#   scripts/marian-venv.sh WHO    (WHO names the caller in the one line said while installing)
# environment: MARIAN_VENV=${TMPDIR:-/tmp}/tt-marian-venv; TORCH_INDEX_URL=URL installs torch from that
#   index (e.g. one of CPU-only wheels) instead of PyPI's CUDA build of several GB.
set -euo pipefail
venv=${MARIAN_VENV:-${TMPDIR:-/tmp}/tt-marian-venv}
if ! "$venv/bin/python" -c 'import torch, transformers, sentencepiece, sacremoses, ctranslate2' 2>/dev/null; then
  echo "${1:-marian-venv}: making a venv with torch, transformers and ctranslate2 in $venv" >&2
  python3 -m venv "$venv"
  "$venv/bin/pip" install -q ${TORCH_INDEX_URL:+--index-url "$TORCH_INDEX_URL"} torch >&2
  "$venv/bin/pip" install -q transformers sentencepiece sacremoses safetensors numpy ctranslate2 >&2
fi
echo "$venv/bin/python"
