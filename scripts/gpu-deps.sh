#!/usr/bin/env bash
# Saves the Debian 12 packages tt builds against (oneDNN, SentencePiece, utf8proc, CLI11, nlohmann-json,
# Catch2, pkgconf) as .deb files in .gpu-deps/ (git-ignored), for scripts/gpu-check.sh on a GPU host that
# has the CUDA toolkit, CMake and a compiler but neither these libraries nor a network. gpu-check.sh
# unpacks them into a private folder there (never into /). Run it here, on a Debian 12 machine with apt.
#
# usage: scripts/gpu-deps.sh [DIR]   (default: .gpu-deps in the repository root; about 9 MB)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
dir=${1:-$repo/.gpu-deps}
if [[ ${1:-} == -h || ${1:-} == --help ]]; then
  sed -n '2,7p' "$0" | sed 's/^# \{0,1\}//'
  exit 0
fi
command -v apt-get >/dev/null || { echo "gpu-deps: apt-get not found: run this on a Debian 12 machine" >&2; exit 1; }
# Runtime libraries and their -dev halves; libdnnl2 needs an OpenCL loader (its GPU runtime, unused by tt).
packages=(libdnnl2 libdnnl-dev ocl-icd-libopencl1 libsentencepiece0 libsentencepiece-dev libutf8proc2
          libutf8proc-dev libcli11-dev nlohmann-json3-dev catch2 pkgconf pkgconf-bin libpkgconf3)
mkdir -p "$dir"
cd "$dir"
rm -f ./*.deb
apt-get download "${packages[@]}" 2>&1 | grep -v '^W: Download is performed unsandboxed' >&2 || true
missing=()
for p in "${packages[@]}"; do compgen -G "${p}_*.deb" >/dev/null || missing+=("$p"); done
if ((${#missing[@]})); then
  echo "gpu-deps: could not download: ${missing[*]} (apt-get update, then run again)" >&2
  exit 1
fi
echo "gpu-deps: ${#packages[@]} packages, $(du -sh . | cut -f1) in $dir" >&2
