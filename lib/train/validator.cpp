#include "train/validator.h"

#include <cmath>

#include "tensor/arena.h"
#include "train/batcher.h"
#include "util/error.h"

namespace tt::train {

Validator::Validator(const data::ParallelCorpus& corpus, int64_t batch_tokens, const nn::ModelConfig& config)
    : pairs_(corpus.size()) {
  if (corpus.size() == 0)
    throw ConfigError("the validation set has no pairs left after filtering", "check the validation files");
  BatcherOptions options;
  options.batch_tokens = batch_tokens;
  options.pad_id = config.pad_id;
  options.bos_id = config.bos_id;
  options.eos_id = config.eos_id;
  batches_ = Batcher::in_order(corpus, options);
}

ValidationResult Validator::run(nn::Transformer& model) const {
  ValidationResult r;
  double loss_sum = 0, nll_sum = 0;
  tensor::Arena arena(model.backend());
  for (const nn::Batch& batch : batches_) {
    tensor::ArenaScope scope(arena);
    const nn::LossStats stats = model.evaluate(batch, arena);
    loss_sum += stats.loss_sum;
    nll_sum += stats.nll_sum;
    r.tokens += stats.tokens;
  }
  const double n = static_cast<double>(std::max<int64_t>(r.tokens, 1));
  r.loss = loss_sum / n;
  r.nll = nll_sum / n;
  r.ppl = std::exp(r.nll);
  if (bleu_) r.bleu = bleu_(model);
  return r;
}

}  // namespace tt::train
