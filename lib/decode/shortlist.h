// A vocabulary shortlist (tt-translate --shortlist): the target pieces a batch may output, so that the
// output layer is computed over those columns only (Marian's lexical shortlist). tt builds it from the
// training corpus itself, without an external aligner: per source piece, the target pieces that co-occur
// with it in sentence pairs most beyond chance (count-weighted PMI, n_st · log(n_st N / (n_s n_t)), over
// the pairs' distinct pieces), plus the corpus's most frequent target pieces, which every batch keeps.
// The pieces a batch leaves out still count in each row's normaliser, estimated from a sample of them
// (ModelScorer adds exp(rest estimate) as one more term): without it every log-probability would rise by
// the missing mass, a different amount per hypothesis, and beam search would rank them differently (on
// the demo model, 3 % of beam-4 lines changed that way, against 0.1 % of greedy ones).
//
// File (text, written by tt-convert shortlist):
//   tt-shortlist 1
//   source_vocab VS target_vocab VT frequent F best K
//   every target id, most frequent in the corpus first (VT ids)
//   VS lines: source id s's best target ids, best first (at most K; may be empty)
#pragma once

#include <cstdint>
#include <string>
#include <unordered_map>
#include <vector>

namespace tt::decode {

class Shortlist {
 public:
  // by_frequency: every target id once, most frequent first; best[s]: source id s's best target ids (ids in
  // range: load() checks a file's, naming its line).
  Shortlist(int frequent, std::vector<int32_t> by_frequency, std::vector<std::vector<int32_t>> best);

  // Throws tt::FormatError naming the file and line, or tt::IoError.
  static Shortlist load(const std::string& path);
  void save(const std::string& path) const;  // atomic

  int source_vocab() const { return static_cast<int>(best_.size()); }
  int target_vocab() const { return static_cast<int>(by_frequency_.size()); }
  int frequent() const { return frequent_; }
  int best_per_source() const;  // the longest list of best pieces
  const std::vector<int32_t>& by_frequency() const { return by_frequency_; }
  const std::vector<int32_t>& best(int32_t source_id) const { return best_.at(static_cast<size_t>(source_id)); }

  // A batch's target columns (ascending): the frequent pieces, `required` (</s>, <unk>, forced prefixes,
  // constraints), and the best pieces of every source id (ids outside the source vocabulary add nothing);
  // more pieces in order of frequency up to a multiple of kRound (or the whole vocabulary), so that the
  // output product sees few distinct widths; and a sample of the pieces left out, kSample of them evenly
  // spaced in order of frequency, that stands for all of them in the softmax's normaliser (below).
  static constexpr int kRound = 64, kSample = 256;
  struct Columns {
    std::vector<int32_t> ids;
    std::vector<int32_t> sample;  // the columns (indices into ids) of the sample of the pieces left out
    float rest_log_weight = 0;    // log(pieces left out, not sampled / sample size)
  };
  Columns columns(const std::vector<std::vector<int32_t>>& sources, const std::vector<int32_t>& required) const;

 private:
  int frequent_;
  std::vector<int32_t> by_frequency_;
  std::vector<std::vector<int32_t>> best_;
};

// The column of target id `token` in a batch's columns (ascending ids; null: all ids, the column is the
// id), or -1 where the shortlist left it out.
int32_t column_of(const std::vector<int32_t>* columns, int32_t token);

// Counts a parallel corpus (ids, without </s>), then keeps per source piece its `best` pieces.
class ShortlistBuilder {
 public:
  // skip: target ids never listed as a source piece's best (pad, bos, eos, unk: the decoder adds those it needs).
  ShortlistBuilder(int source_vocab, int target_vocab, std::vector<int32_t> skip);
  // One sentence pair; ids out of range are a tt::FormatError naming `where`.
  void add(const std::vector<int32_t>& source, const std::vector<int32_t>& target, const std::string& where);
  int64_t pairs() const { return pairs_; }
  Shortlist build(int frequent, int best) const;

 private:
  int source_vocab_, target_vocab_;
  std::vector<char> skip_;
  int64_t pairs_ = 0;
  std::vector<int64_t> target_tokens_;        // occurrences, for the frequency order
  std::vector<int64_t> source_docs_, target_docs_;  // pairs holding the piece
  std::vector<std::unordered_map<int32_t, int32_t>> cooccur_;  // [source id]: target id -> pairs holding both
  std::vector<int32_t> src_seen_, tgt_seen_;  // scratch
};

}  // namespace tt::decode
