// One self-contained HTML page (inline CSS and JS, no network; works from file://) showing attention views:
// a sentence selector, a kind selector (encoder_self, decoder_self, cross) and, for the chosen sentence,
// a layer x head grid of heat maps with token labels. Hovering a cell or a query token highlights that
// row in every map and shades the key tokens by what the query attends to.
// Streaming: each sentence is written as it comes (one <script type="application/json"> block, weights
// quantised to one byte, base64), and the page is rendered one sentence at a time, so the file stays
// about 1.4 bytes per weight and the page fast for 100 sentences x 6 layers x 8 heads.
#pragma once

#include <memory>
#include <string>

#include "util/atomic_file.h"
#include "viz/attention_json.h"
#include "viz/attention_view.h"

namespace tt::viz {

class HtmlWriter {
 public:
  // Starts writing `path` (atomically: the page appears on finish()). `title` goes into <title>.
  HtmlWriter(const std::string& path, const std::string& title);
  void add(const AttentionView& view, const SentenceInfo& info);
  // Writes the end of the page and renames it into place. Without finish() nothing is left behind.
  void finish();
  size_t sentences() const { return sentences_; }

 private:
  util::AtomicFile file_;
  size_t sentences_ = 0;
};

// Standard base64 (RFC 4648, with padding).
std::string base64(const unsigned char* data, size_t size);

}  // namespace tt::viz
