#include "decode/score_run.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <numeric>

#include "util/error.h"

namespace tt::decode {

namespace {

std::string number(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.6f", static_cast<double>(x));
  return buf;
}

// The fields of a Moses n-best line: "i ||| text ||| features ..."; false if it has fewer than three.
bool split_nbest(const std::string& line, size_t& id, std::string& text, size_t& features_end) {
  const size_t a = line.find(" ||| ");
  if (a == std::string::npos) return false;
  const size_t b = line.find(" ||| ", a + 5);
  if (b == std::string::npos) return false;
  const auto [end, ec] = std::from_chars(line.data(), line.data() + a, id);
  if (ec != std::errc() || end != line.data() + a) return false;
  text = line.substr(a + 5, b - a - 5);
  const size_t c = line.find(" ||| ", b + 5);
  features_end = c == std::string::npos ? line.size() : c;
  return true;
}

}  // namespace

bool looks_like_nbest(const std::string& line) {
  size_t id = 0, features_end = 0;
  std::string text;
  return split_nbest(line, id, text, features_end);
}

std::string format_score(const TargetScore& s, const ScoreRunOptions& o, const std::string& nbest_line, bool failed) {
  const std::string score = failed ? "nan" : number(s.score);
  if (o.nbest) {
    size_t id = 0, features_end = 0;
    std::string text;
    split_nbest(nbest_line, id, text, features_end);
    std::string line = nbest_line;
    std::string feature(1, ' ');
    feature.append(o.feature).append(1, ' ').append(score);
    line.insert(features_end, feature);
    return line + "\n";
  }
  // (appends: GCC 12 warns falsely, -Wrestrict, on chains of + with temporaries)
  std::string line = failed ? std::string("nan") : number(s.log_prob);
  line.append(1, ' ').append(score);
  if (o.token_scores) {
    line += " |||";
    for (float lp : s.token_log_probs) line.append(1, ' ').append(number(lp));
  }
  return line + "\n";
}

ScoreRun::ScoreRun(const std::vector<nn::Transformer*>& models, const Translator& translator,
                   const io::Vocabulary* target_spm, const TranslatorOptions& options,
                   ScoreRunOptions score_options)
    : translator_(translator), target_spm_(target_spm), options_(options), score_options_(std::move(score_options)),
      scorer_(models), ids_(special_ids(models.front()->config())) {
  target_vocab_ = models.front()->config().vocab_size_tgt;
  options_.max_src_len = std::min(options_.max_src_len, scorer_.max_positions() - 1);
  if (options_.input_format != TextFormat::ids && !target_spm_)
    throw ConfigError("text targets need the target SentencePiece model");
}

std::vector<int32_t> ScoreRun::encode_target(const std::string& text, const std::string& where) const {
  return line_ids(text, options_.input_format, target_spm_, target_vocab_, ids_.pad, where, "target");
}

size_t ScoreRun::run(util::LineReader& sources, util::LineReader& targets, const TranslatorOutput& out) {
  const size_t window_lines = options_.flush ? 1 : static_cast<size_t>(options_.window) * options_.batch_size;
  const int max_len = scorer_.max_positions() - 1;
  std::vector<Pair> window;
  std::string target_line, source_line;
  std::vector<int32_t> source;
  size_t sources_read = 0, count = 0;
  bool source_valid = false;
  auto read_source = [&](size_t upto, const std::string& where) {  // source line `upto` (0-based)
    while (sources_read <= upto) {
      if (!sources.next(source_line))
        throw FormatError(where + ": no source line " + std::to_string(upto + 1) + " in " + sources.name(),
                          "give one source line on the input for every target (or n-best id)");
      ++sources_read;
      const std::string swhere = sources.name() + ":" + std::to_string(sources.line_number());
      source_valid = util::is_valid_utf8(source_line) || options_.input_format == TextFormat::ids;
      if (!source_valid) {
        if (!options_.skip_invalid) throw FormatError(swhere + ": invalid UTF-8");
        if (out.warn) out.warn(swhere + ": invalid UTF-8; its scores are nan");
        continue;
      }
      source = translator_.encode(source_line, swhere);
      if (static_cast<int>(source.size()) > options_.max_src_len) {
        if (out.warn)
          out.warn(swhere + ": " + std::to_string(source.size()) + " source pieces, more than the model reads at once (" +
                   std::to_string(options_.max_src_len) + "); its scores are nan");
        source_valid = false;
      }
      source.push_back(ids_.eos);
    }
  };
  while (targets.next(target_line)) {
    const std::string where = targets.name() + ":" + std::to_string(targets.line_number());
    if (count == 0 && score_options_.detect) score_options_.nbest = looks_like_nbest(target_line);
    Pair p;
    std::string text = target_line;
    if (score_options_.nbest) {
      size_t id = 0, features_end = 0;
      if (!split_nbest(target_line, id, text, features_end))
        throw FormatError(where + ": not a Moses n-best line (i ||| text ||| features ...)");
      if (id + 1 < sources_read)
        throw FormatError(where + ": n-best id " + std::to_string(id) + " comes after id " +
                          std::to_string(sources_read - 1), "an n-best list is ordered by its ids");
      read_source(id, where);
      p.nbest_line = target_line;
    } else {
      read_source(count, where);
    }
    p.source = source;
    p.failed = !source_valid;
    if (!p.failed && !util::is_valid_utf8(text) && options_.input_format != TextFormat::ids) {
      if (!options_.skip_invalid) throw FormatError(where + ": invalid UTF-8");
      if (out.warn) out.warn(where + ": invalid UTF-8; its scores are nan");
      p.failed = true;
    }
    if (!p.failed) p.target = encode_target(text, where);
    if (!p.failed && static_cast<int>(p.target.size()) > max_len) {
      if (out.warn)
        out.warn(where + ": a target of " + std::to_string(p.target.size()) + " pieces, longer than the model's " +
                 std::to_string(max_len) + "; its scores are nan");
      p.failed = true;
    }
    window.push_back(std::move(p));
    ++count;
    if (window.size() >= window_lines) score_window(window, out);
  }
  score_window(window, out);
  if (!score_options_.nbest && sources.next(source_line))
    throw FormatError(sources.name() + " has more lines than " + targets.name(),
                      "give one target line for every source line");
  return count;
}

void ScoreRun::score_window(std::vector<Pair>& window, const TranslatorOutput& out) {
  std::vector<size_t> order;
  for (size_t i = 0; i < window.size(); ++i)
    if (!window[i].failed) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](size_t a, size_t b) {
    return window[a].source.size() + window[a].target.size() > window[b].source.size() + window[b].target.size();
  });
  std::vector<TargetScore> scores(window.size());
  for (size_t i = 0; i < order.size(); i += static_cast<size_t>(options_.batch_size)) {
    std::vector<std::vector<int32_t>> sources, targets;
    const size_t end = std::min(order.size(), i + static_cast<size_t>(options_.batch_size));
    for (size_t k = i; k < end; ++k) {
      sources.push_back(window[order[k]].source);
      targets.push_back(window[order[k]].target);
    }
    auto batch = score_targets(scorer_, sources, targets, options_.search, ids_);
    for (size_t k = i; k < end; ++k) scores[order[k]] = std::move(batch[k - i]);
  }
  for (size_t i = 0; i < window.size(); ++i)
    out.text(format_score(scores[i], score_options_, window[i].nbest_line, window[i].failed));
  window.clear();
  if (out.flush) out.flush();
}

}  // namespace tt::decode
