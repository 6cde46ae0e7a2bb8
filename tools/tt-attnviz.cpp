// tt-attnviz: every attention map of a translation, as JSON lines (or bertviz's layout, or alignments) on
// stdout and/or a self-contained HTML page. Translates with tt-translate's search and pipeline (or forces
// --target references), then runs one teacher-forced pass with capture on. See man tt-attnviz.
#include <unistd.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/decode_options.h"
#include "cli/openmp_env.h"
#include "cli/run_tool.h"
#include "data/spm_tokenizer.h"
#include "decode/translator.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/transformer.h"
#include "util/error.h"
#include "util/text_io.h"
#include "viz/alignment.h"
#include "viz/attention_html.h"
#include "viz/attention_json.h"
#include "viz/attention_maps.h"
#include "viz/attention_view.h"

namespace {

using tt::viz::Kind;

struct Flags {
  std::string model, input = "-", target, html;
  std::string format = "json", alignment = "hard", reduce = "none";
  std::vector<std::string> kinds;
  std::string layers, heads;
  int precision = 4;
  bool merge_words = false;
  size_t max_sentences = 0;
};

// A sentence waiting for its teacher-forced pass.
struct Item {
  size_t line = 0;
  std::vector<int32_t> source;  // with </s>; empty: an empty or skipped line
  std::vector<int32_t> target;  // without <s>/</s>
  std::optional<float> score;
};

struct Enough {};  // --max-sentences reached

// Memory bounds. The maps of a batch are held together (as floats, 4 bytes a weight) and each sentence's
// JSON line is built whole (up to about 10 bytes a weight): one 5,000-word line made a 273 MB line at
// 1.2 GB of memory. A batch is cut short once its sentences hold kBatchWeights, and a sentence holding
// more than kWarnWeights is announced with its size, so that nobody runs out of memory by surprise.
constexpr size_t kBatchWeights = size_t{32} << 20;
constexpr size_t kWarnWeights = size_t{8} << 20;

class Visualizer {
 public:
  Visualizer(const Flags& f, tt::nn::Transformer& model, const tt::io::Vocabulary& src_spm,
             const tt::io::Vocabulary& tgt_spm, int batch_size)
      : f_(f), model_(model), src_spm_(src_spm), tgt_spm_(tgt_spm), arena_(model.backend()), batch_size_(batch_size) {
    for (const auto& k : f.kinds.empty() ? std::vector<std::string>{"enc", "dec", "cross"} : f.kinds) {
      kinds_.encoder_self |= k == "enc";
      kinds_.decoder_self |= k == "dec";
      kinds_.cross |= k == "cross";
    }
    if (alignment_format()) kinds_ = tt::viz::KindSet{false, false, true};
    view_.kinds = kinds_;
    if (!f.layers.empty()) view_.layers = tt::viz::parse_index_list(f.layers, "--layers");
    if (!f.heads.empty()) view_.heads = tt::viz::parse_index_list(f.heads, "--heads");
    view_.reduce = tt::viz::parse_reduce(f.reduce);
    view_.merge_words = f.merge_words;
    view_.layers_name = "--layers";
    view_.heads_name = "--heads";
    if (alignment_format() && f.layers.empty()) view_.layers = {model.config().n_layers_dec - 1};  // as tt-translate
    if (!f.html.empty()) html_.emplace(f.html, "tt-attnviz: " + f.model);
  }
  bool alignment_format() const { return f_.format == "alignment"; }
  bool to_stdout = true;

  bool quiet = false;

  void add(Item item) {
    const size_t weights = weights_of(item);
    if (weights > kWarnWeights && !quiet)
      std::fprintf(stderr,
                   "tt-attnviz: warning: line %zu: its attention maps hold %.1f million weights (about %zu MB of "
                   "memory and up to %zu MB of output); --kind, --layers, --heads, --reduce mean or a lower "
                   "--max-src-len make them smaller\n",
                   item.line + 1, static_cast<double>(weights) / 1e6, weights * 4 >> 20, weights * 10 >> 20);
    pending_weights_ += weights;
    pending_.push_back(std::move(item));
    ++seen_;
    const bool last = f_.max_sentences && seen_ >= f_.max_sentences;
    if (pending_.size() >= static_cast<size_t>(batch_size_) || pending_weights_ >= kBatchWeights || last) flush();
    if (last) throw Enough{};
  }

