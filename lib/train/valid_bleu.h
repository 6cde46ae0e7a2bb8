// The validation BLEU: greedy translations (decode::search, beam 1) of the raw validation source, decoded
// with SentencePiece and scored in-process against the raw validation target by tt::metrics::Bleu
// (sacreBLEU's defaults: 13a tokenisation, exp smoothing, so the number matches `sacrebleu` on the same
// text). The translation pipeline is tt-translate's (decode::Translator): sorted batches, empty line ->
// empty line, over-long sources truncated to what the model's positions allow.
#pragma once

#include <string>
#include <vector>

#include "data/spm_tokenizer.h"
#include "train/validator.h"

namespace tt::train {

struct ValidBleuOptions {
  int batch_size = 64;  // sentences per search batch
  int threads = 1;      // for the BLEU statistics
};

// A scorer for Validator::set_bleu. Reads `source_path` at each call; `references` are the raw target
// lines (same count as the source: checked at each call). Keeps references to the tokenizers.
BleuScorer make_bleu_scorer(std::string source_path, std::vector<std::string> references,
                            const data::SpmTokenizer& source_spm, const data::SpmTokenizer& target_spm,
                            const ValidBleuOptions& options = {});

}  // namespace tt::train
