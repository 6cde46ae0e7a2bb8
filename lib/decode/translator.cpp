#include "decode/translator.h"

#include <algorithm>
#include <atomic>
#include <charconv>
#include <cstdio>
#include <exception>
#include <limits>
#include <numeric>
#include <sstream>
#include <thread>

#include "decode/constraints.h"
#include "decode/long_lines.h"
#include "util/error.h"

namespace tt::decode {

TextFormat parse_text_format(const std::string& name) {
  if (name == "text") return TextFormat::text;
  if (name == "pieces") return TextFormat::pieces;
  if (name == "ids") return TextFormat::ids;
  throw ConfigError("unknown text format '" + name + "'; expected text, pieces or ids");
}

AlignmentFormat parse_alignment_format(const std::string& name) {
  if (name == "none") return AlignmentFormat::none;
  if (name == "hard") return AlignmentFormat::hard;
  if (name == "soft") return AlignmentFormat::soft;
  throw ConfigError("unknown alignment format '" + name + "'; expected hard or soft");
}

Translator::Translator(const std::vector<nn::Transformer*>& models, const io::Vocabulary* source_spm,
                       const io::Vocabulary* target_spm, TranslatorOptions options)
    : models_(models), source_spm_(source_spm), target_spm_(target_spm), options_(std::move(options)) {
  validate(options_.search);
  if (options_.batch_size < 1) throw ConfigError("batch size must be at least 1");
  if (options_.batch_tokens < 0) throw ConfigError("batch tokens must be >= 0 (0: no limit)");
  if (options_.window < 1) throw ConfigError("window must be at least 1 batch");
  if (options_.max_src_len < 1) throw ConfigError(options_.max_src_len_name + " must be at least 1");
  if (options_.input_format == TextFormat::text && !source_spm_)
    throw ConfigError("text input needs the source SentencePiece model");
  if (options_.output_format == TextFormat::text && !target_spm_)
    throw ConfigError("text output needs the target SentencePiece model");
  scorers_.push_back(std::make_unique<EnsembleScorer>(models_, options_.shortlist.get()));
  const nn::ModelConfig& c = models_.front()->config();
  ids_ = special_ids(c);
  source_vocab_ = c.vocab_size_src;
  target_vocab_ = c.vocab_size_tgt;
  max_positions_ = scorers_.front()->max_positions();
  for (const auto* m : models_) source_vocab_ = std::min(source_vocab_, m->config().vocab_size_src);
  // A source may be at most max_positions long (with </s>) in every model.
  for (const auto* m : models_) options_.max_src_len = std::min(options_.max_src_len, m->config().max_positions - 1);
  if (options_.search.attention == false) options_.search.attention = options_.alignment != AlignmentFormat::none;
}

void Translator::add_worker(const std::vector<nn::Transformer*>& models) {
  if (models.size() != models_.size()) throw ConfigError("a decoding worker needs the same models");
  for (size_t i = 0; i < models.size(); ++i)
    if (models[i]->params().count() != models_[i]->params().count() ||
        models[i]->config().vocab_size_tgt != models_[i]->config().vocab_size_tgt)
      throw ConfigError("a decoding worker's model " + std::to_string(i + 1) + " differs from the first worker's");
  scorers_.push_back(std::make_unique<EnsembleScorer>(models, options_.shortlist.get()));
}

std::vector<int32_t> line_ids(const std::string& line, TextFormat format, const io::Vocabulary* spm, int vocab,
                              int32_t pad, const std::string& where, const char* side) {
  std::vector<int32_t> ids;
  if (format == TextFormat::text) {
    std::vector<int> v;
    spm->encode_ids(line, v);
    ids.assign(v.begin(), v.end());
    return ids;
  }
  std::istringstream words(line);
  for (std::string w; words >> w;) {
    if (format == TextFormat::pieces) {
      ids.push_back(spm ? spm->piece_to_id(w) : pad);
      continue;
    }
    int32_t id = -1;
    auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), id);
    if (ec != std::errc() || end != w.data() + w.size() || id < 0 || id >= vocab)
      throw FormatError(where + ": '" + w + "' is not a " + side + " id in [0, " + std::to_string(vocab) + ")");
    ids.push_back(id);
  }
  return ids;
}

std::vector<int32_t> Translator::encode(const std::string& line, const std::string& where) const {
  return line_ids(line, options_.input_format, source_spm_, source_vocab_, ids_.pad, where, "source");
}

