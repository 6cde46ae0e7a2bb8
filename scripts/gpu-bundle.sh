#!/usr/bin/env bash
# Packs a CUDA build made on this machine (nvcc needs no GPU) into one archive that
# `scripts/gpu-check.sh --bundle FILE` runs on a GPU host which has the CUDA driver and runtime but neither
# tt's libraries nor a network, and saves that host the build. In it:
#   - the tools, the CUDA plugin, the CUDA and conformance test binaries and their CTest files;
#   - the shared libraries they load that a CUDA host may lack (oneDNN, SentencePiece, libstdc++, ...),
#     never glibc's or CUDA's own.
# The test binaries keep the absolute paths they were built with, so the archive records the repository's
# path; gpu-check.sh links that path to the repository on the GPU host when the path is free there.
#
# usage: scripts/gpu-bundle.sh [--build DIR] [-o FILE]
#   --build DIR   a build with CUDA on (default build-gpu); the targets below are built first
#   -o FILE       the archive (default .gpu-carry/bundle.tar.xz in the repository root)
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
build=$repo/build-gpu
archive=$repo/.gpu-carry/bundle.tar.xz
while (($#)); do
  case $1 in
    --build) build=$(realpath -m "$2"); shift 2 ;;
    -o) archive=$(realpath -m "$2"); shift 2 ;;
    -h|--help) sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'; exit 0 ;;
    *) echo "gpu-bundle: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
[[ -f $build/CMakeCache.txt ]] || { echo "gpu-bundle: $build is not a configured build" >&2; exit 1; }
grep -q '^TT_WITH_CUDA:BOOL=ON' "$build/CMakeCache.txt" ||
  { echo "gpu-bundle: $build was configured without CUDA (-DTT_WITH_CUDA=ON)" >&2; exit 1; }
tools=(tt-train tt-translate tt-convert tt-bleu bench_step_profile)
tests=(tt_test_cuda tt_test_conformance)
cmake --build "$build" -j "$(nproc)" --target "${tools[@]}" "${tests[@]}" >/dev/null

stage=$(mktemp -d "${TMPDIR:-/tmp}/tt-gpu-bundle.XXXXXX")
trap 'rm -rf "$stage"' EXIT
name=$(basename "$build")
files=(lib/tt/libtt_cuda.so)
for t in "${tools[@]}"; do files+=("bin/$t"); done
for t in "${tests[@]}"; do files+=("tests/$t"); done
# CTest's files: every folder's CTestTestfile.cmake and the test binaries' discovered lists.
mapfile -t ctest_files < <(cd "$build" && find . -name CTestTestfile.cmake -printf '%P\n' &&
                           find tests -maxdepth 1 -name 'tt_test_*.cmake')
(cd "$build" && tar -cf - "${files[@]}" "${ctest_files[@]}") | (mkdir -p "$stage/$name" && tar -xf - -C "$stage/$name")

# The libraries: what ldd resolves for the binaries, less the C library's and CUDA's (the host's own).
mkdir -p "$stage/$name/bundle-libs"
for f in "${files[@]}"; do ldd "$build/$f"; done | awk '$2 == "=>" && $3 ~ /^\// { print $1, $3 }' | sort -u |
  while read -r soname path; do
    case $soname in
      libc.so*|libm.so*|libdl.so*|libpthread.so*|librt.so*|ld-linux*|libcuda.so*|libcudart*|libcublas*|libnvidia*) ;;
      libtt_*) ;;  # tt's own, in the build's lib/tt
      *) cp -L "$path" "$stage/$name/bundle-libs/$soname" ;;
    esac
  done
echo "$repo" >"$stage/$name/bundle-root.txt"
git -C "$repo" rev-parse --short HEAD >"$stage/$name/bundle-commit.txt" 2>/dev/null || echo unknown >"$stage/$name/bundle-commit.txt"
mkdir -p "$(dirname "$archive")"
tar -C "$stage" -cf - "$name" | xz -T0 -6 >"$archive.tmp" && mv "$archive.tmp" "$archive"
echo "gpu-bundle: $archive ($(du -h "$archive" | cut -f1)): $name with $(find "$stage/$name/bundle-libs" -type f | wc -l) libraries" >&2
