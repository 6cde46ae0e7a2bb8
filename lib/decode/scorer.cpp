#include "decode/scorer.h"

#include <algorithm>
#include <cmath>
#include <string>

#include <optional>

#include "ops/copy.h"
#include "ops/decoding.h"
#include "ops/elementwise.h"
#include "ops/softmax.h"
#include "ops/view.h"
#include "util/error.h"

namespace tt::decode {

ModelScorer::ModelScorer(nn::Transformer& model, bool logits, const Shortlist* shortlist)
    : model_(model),
      logits_(logits),
      shortlist_(shortlist),
      encode_arena_(model.backend()),
      cache_arena_(model.backend()),
      step_arena_(model.backend()) {
  if (shortlist_ && (shortlist_->target_vocab() != model.config().vocab_size_tgt ||
                     shortlist_->source_vocab() != model.config().vocab_size_src))
    throw ConfigError("the shortlist is for vocabularies of " + std::to_string(shortlist_->source_vocab()) + " / " +
                          std::to_string(shortlist_->target_vocab()) + " pieces, the model has " +
                          std::to_string(model.config().vocab_size_src) + " / " +
                          std::to_string(model.config().vocab_size_tgt),
                      "build the shortlist for this model: tt-convert shortlist MODEL --train SRC TGT");
}

ModelScorer::~ModelScorer() { end_state(); }

void ModelScorer::end_state() {
  if (state_)
    if (const float* table = nn::Transformer::restricted_table(*state_)) model_.backend().forget_packed(table);
  state_.reset();
}

void ModelScorer::start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps,
                        const std::vector<int32_t>& required) {
  end_state();
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
  if (shortlist_) {
    std::vector<int32_t> kept = required;
    kept.push_back(model_.config().pad_id);
    columns_ = shortlist_->columns(sources, kept);
    rest_column_ = column_of(&columns_.ids, model_.config().pad_id);
    model_.restrict_output(*state_, columns_.ids, cache_arena_);
  }
}

tensor::Tensor ModelScorer::decode(const std::vector<int32_t>& tokens, int n, nn::AttentionCapture* capture) {
  if (!shortlist_) return model_.decode_steps(*state_, tokens, n, step_arena_, !logits_, capture);
  tensor::Tensor logits = model_.decode_steps(*state_, tokens, n, step_arena_, false, capture);
  if (!columns_.sample.empty()) {
    const int64_t rows = logits.dim(0), C = logits.dim(1);
    const size_t R = columns_.sample.size();
    sample_at_.clear();
    for (int64_t r = 0; r < rows; ++r)
      for (int32_t c : columns_.sample) sample_at_.push_back(r * C + c);
    tensor::ArenaScope scope(step_arena_);  // scratch after the logits, dropped at the block's end as before
    const std::vector<float> sampled = ops::download_at(logits, sample_at_, step_arena_);
    rest_.clear();
    rest_at_.clear();
    for (int64_t r = 0; r < rows; ++r) {  // log-sum-exp of the row's sample, weighted up to all it stands for
      const float* v = sampled.data() + static_cast<size_t>(r) * R;
      const float top = *std::max_element(v, v + R);
      double sum = 0;
      for (size_t k = 0; k < R; ++k) sum += std::exp(static_cast<double>(v[k]) - top);
      rest_.push_back(std::isfinite(top) ? top + static_cast<float>(std::log(sum)) + columns_.rest_log_weight : top);
      rest_at_.push_back(r * C + rest_column_);
    }
    ops::upload_at(logits, rest_at_, rest_, step_arena_);
  }
  if (!logits_) ops::log_softmax(logits);
  return logits;
}

namespace {

// Logits a forced pass may hold at once (floats): longer prefixes go in chunks of positions.
constexpr int64_t kForcedLogits = int64_t{1} << 23;

void check_forced(const std::vector<std::vector<int32_t>>& forced, int rows) {
  if (static_cast<int>(forced.size()) != rows || forced.empty() || forced.front().empty())
    throw InternalError("force: " + std::to_string(forced.size()) + " forced rows for " + std::to_string(rows));
  for (const auto& f : forced)
    if (f.size() != forced.front().size()) throw InternalError("force: rows of different lengths");
}

// A forced token's column; the search passes every prefix token to start() as required, so a shortlist has it.
int32_t forced_column(const std::vector<int32_t>* columns, int32_t token) {
  const int32_t c = column_of(columns, token);
  if (c < 0) throw InternalError("force: target id " + std::to_string(token) + " is not among the shortlist's columns");
  return c;
}

// [positions][rows, S] -> [rows, positions, S]
std::vector<float> rows_first(const std::vector<std::vector<float>>& by_position, size_t rows) {
  const size_t n = by_position.size(), S = by_position.front().size() / rows;
  std::vector<float> out(rows * n * S);
  for (size_t t = 0; t < n; ++t)
    for (size_t r = 0; r < rows; ++r)
      std::copy_n(by_position[t].begin() + static_cast<std::ptrdiff_t>(r * S), S,
                  out.begin() + static_cast<std::ptrdiff_t>((r * n + t) * S));
  return out;
}

}  // namespace