std::string Translator::render(const std::vector<int32_t>& tokens) const {
  if (options_.output_format == TextFormat::text) return target_spm_->decode_ids({tokens.begin(), tokens.end()});
  std::string s;
  for (size_t i = 0; i < tokens.size(); ++i) {
    if (i) s += ' ';
    s += options_.output_format == TextFormat::ids || !target_spm_ ? std::to_string(tokens[i])
                                                                    : target_spm_->id_to_piece(tokens[i]);
  }
  return s;
}

std::string Translator::alignment(const Hypothesis& h, int source_size) const {
  const int T = static_cast<int>(h.tokens.size()) + 1;
  if (h.attention.size() != static_cast<size_t>(T) * source_size) return {};
  std::string s;
  char buf[32];
  for (int t = 0; t < T; ++t) {
    const float* row = h.attention.data() + static_cast<size_t>(t) * source_size;
    if (options_.alignment == AlignmentFormat::hard) {
      if (t == T - 1 || source_size < 2) continue;  // </s> on either side is not aligned
      const int best = static_cast<int>(std::max_element(row, row + source_size - 1) - row);
      if (!s.empty()) s += ' ';
      s += std::to_string(best) + "-" + std::to_string(t);
    } else {
      if (t) s += ' ';
      for (int i = 0; i < source_size; ++i) {
        std::snprintf(buf, sizeof buf, i ? ",%.6g" : "%.6g", static_cast<double>(row[i]));
        s += buf;
      }
    }
  }
  return s;
}

std::vector<int32_t> Translator::encode_target(const std::string& text, const std::string& where) const {
  if (options_.input_format != TextFormat::ids && !target_spm_)
    throw ConfigError("a target prefix or phrase in text needs the target SentencePiece model");
  return line_ids(text, options_.input_format, target_spm_, target_vocab_, ids_.pad, where, "target");
}

void Translator::set_targets(Pending& p, LineTargets t, const std::string& where, const TranslatorOutput& out) const {
  const size_t room = static_cast<size_t>(std::max(0, max_positions_ - 2));  // at least one more piece, then </s>
  if (t.prefix.size() > room) {
    if (out.warn)
      out.warn(where + ": a target prefix of " + std::to_string(t.prefix.size()) + " pieces, cut to the model's " +
               std::to_string(room));
    t.prefix.resize(room);
  }
  p.prefix = std::move(t.prefix);
  if (t.constraints.empty() || !p.translate) return;
  const std::vector<int32_t>& first = p.parts.empty() ? p.source : p.parts.front();  // with its </s>
  const int max_len = max_target_length(options_.search, static_cast<int>(first.size()) - 1,
                                        static_cast<int>(p.prefix.size()), max_positions_);
  if (!p.parts.empty() && out.warn)
    out.warn(where + ": the line is translated in " + std::to_string(p.parts.size()) +
             " parts; its constraints are placed in the first");
  for (size_t i : fit_constraints(t.constraints, p.prefix, max_len))
    if (out.warn)
      out.warn(t.constraints_where + ": the phrase '" + t.phrases[i] + "' does not fit within the length limit (" +
               std::to_string(max_len) + " pieces); the line is translated without it");
  p.constraints = std::move(t.constraints);
}

size_t Translator::run(util::LineReader& in, const TranslatorOutput& out, const TranslatorInputs& inputs) {
  const size_t window_lines = options_.flush ? 1 : static_cast<size_t>(options_.window) * options_.batch_size;
  std::vector<Pending> window;
  std::string line;
  size_t lines = 0;
  const bool targets = inputs.prefixes || inputs.constraints;
  TargetInputReader reader(inputs, [this](const std::string& text, const std::string& where) {
    return encode_target(text, where);
  });
  while (in.next(line)) {
    const std::string where = in.name() + ":" + std::to_string(in.line_number());
    Pending p;
    p.line = lines++;
    LineTargets line_targets;
    if (targets) line_targets = reader.next(in.name(), lines);
    size_t bad = 0;
    if (options_.input_format != TextFormat::ids && !util::is_valid_utf8(line, &bad)) {
      const std::string what = where + ": invalid UTF-8 at byte " + std::to_string(bad + 1);
      if (!options_.skip_invalid)
        throw FormatError(what, "fix the input's encoding, or pass " + options_.skip_invalid_name +
                                    " to write an empty line for it");
      if (out.warn) out.warn(what + "; writing an empty line");
    } else if (line.find_first_not_of(" \t\r") != std::string::npos) {
      p.source = encode(line, where);
      if (static_cast<int>(p.source.size()) > options_.max_src_len && options_.split_long_lines) {
        split(p, line, where);
      } else if (static_cast<int>(p.source.size()) > options_.max_src_len) {
        if (out.warn)
          out.warn(where + ": " + std::to_string(p.source.size()) + " source pieces, truncated to " +
                   std::to_string(options_.max_src_len) + " (" + options_.max_src_len_name + ")");
        p.source.resize(static_cast<size_t>(options_.max_src_len));
      }
      p.source.push_back(ids_.eos);
      p.translate = true;
    }
    if (targets) set_targets(p, std::move(line_targets), where, out);
    window.push_back(std::move(p));
    if (window.size() >= window_lines) translate_window(window, out);
  }
  translate_window(window, out);
  if (targets) reader.finish(in.name(), lines);
  return lines;
}