  void flush() {
    std::vector<std::vector<int32_t>> sources, targets;
    for (const Item& i : pending_)
      if (!i.source.empty()) {
        sources.push_back(i.source);
        targets.push_back(i.target);
      }
    const auto maps = tt::viz::capture_attention(model_, arena_, sources, targets, kinds_);
    size_t k = 0;
    for (const Item& i : pending_) write(i, i.source.empty() ? empty_maps(i) : maps[k++]);
    pending_.clear();
    pending_weights_ = 0;
    tt::util::flush_stdout();
  }

  void finish() {
    flush();
    if (html_) html_->finish();
  }

 private:
  // The weights capture_attention keeps for `item` (every layer and head of the kinds asked for).
  size_t weights_of(const Item& item) const {
    if (item.source.empty()) return 0;
    const tt::nn::ModelConfig& c = model_.config();
    const size_t S = item.source.size(), T = item.target.size() + 1, H = static_cast<size_t>(c.heads);
    const size_t enc = static_cast<size_t>(c.n_layers_enc) * H, dec = static_cast<size_t>(c.n_layers_dec) * H;
    return (kinds_.encoder_self ? enc * S * S : 0) + (kinds_.decoder_self ? dec * T * T : 0) +
           (kinds_.cross ? dec * T * S : 0);
  }

  tt::viz::SentenceAttention empty_maps(const Item&) const {
    const tt::nn::ModelConfig& c = model_.config();
    return tt::viz::SentenceAttention{{}, {}, c.n_layers_enc, c.n_layers_dec, c.heads, {}, {}, {}};
  }

  tt::viz::Tokens tokens(const tt::io::Vocabulary& spm, const std::vector<int32_t>& ids) const {
    const tt::nn::ModelConfig& c = model_.config();
    tt::viz::Tokens t;
    for (int32_t id : ids) {
      t.pieces.push_back(spm.id_to_piece(id));
      t.special.push_back(id == c.bos_id || id == c.eos_id || id == c.pad_id);
    }
    return t;
  }

  void write(const Item& item, const tt::viz::SentenceAttention& a) {
    tt::viz::SentenceInfo info{item.line, tgt_spm_.decode_ids({item.target.begin(), item.target.end()}), item.score};
    const tt::viz::Tokens src = tokens(src_spm_, a.source), tgt = tokens(tgt_spm_, a.target);
    if (alignment_format()) {
      std::string line;
      if (!item.source.empty()) {
        std::vector<int32_t> predicted(a.target.begin() + 1, a.target.end());
        predicted.push_back(model_.config().eos_id);
        const auto v = tt::viz::make_view(a, src, tgt, view_);  // validates --layers/--heads
        const auto m = tt::viz::cross_alignment(a, v.maps.front().layers, v.heads, view_.merge_words, src,
                                                tokens(tgt_spm_, predicted));
        line = f_.alignment == "soft" ? tt::viz::soft_alignment(m) : tt::viz::hard_alignment(m);
      }
      tt::util::write_stdout(line + "\n");
      return;
    }
    const tt::viz::AttentionView v = tt::viz::make_view(a, src, tgt, view_);
    if (to_stdout)
      tt::util::write_stdout(tt::viz::json_line(v, info, f_.precision,
                                                f_.format == "bertviz" ? tt::viz::JsonLayout::bertviz
                                                                       : tt::viz::JsonLayout::json));
    if (html_) html_->add(v, info);
  }

