#!/bin/sh
# The per-instruction-set kernel objects must define no weak/COMDAT symbols: the linker keeps ONE copy of
# such a symbol for the whole program, and an AVX-512 copy would then run on a CPU without AVX-512.
# Usage: check_isa_symbols.sh OBJECT...
bad=$(nm --defined-only "$@" | awk '$2 ~ /^[WVuiw]$/ {print $3}' | sort -u)
if [ -n "$bad" ]; then
  echo "weak symbols in ISA-specific kernel objects (give them internal linkage):" >&2
  echo "$bad" | c++filt >&2
  exit 1
fi
echo "$# kernel objects, no shared symbols"
