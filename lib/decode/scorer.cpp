#include "decode/scorer.h"

#include <algorithm>
#include <string>

#include "ops/elementwise.h"
#include "util/error.h"

namespace tt::decode {

ModelScorer::ModelScorer(nn::Transformer& model, bool logits)
    : model_(model), logits_(logits), encode_arena_(model.backend()), cache_arena_(model.backend()), step_arena_(model.backend()) {}

void ModelScorer::start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps) {
  state_.reset();
  encode_arena_.reset();
  cache_arena_.reset();
  const int B = static_cast<int>(sources.size());
  S_ = 0;
  for (const auto& s : sources) S_ = std::max(S_, static_cast<int>(s.size()));
  std::vector<int32_t> src(static_cast<size_t>(B) * S_, model_.config().pad_id), lengths(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    const auto& s = sources[static_cast<size_t>(b)];
    std::copy(s.begin(), s.end(), src.begin() + static_cast<ptrdiff_t>(b) * S_);
    lengths[static_cast<size_t>(b)] = static_cast<int32_t>(s.size());
  }
  nn::EncoderOutput encoded = model_.encode(src, lengths, B, S_, encode_arena_);
  state_.emplace(model_.start_decoding(encoded, max_rows, max_steps, cache_arena_));
  encode_arena_.reset();  // the cross-attention K/V now live in the cache
}

tensor::Tensor ModelScorer::step(const std::vector<int32_t>& tokens, std::vector<float>* attention) {
  step_arena_.reset();  // the previous step's log-probabilities are no longer needed
  const int rows = state_->rows();
  nn::AttentionCapture capture;
  const int heads = model_.config().heads;
  if (attention) {
    // Only the last decoder layer's cross-attention: [rows, H, 1, S]
    capture.decoder_cross.resize(static_cast<size_t>(model_.config().n_layers_dec));
    capture.decoder_cross.back() = step_arena_.allocate(tensor::Shape{rows, heads, 1, S_});
  }
  tensor::Tensor log_probs = model_.decode_step(*state_, tokens, step_arena_, !logits_, attention ? &capture : nullptr);
  if (attention) {
    const std::vector<float> all = capture.decoder_cross.back().to_host_f32();
    attention->assign(static_cast<size_t>(rows) * S_, 0.0f);
    for (int r = 0; r < rows; ++r)
      for (int h = 0; h < heads; ++h)
        for (int s = 0; s < S_; ++s)
          (*attention)[static_cast<size_t>(r) * S_ + s] +=
              all[(static_cast<size_t>(r) * heads + h) * S_ + s] / static_cast<float>(heads);
  }
  return log_probs;
}

void ModelScorer::reorder(const std::vector<int32_t>& index) { model_.reorder(*state_, index); }

EnsembleScorer::EnsembleScorer(const std::vector<nn::Transformer*>& models) {
  if (models.empty()) throw ConfigError("an ensemble needs at least one model");
  const nn::ModelConfig& first = models.front()->config();
  for (size_t i = 0; i < models.size(); ++i) {
    const nn::ModelConfig& c = models[i]->config();
    if (c.vocab_size_tgt != first.vocab_size_tgt || c.bos_id != first.bos_id || c.eos_id != first.eos_id ||
        c.pad_id != first.pad_id)
      throw ConfigError("ensemble member " + std::to_string(i + 1) + " has a different target vocabulary (" +
                        std::to_string(c.vocab_size_tgt) + " pieces, vs " + std::to_string(first.vocab_size_tgt) +
                        " in member 1); ensembles need models trained with the same target vocabulary");
    members_.push_back(std::make_unique<ModelScorer>(*models[i], models.size() == 1));
  }
}

int EnsembleScorer::max_positions() const {
  int m = members_.front()->max_positions();
  for (const auto& s : members_) m = std::min(m, s->max_positions());
  return m;
}

void EnsembleScorer::start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps) {
  for (auto& m : members_) m->start(sources, max_rows, max_steps);
}

tensor::Tensor EnsembleScorer::step(const std::vector<int32_t>& tokens, std::vector<float>* attention) {
  if (members_.size() == 1) return members_.front()->step(tokens, attention);
  // The mean in member order, each term scaled first: w*a + w*b + ..., the same sums on every device.
  const float w = 1.0f / static_cast<float>(members_.size());
  tensor::Tensor sum;
  for (size_t i = 0; i < members_.size(); ++i) {
    tensor::Tensor lp = members_[i]->step(tokens, attention ? &member_attention_ : nullptr);
    ops::scale(lp, w);
    if (i == 0) {
      sum = lp;  // member 0's step tensor holds the sum until its next step
      if (attention) attention->assign(member_attention_.size(), 0.0f);
    } else {
      ops::add(sum, sum, lp);
    }
    if (attention)
      for (size_t j = 0; j < attention->size(); ++j) (*attention)[j] += w * member_attention_[j];
  }
  return sum;
}

void EnsembleScorer::reorder(const std::vector<int32_t>& index) {
  for (auto& m : members_) m->reorder(index);
}

}  // namespace tt::decode
