// A streaming, order-preserving, multi-threaded line filter: the engine of `tt-tokenize encode/decode`.
//
// Lines are read in chunks (a few thousand lines, at most ~1 MiB each); chunk k is processed by worker
// k mod N, and the main thread writes finished chunks strictly in input order. At most 2N chunks are in
// flight, so memory stays bounded however long the input is, and one very long line is just a big chunk.
// The fixed chunk-to-worker assignment makes per-thread state (such as SentencePiece's sampling RNG)
// see the same lines on every run. With one thread everything runs inline on the calling thread.
//
// Failures are reported exactly as a sequential filter would report them: every line before the first
// failing line is written, then the error is thrown, prefixed with "<name>:<line>: ".
#pragma once

#include <functional>
#include <string>
#include <string_view>

#include "util/text_io.h"

namespace tt::data {

struct LinePipelineOptions {
  int threads = 1;
  size_t chunk_lines = 4096;
  size_t chunk_bytes = size_t{1} << 20;
};

// Appends the output for one input line (without the trailing '\n') to `out`; throws tt::Error on bad input.
// Called concurrently from several threads: it must not modify shared state.
using LineFunction = std::function<void(const std::string& line, std::string& out)>;
// Receives output text (whole lines, each ending in '\n'), in input order, on the calling thread.
using OutputSink = std::function<void(const std::string& text)>;

// Runs `fn` over every line of `reader`. Returns the number of lines processed.
size_t run_line_pipeline(util::LineReader& reader, const LineFunction& fn, const OutputSink& sink,
                         const LinePipelineOptions& options = {});

}  // namespace tt::data
