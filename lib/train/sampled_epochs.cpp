#include "train/sampled_epochs.h"

#include "util/error.h"

namespace tt::train {

SampledEpochs::SampledEpochs(std::vector<SampledCorpus> corpora, const data::SpmTokenizer& src_spm,
                             const data::SpmTokenizer& tgt_spm, const data::CorpusFilter& filter,
                             const data::SubwordSampling& sampling, int threads)
    : corpora_(std::move(corpora)),
      src_spm_(src_spm),
      tgt_spm_(tgt_spm),
      filter_(filter),
      sampling_(sampling),
      threads_(threads) {
  if (!sampling_.on()) throw InternalError("SampledEpochs without sampling");
}

SampledEpochs::~SampledEpochs() { stop_ahead(); }

void SampledEpochs::stop_ahead() {
  if (!ahead_.valid()) return;
  cancel_ = true;
  try {
    ahead_.get();
  } catch (...) {  // an epoch nobody will train on: its failure does not matter
  }
  cancel_ = false;
}

data::ParallelCorpus SampledEpochs::segment(int64_t epoch, int threads, const std::atomic<bool>* cancel) const {
  data::ParallelCorpus corpus;
  for (size_t k = 0; k < corpora_.size(); ++k) {
    data::SubwordSampling sampling = sampling_;
    sampling.epoch = static_cast<uint64_t>(epoch);
    sampling.corpus = static_cast<uint32_t>(k);
    const SampledCorpus& c = corpora_[k];
    sampling.fates = &c.fates;
    const data::ParallelCorpus part =
        data::ParallelCorpus::load(c.src, c.tgt, src_spm_, tgt_spm_, filter_, threads, sampling, cancel);
    if (cancel && cancel->load()) return corpus;
    corpus.append(part);
  }
  return corpus;
}

const data::ParallelCorpus& SampledEpochs::at(int64_t epoch) {
  if (epoch == current_epoch_) return current_;
  if (ahead_.valid() && epoch == current_epoch_ + 1) {
    current_ = ahead_.get();
  } else {
    stop_ahead();
    current_ = segment(epoch, threads_, nullptr);
  }
  current_epoch_ = epoch;
  // One thread: the training's threads keep the cores; an epoch's segmentation takes a small part of an
  // epoch's training (Multi30k: about 2 s of one core against a minute).
  ahead_ = std::async(std::launch::async, [this, next = epoch + 1] { return segment(next, 1, &cancel_); });
  return current_;
}

}  // namespace tt::train
