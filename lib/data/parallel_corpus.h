// A tokenised parallel corpus held in memory, compactly: every id of every pair in ONE int32 buffer plus
// one offset table (a 4.5M-pair WMT14 corpus is ~1 GB of ids and ~70 MB of offsets; no per-pair vectors),
// and one byte per line read saying whether it was kept (line_fates()).
//
// Storage convention (shared with the batcher and tt-translate):
//   source = SentencePiece pieces + eos      target = pieces only (the batcher adds bos / eos)
#pragma once

#include <atomic>
#include <cstdint>
#include <span>
#include <string>
#include <vector>

#include "data/spm_tokenizer.h"

namespace tt::data {

// Which pairs load() keeps. Lengths are SentencePiece pieces, without eos.
struct CorpusFilter {
  int max_len = 256;          // a side with more pieces than this drops the pair
  double max_len_ratio = 0;   // max(ls, lt) / min(ls, lt) above this drops the pair; 0 = off
};

// What load() did with one line: kept, or dropped as empty, too long or of too extreme a length ratio.
enum class LineFate : uint8_t { kept, empty, too_long, ratio };

// Subword sampling (Kudo 2018) for one epoch of training. Which pairs load() keeps was decided on the best
// segmentation by a load without sampling (its line_fates()), so every epoch holds the same pairs; each
// kept side is segmented anew by SpmTokenizer::sample_encode_ids, keyed on (seed, epoch, corpus, line
// number, side) through Philox, so an epoch's segmentation is the same on any thread count and after a
// resume. A sample longer than max_len pieces falls back to the best segmentation, which is computed only
// then.
struct SubwordSampling {
  float alpha = 0;  // 0: off
  int nbest = -1;   // sample from the n best (-1: from all), as SentencePiece's nbest_size
  uint64_t seed = 0, epoch = 0;
  uint32_t corpus = 0;  // which of a run's corpora (0, 1, ...): each draws its own samples
  // Required with sampling on: the same files' line_fates() from a load without sampling. Files whose line
  // count differs, or a kept line that no longer fits, are a tt::FormatError.
  const std::vector<LineFate>* fates = nullptr;
  bool on() const { return alpha > 0; }
};

// What load() read and kept; every dropped pair is counted in exactly one dropped_* field.
struct CorpusStats {
  int64_t lines = 0, kept = 0, dropped_empty = 0, dropped_long = 0, dropped_ratio = 0;
  int64_t src_tokens = 0, tgt_tokens = 0;  // tokens of kept pairs, as stored (source includes eos)
};

class ParallelCorpus {
 public:
  // Reads both files (line N of one is the translation of line N of the other). Different line counts ->
  // one tt::FormatError naming both files and both counts (checked before any tokenising); invalid UTF-8 ->
  // FormatError "file:line: ..."; unreadable -> IoError naming the file. Tokenises with SentencePiece on
  // `threads` threads (the result does not depend on the thread count), then filters: a side with no
  // pieces -> dropped_empty, more than max_len pieces on a side -> dropped_long, length ratio above
  // max_len_ratio (when > 0) -> dropped_ratio. Reads in chunks, so raw text is never all in memory.
  // With `sampling` on, the stored segmentation is its sample (the statistics count it) and the filters are
  // the fates it carries, not decided again. `cancel`, when
  // set, stops the loading after the chunk in hand (the result is then incomplete; the caller drops it).
  static ParallelCorpus load(const std::string& src_path, const std::string& tgt_path, const SpmTokenizer& src_spm,
                             const SpmTokenizer& tgt_spm, const CorpusFilter& filter, int threads,
                             const SubwordSampling& sampling = {}, const std::atomic<bool>* cancel = nullptr);
  // A corpus from ids already in the stored form (tests, synthetic data). Throws tt::Error if the two sides
  // have different sizes.
  static ParallelCorpus from_ids(const std::vector<std::vector<int32_t>>& src,
                                 const std::vector<std::vector<int32_t>>& tgt);

  // Appends `other`'s pairs after these (its pair i becomes pair size() + i); the statistics add up.
  void append(const ParallelCorpus& other);

  size_t size() const { return (offsets_.size() - 1) / 2; }
  std::span<const int32_t> source(size_t i) const { return span(2 * i); }
  std::span<const int32_t> target(size_t i) const { return span(2 * i + 1); }
  int32_t source_length(size_t i) const { return static_cast<int32_t>(offsets_[2 * i + 1] - offsets_[2 * i]); }
  int32_t target_length(size_t i) const { return static_cast<int32_t>(offsets_[2 * i + 2] - offsets_[2 * i + 1]); }
  const CorpusStats& stats() const { return stats_; }
  // Per line read (one byte each), what load() did with it; from_ids: all kept.
  const std::vector<LineFate>& line_fates() const { return line_fates_; }
  // Bytes held by the ids, offsets and line fates (what "compact" means, measurable).
  size_t memory_bytes() const {
    return ids_.capacity() * sizeof(int32_t) + offsets_.capacity() * sizeof(int64_t) + line_fates_.capacity();
  }

 private:
  void append(const std::vector<int32_t>& ids, const std::vector<int32_t>& lengths, const CorpusStats& stats);
  std::span<const int32_t> span(size_t k) const {
    return {ids_.data() + offsets_[k], static_cast<size_t>(offsets_[k + 1] - offsets_[k])};
  }

  std::vector<int32_t> ids_;
  // Side k (source of pair i: k = 2i, target: k = 2i + 1) is ids_[offsets_[k], offsets_[k + 1]).
  std::vector<int64_t> offsets_{0};
  std::vector<LineFate> line_fates_;
  CorpusStats stats_;
};

// Throws tt::ConfigError naming the model file when `spm` lacks tt's special ids (pad 0, unk 1, bos 2,
// eos 3), with a hint saying how to make one.
void require_tt_special_ids(const SpmTokenizer& spm);

}  // namespace tt::data
