#include "data/sentence_sampler.h"

#include "util/error.h"
#include "util/rng.h"
#include "util/text_io.h"

namespace tt::data {

namespace {

// SentencePiece reserves U+2047 (the surface of <unk>) and its trainer drops lines that contain it.
constexpr std::string_view reserved_unk = "\xe2\x81\x87";
// A fixed site id for the sampler's stream, so other users of RngPurpose::shuffle never collide with it.
constexpr uint32_t sampler_site = 0x5A3D;

// Uniform integer in [0, n) for the i-th draw: 64 random bits per draw keep the modulo bias below 2^-24
// for any corpus that fits on a disk.
uint64_t draw_below(uint64_t seed, uint64_t i, uint64_t n) {
  uint64_t stream = util::rng_stream(util::RngPurpose::shuffle, 0, sampler_site);
  util::Philox4 r = util::philox4x32(static_cast<uint32_t>(i), static_cast<uint32_t>(i >> 32),
                                     static_cast<uint32_t>(stream), static_cast<uint32_t>(stream >> 32),
                                     static_cast<uint32_t>(seed), static_cast<uint32_t>(seed >> 32));
  uint64_t bits = (static_cast<uint64_t>(r.v[0]) << 32) | r.v[1];
  return bits % n;
}

}  // namespace

SampledSentences sample_sentences(const std::vector<std::string>& paths, const SamplerOptions& options) {
  SampledSentences result;
  const size_t k = options.max_sentences;
  std::string line;
  for (const auto& path : paths) {
    util::LineReader reader(path);
    while (reader.next(line)) {
      size_t bad = 0;
      if (!util::is_valid_utf8(line, &bad)) {
        throw FormatError(reader.name() + ":" + std::to_string(reader.line_number()) +
                              ": invalid UTF-8 at byte " + std::to_string(bad + 1),
                          "SentencePiece trains on UTF-8 text; convert the file (e.g. iconv -t UTF-8)");
      }
      if (line.empty() || line.find(reserved_unk) != std::string::npos) {
        ++result.skipped_other;
        continue;
      }
      if (line.size() > options.max_sentence_bytes) {
        ++result.too_long;
        continue;
      }
      const uint64_t i = result.eligible++;
      if (k == 0 || i < k) {
        result.sentences.push_back(line);
      } else {
        // Algorithm R: the i-th sentence replaces a random slot with probability k / (i + 1).
        uint64_t j = draw_below(options.seed, i, i + 1);
        if (j < k) result.sentences[j] = line;
      }
    }
  }
  return result;
}

}  // namespace tt::data