  const Flags& f_;
  tt::nn::Transformer& model_;
  const tt::io::Vocabulary& src_spm_;
  const tt::io::Vocabulary& tgt_spm_;
  tt::tensor::Arena arena_;
  int batch_size_;
  tt::viz::KindSet kinds_{false, false, false};
  tt::viz::ViewOptions view_;
  std::optional<tt::viz::HtmlWriter> html_;
  std::vector<Item> pending_;
  size_t pending_weights_ = 0;
  size_t seen_ = 0;
};

// --target: each source line with the reference line of the same number, no search.
void force_targets(Visualizer& viz, const tt::decode::Translator& translator, const tt::io::Vocabulary& tgt_spm,
                   const Flags& f, int32_t eos, int max_src_len, int max_tgt_len, bool quiet) {
  tt::util::LineReader in(f.input), ref(f.target);
  std::string line, target;
  for (size_t n = 0; in.next(line); ++n) {
    if (!ref.next(target))
      throw tt::FormatError(f.target + ": ends at line " + std::to_string(n) + " but " + in.name() + " goes on",
                            "give --target one reference line per input line");
    Item item;
    item.line = n;
    for (auto [text, reader] : {std::pair{&line, &in}, std::pair{&target, &ref}}) {
      size_t bad = 0;
      if (!tt::util::is_valid_utf8(*text, &bad))
        throw tt::FormatError(reader->name() + ":" + std::to_string(reader->line_number()) +
                              ": invalid UTF-8 at byte " + std::to_string(bad + 1));
    }
    if (line.find_first_not_of(" \t\r") != std::string::npos) {
      item.source = translator.encode(line, in.name() + ":" + std::to_string(in.line_number()));
      const auto t = tgt_spm.encode_ids(target);
      item.target.assign(t.begin(), t.end());
      for (auto [ids, limit, name] : {std::tuple{&item.source, max_src_len, &in.name()},
                                      std::tuple{&item.target, max_tgt_len, &ref.name()}}) {
        if (static_cast<int>(ids->size()) <= limit) continue;
        if (!quiet)
          std::fprintf(stderr, "tt-attnviz: warning: %s:%zu: %zu pieces, truncated to %d\n", name->c_str(), n + 1,
                       ids->size(), limit);
        ids->resize(static_cast<size_t>(limit));
      }
      item.source.push_back(eos);
    }
    viz.add(std::move(item));
  }
  if (ref.next(target))
    throw tt::FormatError(f.target + " has more lines than " + in.name(), "give one reference line per input line");
}

int attnviz_main(int argc, char** argv) {
  CLI::App app{"Attention maps of translations: JSON lines (or bertviz, or alignments) on stdout, an HTML page."};
  tt::cli::configure_app(app, "tt-attnviz");
  Flags f;
  tt::cli::DecodeOptions d;
  tt::decode::TranslatorOptions& o = d.translator;
  o.split_long_lines = false;  // the maps of a line are drawn for one pass: a long line is truncated, with a warning
  tt::cli::CommonOptions common;
  app.add_option("-m,--model", f.model, "Model directory")->type_name("DIR")->required();
  app.add_option("-i,--input", f.input, "Input file ('-': stdin)")->type_name("FILE");
  app.add_option("--target", f.target, "Force these translations (one per input line) instead of searching")
      ->type_name("FILE");
  const std::string g = "Output";
  auto* format = app.add_option("--format", f.format, "json (default), bertviz or alignment")
                     ->check(CLI::IsMember({"json", "bertviz", "alignment"}))->group(g);
  app.add_option("--alignment", f.alignment, "With --format alignment: hard (i-j pairs) or soft")
      ->check(CLI::IsMember({"hard", "soft"}))->group(g);
  app.add_option("--html", f.html, "Write a self-contained HTML page (stdout gets nothing unless --format)")
      ->type_name("FILE")
      ->group(g);
  app.add_option("--kind", f.kinds, "Attention kinds: enc, dec, cross (comma-separated; default all)")
      ->delimiter(',')->check(CLI::IsMember({"enc", "dec", "cross"}))->group(g);
  app.add_option("--layers", f.layers, "Layers to keep, e.g. 0,5 or 0-3 (default all)")->group(g);
  app.add_option("--heads", f.heads, "Heads to keep, e.g. 0-3 (default all)")->group(g);
  app.add_option("--reduce", f.reduce, "Reduce the kept heads: none, mean or max")
      ->check(CLI::IsMember({"none", "mean", "max"}))->group(g);
  app.add_option("--precision", f.precision, "Decimals of each weight")->check(CLI::Range(0, 9))->group(g);
  app.add_flag("--merge-words", f.merge_words, "Merge subword pieces into words (keys summed, queries averaged)")
      ->group(g);
  app.add_option("--max-sentences", f.max_sentences, "Stop after N sentences (0: all)")->group(g);
  tt::cli::add_search_options(app, d, "Search (as tt-translate)");
  tt::cli::add_target_options(app, d, "Search (as tt-translate)");
  tt::cli::add_batching_options(app, d, "Batching");
  tt::cli::add_threads_option(app, common);
  tt::cli::add_device_option(app, common);
  tt::cli::add_quiet_flag(app, common);
  tt::cli::parse(app, argc, argv);

  d.finish();
  if (!f.target.empty() && (!d.target_prefix.empty() || !d.constraints.empty()))
    throw tt::UsageError("--target forces whole translations; it does not combine with --target-prefix or "
                         "--constraints");
  if (!f.html.empty() && f.format == "alignment")
    throw tt::UsageError("--html draws attention maps; it does not combine with --format alignment");
  if (f.input == "-" && isatty(STDIN_FILENO)) o.flush = true;
  if (f.max_sentences) {  // translate no more than needed (results do not depend on batching)
    o.window = 1;
    o.batch_size = static_cast<int>(std::min<size_t>(static_cast<size_t>(o.batch_size), f.max_sentences));
  }
  tt::cli::TranslatorFiles target_files(d);  // opened before the model loads: a missing file fails at once
  auto backend = tt::backend::make_backend(common.device, common.threads);
  const bool invariant = backend->set_row_invariant(true);
  nlohmann::json full;
  const tt::nn::ModelConfig config = tt::io::load_model_config(f.model, &full);
  tt::nn::Transformer model(config, *backend, tt::nn::Usage::inference);
  tt::io::load_model_weights(f.model, model.params());
  const tt::io::ModelTokenizers spm = tt::io::load_tokenizers(f.model, full, config);
  const tt::io::Vocabulary& src_spm = spm.source;
  const tt::io::Vocabulary& tgt_spm = spm.target;
  tt::decode::Translator translator({&model}, &src_spm, &tgt_spm, o);

  Visualizer viz(f, model, src_spm, tgt_spm, o.batch_size);
  viz.to_stdout = f.html.empty() || format->count() > 0;
  viz.quiet = common.quiet;
  if (!common.quiet)
    std::fprintf(stderr, "tt-attnviz: %s, %s%s\n", backend->name().c_str(),
                 f.target.empty() ? ("beam " + std::to_string(o.search.beam)).c_str() : "teacher forcing --target",
                 invariant ? ", batch-invariant" : "");
  try {
    if (!f.target.empty()) {
      force_targets(viz, translator, tgt_spm, f, config.eos_id, std::min(o.max_src_len, config.max_positions - 1),
                    config.max_positions - 1, common.quiet);
    } else {
      tt::decode::TranslatorOutput out;
      out.text = [](const std::string&) {};
      out.warn = [&](const std::string& w) {
        if (!common.quiet) std::fprintf(stderr, "tt-attnviz: warning: %s\n", w.c_str());
      };
      out.flush = [&] { viz.flush(); };
      out.hypotheses = [&](size_t line, const std::vector<int32_t>& source,
                           const std::vector<tt::decode::Hypothesis>& hyps) {
        viz.add(Item{line, source, hyps.front().tokens, source.empty() ? std::nullopt : std::optional(hyps.front().score)});
      };
      tt::util::LineReader in(f.input);
      translator.run(in, out, target_files.inputs());
    }
  } catch (const Enough&) {
  }
  viz.finish();
  tt::util::flush_stdout();
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  tt::cli::use_short_openmp_spin(argv);
  return tt::cli::run_filter("tt-attnviz", argc, argv, &attnviz_main);
}
