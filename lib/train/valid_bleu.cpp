#include "train/valid_bleu.h"

#include <memory>

#include "decode/translator.h"
#include "metrics/bleu.h"
#include "util/error.h"
#include "util/text_io.h"

namespace tt::train {

BleuScorer make_bleu_scorer(std::string source_path, std::vector<std::string> references,
                            const data::SpmTokenizer& source_spm, const data::SpmTokenizer& target_spm,
                            const ValidBleuOptions& options) {
  // The translator reads model ids through io::Vocabulary: the same SentencePiece models, loaded again here.
  auto source = std::make_shared<const io::Vocabulary>(data::SpmTokenizer::load(source_spm.path()));
  auto target = std::make_shared<const io::Vocabulary>(data::SpmTokenizer::load(target_spm.path()));
  return [source_path = std::move(source_path), references = std::move(references), source, target,
          options](nn::Transformer& model) {
    decode::TranslatorOptions t;
    t.search.beam = 1;
    t.batch_size = options.batch_size;
    t.max_src_len = model.config().max_positions - 1;
    t.skip_invalid = true;
    decode::Translator translator({&model}, source.get(), target.get(), t);
    std::vector<std::string> hyps;
    hyps.reserve(references.size());
    util::LineReader in(source_path);
    decode::TranslatorOutput out;
    out.text = [&](const std::string& line) { hyps.push_back(line.substr(0, line.size() - 1)); };  // drop '\n'
    translator.run(in, out);
    if (hyps.size() != references.size())
      throw FormatError(source_path + " has " + std::to_string(hyps.size()) + " lines, its reference " +
                        std::to_string(references.size()));
    const metrics::Bleu bleu;
    const std::vector<double> stats = metrics::sum_stats(
        metrics::corpus_stats(bleu, hyps, {references}, options.threads), bleu.n_stats());
    return bleu.score(stats.data()).score;
  };
}

}  // namespace tt::train