tensor::Tensor StepScorer::force(const std::vector<std::vector<int32_t>>& forced,
                                 std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention) {
  const size_t rows = forced.size(), n = rows ? forced.front().size() : 0;
  check_forced(forced, static_cast<int>(rows));
  forced_log_probs.assign(rows, {});
  std::vector<std::vector<float>> steps_attention;
  std::vector<float> step_attention;
  std::optional<tensor::Arena> arena;
  std::vector<int32_t> tokens(rows), next(rows);
  for (size_t t = 0;; ++t) {
    for (size_t r = 0; r < rows; ++r) tokens[r] = forced[r][t];
    tensor::Tensor scores = step(tokens, attention ? &step_attention : nullptr);
    if (attention) steps_attention.push_back(step_attention);
    if (t + 1 == n) {
      if (attention) *attention = rows_first(steps_attention, rows);
      return scores;
    }
    if (returns_logits()) ops::log_softmax(scores);
    if (!arena) arena.emplace(scores.backend());
    tensor::ArenaScope scope(*arena);
    for (size_t r = 0; r < rows; ++r) next[r] = forced_column(columns(), forced[r][t + 1]);
    const std::vector<float> lp = ops::download_columns(scores, next, *arena);
    for (size_t r = 0; r < rows; ++r) forced_log_probs[r].push_back(lp[r]);
  }
}

void ModelScorer::mean_heads(const tensor::Tensor& captured, int queries, std::vector<float>& out) const {
  const int heads = model_.config().heads;
  const std::vector<float> all = captured.to_host_f32();  // [queries, H, 1, S]
  out.assign(static_cast<size_t>(queries) * S_, 0.0f);
  for (int r = 0; r < queries; ++r)
    for (int h = 0; h < heads; ++h)
      for (int s = 0; s < S_; ++s)
        out[static_cast<size_t>(r) * S_ + s] += all[(static_cast<size_t>(r) * heads + h) * S_ + s] / static_cast<float>(heads);
}

tensor::Tensor ModelScorer::step(const std::vector<int32_t>& tokens, std::vector<float>* attention) {
  step_arena_.reset();  // the previous step's log-probabilities are no longer needed
  const int rows = state_->rows();
  nn::AttentionCapture capture;
  if (attention) {
    // Only the last decoder layer's cross-attention: [rows, H, 1, S]
    capture.decoder_cross.resize(static_cast<size_t>(model_.config().n_layers_dec));
    capture.decoder_cross.back() = step_arena_.allocate(tensor::Shape{rows, model_.config().heads, 1, S_});
  }
  tensor::Tensor log_probs = decode(tokens, 1, attention ? &capture : nullptr);
  if (attention) mean_heads(capture.decoder_cross.back(), rows, *attention);
  return log_probs;
}

tensor::Tensor ModelScorer::force(const std::vector<std::vector<int32_t>>& forced,
                                  std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention) {
  const int rows = state_->rows();
  check_forced(forced, rows);
  const int n = static_cast<int>(forced.front().size());
  const int V = shortlist_ ? static_cast<int>(columns_.ids.size()) : vocab_size();
  const int chunk = static_cast<int>(std::clamp<int64_t>(kForcedLogits / (int64_t{rows} * V), 1, n));
  forced_log_probs.assign(static_cast<size_t>(rows), {});
  std::vector<std::vector<float>> chunks_attention;
  std::vector<int32_t> tokens, next;
  for (int t0 = 0;; t0 += chunk) {
    const int c = std::min(chunk, n - t0);
    step_arena_.reset();
    tokens.clear();
    for (int i = 0; i < c; ++i)  // time-major
      for (int r = 0; r < rows; ++r) tokens.push_back(forced[static_cast<size_t>(r)][static_cast<size_t>(t0 + i)]);
    nn::AttentionCapture capture;
    if (attention) {
      capture.decoder_cross.resize(static_cast<size_t>(model_.config().n_layers_dec));
      capture.decoder_cross.back() = step_arena_.allocate(tensor::Shape{c * rows, model_.config().heads, 1, S_});
    }
    tensor::Tensor logits = decode(tokens, c, attention ? &capture : nullptr);
    if (attention) {
      std::vector<float> a;
      mean_heads(capture.decoder_cross.back(), c * rows, a);
      for (int i = 0; i < c; ++i)
        chunks_attention.emplace_back(a.begin() + static_cast<std::ptrdiff_t>(i) * rows * S_,
                                      a.begin() + static_cast<std::ptrdiff_t>(i + 1) * rows * S_);
    }
    const bool last = t0 + c == n;
    const int scored = last ? c - 1 : c;  // positions whose next token is forced
    if (scored > 0) {
      const int64_t queries = int64_t{scored} * rows;
      const tensor::Tensor head = ops::view(logits, 0, tensor::Shape{queries, V});
      next.clear();
      for (int i = 0; i < scored; ++i)
        for (int r = 0; r < rows; ++r)
          next.push_back(forced_column(columns(), forced[static_cast<size_t>(r)][static_cast<size_t>(t0 + i + 1)]));
      std::vector<float> shift(static_cast<size_t>(queries), 0.0f);
      if (logits_) {  // each row's log-softmax shift, fused as the search's top-k computes it (no [rows, V] pass
                      // written back); the forced token's log-probability is then the search's x - shift
        tensor::Tensor best = step_arena_.allocate(tensor::Shape{queries, 1}), shifts = step_arena_.allocate(tensor::Shape{queries});
        ops::log_softmax_topk(best, step_arena_.allocate(tensor::Shape{queries, 1}, tensor::DType::i32), shifts, head);
        shift = shifts.to_host_f32();
      }
      const std::vector<float> lp = ops::download_columns(head, next, step_arena_);
      for (size_t q = 0; q < lp.size(); ++q) forced_log_probs[q % static_cast<size_t>(rows)].push_back(lp[q] - shift[q]);
    }
    if (last) {
      if (attention) *attention = rows_first(chunks_attention, static_cast<size_t>(rows));
      return ops::view(logits, int64_t{c - 1} * rows * V, tensor::Shape{rows, V});
    }
  }
}