void Translator::split(Pending& p, const std::string& line, const std::string& where) const {
  std::vector<std::vector<int32_t>> sentences;
  if (options_.input_format == TextFormat::text)
    for (const std::string& s : split_sentences(line)) sentences.push_back(encode(s, where));
  else
    sentences.push_back(std::move(p.source));
  auto starts_word = [this](int32_t id) {
    if (!source_spm_ || id < 0 || id >= source_spm_->size()) return false;
    return source_spm_->id_to_piece(id).rfind("\u2581", 0) == 0;
  };
  p.parts = pack_parts(sentences, options_.max_src_len, starts_word);
  p.source.clear();
  for (auto& part : p.parts) {
    p.source.insert(p.source.end(), part.begin(), part.end());
    part.push_back(ids_.eos);
  }
}

void Translator::translate_window(std::vector<Pending>& window, const TranslatorOutput& out) {
  if (window.empty()) return;
  // What is searched: each line's source, or each part of a long line's. A part's random stream (for
  // sampling) is its line's with the part number above bit 40, so a line's first part keeps its line's.
  // A split line's later parts have no prefix and, with alternatives, give one hypothesis each (the
  // line's alternatives are its first part's, each joined with the rest): they are searched in batches
  // of their own, with options of their own.
  SearchOptions rest_options = options_.search;
  rest_options.alternatives = 0;
  struct Segment {
    size_t item, part;
    const std::vector<int32_t>* source;
    uint64_t stream;
    bool rest;  // searched with rest_options
  };
  std::vector<Segment> segments;
  const bool alternatives = options_.search.alternatives > 0;
  for (size_t i = 0; i < window.size(); ++i) {
    if (!window[i].translate) continue;
    if (window[i].parts.empty()) segments.push_back({i, 0, &window[i].source, window[i].line, false});
    for (size_t k = 0; k < window[i].parts.size(); ++k)
      segments.push_back({i, k, &window[i].parts[k], window[i].line | (uint64_t{k} << 40), alternatives && k > 0});
  }
  std::vector<size_t> order(segments.size());
  std::iota(order.begin(), order.end(), size_t{0});
  // Longest first: the first batch sizes the decoding arenas and the later ones fit in them. Shortest
  // first grew them on every batch, and each new buffer's pages were faulted in and zeroed again (7 % of
  // the tiny Multi30k model's beam search). The outputs do not depend on the batches (batch-invariant).
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    if (segments[a].rest != segments[b].rest) return segments[b].rest;
    return segments[a].source->size() > segments[b].source->size();
  });
  struct Batch {
    size_t first = 0;  // into order
    bool rest = false;
    std::vector<std::vector<int32_t>> sources;
    SearchInputs inputs;  // streams: each source's input line (its random stream when sampling)
  };
  std::vector<Batch> batches;
  bool any_prefix = false, any_constraints = false;
  for (const Pending& p : window) {
    any_prefix = any_prefix || !p.prefix.empty();
    any_constraints = any_constraints || !p.constraints.empty();
  }
  for (size_t i = 0; i < order.size();) {
    Batch batch{i, segments[order[i]].rest, {}, {}};
    size_t longest = 0, j = i;
    for (; j < order.size() && batch.sources.size() < static_cast<size_t>(options_.batch_size); ++j) {
      const Segment& s = segments[order[j]];
      const size_t len = std::max(longest, s.source->size());
      if (s.rest != batch.rest) break;
      if (options_.batch_tokens > 0 && !batch.sources.empty() &&
          len * (batch.sources.size() + 1) > static_cast<size_t>(options_.batch_tokens))
        break;
      longest = len;
      batch.sources.push_back(*s.source);
      batch.inputs.streams.push_back(s.stream);
      if (any_prefix) batch.inputs.prefixes.push_back(s.part == 0 ? window[s.item].prefix : std::vector<int32_t>{});
      if (any_constraints) batch.inputs.constraints.push_back(s.part == 0 ? window[s.item].constraints : Constraints{});
    }
    batches.push_back(std::move(batch));
    i = j;
  }
  std::vector<std::vector<Hypothesis>> searched(segments.size());
  // Each worker takes the next batch until none is left; each writes only its batches' results.
  std::atomic<size_t> next{0};
  std::vector<std::exception_ptr> failures(scorers_.size());
  auto work = [&](size_t w) {
    try {
      for (size_t b; (b = next.fetch_add(1)) < batches.size();) {
        const Batch& batch = batches[b];
        auto r = search(*scorers_[w], batch.sources, batch.rest ? rest_options : options_.search, ids_, batch.inputs);
        for (size_t k = 0; k < r.size(); ++k) searched[order[batches[b].first + k]] = std::move(r[k]);
      }
    } catch (...) {
      failures[w] = std::current_exception();
      next = batches.size();  // the others stop after their current batch
    }
  };
  std::vector<std::thread> helpers;
  try {
    for (size_t w = 1; w < std::min(scorers_.size(), batches.size()); ++w) helpers.emplace_back(work, w);
  } catch (...) {  // no thread for this worker (resources): those started finish, the error goes up
    next = batches.size();
    for (auto& t : helpers) t.join();
    throw;
  }
  work(0);
  for (auto& t : helpers) t.join();
  for (auto& f : failures)
    if (f) std::rethrow_exception(f);
  std::vector<std::vector<Hypothesis>> results(window.size());
  for (size_t s = 0; s < segments.size();) {  // a line's segments are consecutive, its parts in order
    size_t e = s + 1;
    while (e < segments.size() && segments[e].item == segments[s].item) ++e;
    if (e - s == 1) {
      results[segments[s].item] = std::move(searched[s]);
    } else {
      std::vector<std::vector<Hypothesis>> parts(searched.begin() + static_cast<std::ptrdiff_t>(s),
                                                 searched.begin() + static_cast<std::ptrdiff_t>(e));
      results[segments[s].item] = join_parts(parts, window[segments[s].item].parts, options_.search.attention);
    }
    s = e;
  }
  const bool nbest = options_.search.nbest > 1 || alternatives;
  char buf[32];
  for (size_t i = 0; i < window.size(); ++i) {
    const Pending& p = window[i];
    std::string text;
    const auto& hyps = results[i];
    const int source_size = static_cast<int>(p.source.size());
    if (p.translate && hyps.front().log_prob == -std::numeric_limits<float>::infinity() && out.warn)
      out.warn("line " + std::to_string(p.line) +
               ": the model gave no finite score to any continuation (its weights overflow); the line is left empty");
    if (out.hypotheses) out.hypotheses(p.line, p.source, p.translate ? hyps : std::vector<Hypothesis>(1));
    if (nbest) {
      const size_t n = p.translate ? hyps.size() : 1;
      for (size_t k = 0; k < n; ++k) {
        std::snprintf(buf, sizeof buf, "%.6f", p.translate ? static_cast<double>(hyps[k].score) : 0.0);
        text += std::to_string(p.line) + " ||| " + (p.translate ? render(hyps[k].tokens) : "") + " ||| " + buf;
        if (options_.alignment != AlignmentFormat::none)
          text += " ||| " + (p.translate ? alignment(hyps[k], source_size) : "");
        text += '\n';
      }
    } else {
      if (p.translate) {
        text = render(hyps.front().tokens);
        if (options_.alignment != AlignmentFormat::none) text += " ||| " + alignment(hyps.front(), source_size);
      }
      text += '\n';
    }
    out.text(text);
    if (out.scores) {
      std::snprintf(buf, sizeof buf, "%.6f\n", p.translate ? static_cast<double>(hyps.front().score) : 0.0);
      out.scores(buf);
    }
  }
  window.clear();
  if (out.flush) out.flush();
}

}  // namespace tt::decode
