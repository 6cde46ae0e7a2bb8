#include "io/shortlist_corpus.h"

#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "util/error.h"
#include "util/text_io.h"

namespace tt::io {

ShortlistCorpusResult build_shortlist(const std::string& model_dir, const std::string& source_path,
                                      const std::string& target_path, const ShortlistCorpusOptions& options) {
  if (options.frequent < 0 || options.best < 1 || options.max_lines < 0)
    throw ConfigError(option_ref("frequent") + " must be >= 0, " + option_ref("best") + " >= 1 and " +
                      option_ref("max_lines") + " >= 0");
  nlohmann::json full;
  const nn::ModelConfig config = load_model_config(model_dir, &full);
  const ModelTokenizers spm = load_tokenizers(model_dir, full, config);
  decode::ShortlistBuilder builder(config.vocab_size_src, config.vocab_size_tgt,
                                   {config.pad_id, config.bos_id, config.eos_id, config.unk_id});
  util::LineReader src(source_path), tgt(target_path);
  std::string s, t;
  std::vector<int> src_ids, tgt_ids;
  for (;;) {
    if (options.max_lines > 0 && builder.pairs() >= options.max_lines) break;
    const bool more_src = src.next(s), more_tgt = tgt.next(t);
    if (!more_src && !more_tgt) break;
    if (more_src != more_tgt) {
      const util::LineReader& shorter = more_src ? tgt : src;
      throw FormatError(shorter.name() + ": ends after " + std::to_string(shorter.line_number()) + " lines, " +
                        (more_src ? src : tgt).name() + " goes on", "give the two sides of one parallel corpus");
    }
    for (const auto* side : {&src, &tgt}) {
      size_t bad = 0;
      if (!util::is_valid_utf8(side == &src ? s : t, &bad))
        throw FormatError(side->name() + ":" + std::to_string(side->line_number()) + ": invalid UTF-8 at byte " +
                          std::to_string(bad + 1));
    }
    spm.source.encode_ids(s, src_ids);
    spm.target.encode_ids(t, tgt_ids);
    builder.add(std::vector<int32_t>(src_ids.begin(), src_ids.end()), std::vector<int32_t>(tgt_ids.begin(), tgt_ids.end()),
                src.name() + ":" + std::to_string(src.line_number()));
  }
  if (builder.pairs() == 0) throw FormatError(source_path + ": no sentence pairs to count");
  return {builder.build(options.frequent, options.best), builder.pairs()};
}

}  // namespace tt::io
