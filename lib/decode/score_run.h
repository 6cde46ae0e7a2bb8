// tt-translate --score: the model's score of given translations instead of a search, line by line. The
// targets come one per source line, or as a Moses n-best list ("i ||| text ||| features ||| ..." with i
// the 0-based source line) whose lines come back with the model's score appended to the features.
// Windows of pairs are sorted by length and scored in batches; output is in input order and does not
// depend on the batch size (CPU).
#pragma once

#include <string>
#include <vector>

#include "decode/forced_score.h"
#include "decode/translator.h"

namespace tt::decode {

struct ScoreRunOptions {
  bool nbest = false;         // the targets are a Moses n-best list
  bool detect = true;         // decide `nbest` from the first target line (looks_like_nbest)
  bool token_scores = false;  // plain lines: append " ||| " and every token's log-probability (</s> last)
  std::string feature = "tt=";  // the n-best feature's name
};

// One output line for a scored pair: "LOG_PROB SCORE" (plain), or the n-best line with " FEATURE SCORE"
// appended to its third field. `failed`: the pair could not be scored (its line says nan).
std::string format_score(const TargetScore& s, const ScoreRunOptions& o, const std::string& nbest_line, bool failed);

// "i ||| text ||| ..." with i a line number: at least three fields, the first an integer.
bool looks_like_nbest(const std::string& line);

class ScoreRun {
 public:
  // `translator` encodes the sources (its input format and options: batch size, window, search penalty);
  // the models score; `target_spm` encodes text targets (null: targets are ids).
  ScoreRun(const std::vector<nn::Transformer*>& models, const Translator& translator,
           const io::Vocabulary* target_spm, const TranslatorOptions& options, ScoreRunOptions score_options);
  // Scores every target of `targets` against its line of `sources`; returns the number of targets.
  size_t run(util::LineReader& sources, util::LineReader& targets, const TranslatorOutput& out);

 private:
  struct Pair {
    std::vector<int32_t> source, target;
    std::string nbest_line;
    bool failed = false;
  };
  void score_window(std::vector<Pair>& window, const TranslatorOutput& out);
  std::vector<int32_t> encode_target(const std::string& text, const std::string& where) const;

  const Translator& translator_;
  const io::Vocabulary* target_spm_;
  TranslatorOptions options_;
  ScoreRunOptions score_options_;
  EnsembleScorer scorer_;
  SpecialIds ids_;
  int target_vocab_ = 0;
};

}  // namespace tt::decode
