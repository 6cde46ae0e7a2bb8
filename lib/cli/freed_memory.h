// What a long-running decoding process does with the large blocks it frees (tt-translate).
//
// glibc's malloc serves a block of 128 KiB or more from a mapping of its own and returns it to the system
// when freed, but each such free raises that limit to the block's size (up to 32 MiB): after the model file
// (read whole, then freed) every later block below its size came from the heap, and the caches and packing
// buffers freed after loading stayed in the process's resident memory. Measured on 2 Zen 4 cores,
// tt-translate --workers 2: the demo model 116 -> 101 MB peak, base int8 696 -> 651 MB, same speed.
#pragma once

namespace tt::cli {

// Pins the mapping limit at glibc's initial 128 KiB (no effect on other C libraries).
void return_large_frees_to_system();

}  // namespace tt::cli