void ModelScorer::reorder(const std::vector<int32_t>& index) { model_.reorder(*state_, index); }

EnsembleScorer::EnsembleScorer(const std::vector<nn::Transformer*>& models, const Shortlist* shortlist) {
  if (models.empty()) throw ConfigError("an ensemble needs at least one model");
  const nn::ModelConfig& first = models.front()->config();
  for (size_t i = 0; i < models.size(); ++i) {
    const nn::ModelConfig& c = models[i]->config();
    if (c.vocab_size_tgt != first.vocab_size_tgt || c.bos_id != first.bos_id || c.eos_id != first.eos_id ||
        c.pad_id != first.pad_id)
      throw ConfigError("ensemble member " + std::to_string(i + 1) + " has a different target vocabulary (" +
                        std::to_string(c.vocab_size_tgt) + " pieces, vs " + std::to_string(first.vocab_size_tgt) +
                        " in member 1); ensembles need models trained with the same target vocabulary");
    members_.push_back(std::make_unique<ModelScorer>(*models[i], models.size() == 1, shortlist));
  }
}

int EnsembleScorer::max_positions() const {
  int m = members_.front()->max_positions();
  for (const auto& s : members_) m = std::min(m, s->max_positions());
  return m;
}

void EnsembleScorer::start(const std::vector<std::vector<int32_t>>& sources, int max_rows, int max_steps,
                           const std::vector<int32_t>& required) {
  for (auto& m : members_) m->start(sources, max_rows, max_steps, required);  // the same columns in each
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

tensor::Tensor EnsembleScorer::force(const std::vector<std::vector<int32_t>>& forced,
                                     std::vector<std::vector<float>>& forced_log_probs, std::vector<float>* attention) {
  if (members_.size() == 1) return members_.front()->force(forced, forced_log_probs, attention);
  // The same mean as step(): every member's terms scaled by w, added in member order, by the same kernels.
  const float w = 1.0f / static_cast<float>(members_.size());
  tensor::Tensor sum, sum_forced;
  std::vector<std::vector<float>> member_forced;
  std::optional<tensor::Arena> arena;
  for (size_t i = 0; i < members_.size(); ++i) {
    tensor::Tensor lp = members_[i]->force(forced, member_forced, attention ? &member_attention_ : nullptr);
    if (!arena) arena.emplace(lp.backend());
    std::vector<float> flat;
    for (const auto& f : member_forced) flat.insert(flat.end(), f.begin(), f.end());
    tensor::Tensor f = arena->allocate(tensor::Shape{static_cast<int64_t>(flat.size()) + 1});
    flat.push_back(0.0f);  // (never an empty tensor)
    ops::upload(f, flat);
    ops::scale(lp, w);
    ops::scale(f, w);
    if (i == 0) {
      sum = lp;
      sum_forced = f;
      if (attention) attention->assign(member_attention_.size(), 0.0f);
    } else {
      ops::add(sum, sum, lp);
      ops::add(sum_forced, sum_forced, f);
    }
    if (attention)
      for (size_t j = 0; j < attention->size(); ++j) (*attention)[j] += w * member_attention_[j];
  }
  const std::vector<float> mean = sum_forced.to_host_f32();
  forced_log_probs = std::move(member_forced);
  size_t k = 0;
  for (auto& f : forced_log_probs)
    for (float& x : f) x = mean[k++];
  return sum;
}

void EnsembleScorer::reorder(const std::vector<int32_t>& index) {
  for (auto& m : members_) m->reorder(index);
}

}  // namespace tt::decode
