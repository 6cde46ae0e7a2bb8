// Subword sampling for a training run (tt-train --spm-alpha, Kudo 2018): every epoch's corpus is the
// run's training files segmented anew (data::SubwordSampling: the same pairs, each line's sample keyed on
// (seed, epoch, corpus, line)), so the epochs of a resumed run are those of one run straight through.
// The next epoch is segmented on a background thread while this one trains; the text is read from the
// files again each epoch rather than held in memory.
#pragma once

#include <atomic>
#include <cstdint>
#include <future>
#include <string>
#include <vector>

#include "data/parallel_corpus.h"
#include "data/spm_tokenizer.h"
#include "train/batcher.h"

namespace tt::train {

struct SampledCorpus {
  std::string src, tgt;
  std::vector<data::LineFate> fates;  // its load's line_fates(): which lines every epoch keeps
};

class SampledEpochs : public EpochCorpora {
 public:
  // `sampling`: alpha, nbest and seed (epoch, corpus and fates are set per load). Keeps references to the
  // tokenizers. `threads`: for an epoch that was not prepared ahead (the first, a resumed one).
  SampledEpochs(std::vector<SampledCorpus> corpora, const data::SpmTokenizer& src_spm,
                const data::SpmTokenizer& tgt_spm, const data::CorpusFilter& filter,
                const data::SubwordSampling& sampling, int threads);
  ~SampledEpochs() override;  // stops the background segmentation and waits for it
  SampledEpochs(const SampledEpochs&) = delete;
  SampledEpochs& operator=(const SampledEpochs&) = delete;

  // Epoch `epoch`'s corpus (the corpora one after the other), then starts preparing the next epoch.
  // A file that changed since the run started (its line count, a kept line) is a tt::FormatError naming it.
  const data::ParallelCorpus& at(int64_t epoch) override;

 private:
  data::ParallelCorpus segment(int64_t epoch, int threads, const std::atomic<bool>* cancel) const;
  void stop_ahead();

  std::vector<SampledCorpus> corpora_;
  const data::SpmTokenizer& src_spm_;
  const data::SpmTokenizer& tgt_spm_;
  data::CorpusFilter filter_;
  data::SubwordSampling sampling_;
  int threads_;
  data::ParallelCorpus current_;
  int64_t current_epoch_ = -1;
  std::future<data::ParallelCorpus> ahead_;  // epoch current_epoch_ + 1, being segmented
  std::atomic<bool> cancel_{false};
};

}  // namespace tt::train
