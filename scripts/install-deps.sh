#!/usr/bin/env bash
# Installs everything tt needs to build, test and run its demo, from Debian's packages.
# Idempotent: packages already present are left as they are.
#   --test  also the test-only dependencies (headless Chromium for the tt-attnviz page test, zsh and fish)
set -euo pipefail

packages=(
  g++ cmake make pkg-config
  libcli11-dev libsentencepiece-dev sentencepiece libdnnl-dev nlohmann-json3-dev catch2
  libutf8proc-dev
  libopenmpi-dev openmpi-bin  # data-parallel training (mpirun -np N tt-train)
  clang libclang-rt-14-dev   # libFuzzer and the sanitizer runtimes for scripts/fuzz.sh
  groff-base                 # tests/cli renders the man pages to check they never hyphenate a flag
)
if [ "${1:-}" = "--test" ]; then
  packages+=(chromium zsh fish)  # fish and zsh: tests/cli checks the completion files parse
fi

missing=()
for p in "${packages[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

if [ ${#missing[@]} -eq 0 ]; then
  echo "install-deps: all packages present" >&2
  exit 0
fi

sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
echo "install-deps: installing ${missing[*]}" >&2
export DEBIAN_FRONTEND=noninteractive
$sudo apt-get update -qq
$sudo apt-get install -y -qq --no-install-recommends "${missing[@]}"
