// The batched translation pipeline behind tt-translate: lines in (text, SentencePiece pieces or ids),
// lines out, one per line, in input order. Lines are read a window at a time (window * batch_size
// sentences), sorted by length within the window, cut into batches of at most batch_size sentences and
// batch_tokens padded source tokens, searched, and written back in input order — memory stays flat on any
// input size. flush: each line is translated and written as soon as it is read. Empty line -> empty line.
#pragma once

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "io/vocabulary.h"
#include "decode/search.h"
#include "decode/shortlist.h"
#include "decode/target_inputs.h"
#include "nn/transformer.h"
#include "util/text_io.h"

namespace tt::decode {

enum class TextFormat { text, pieces, ids };
enum class AlignmentFormat { none, hard, soft };

TextFormat parse_text_format(const std::string& name);  // text, pieces, ids

// The ids of a line of `format` text (through `spm`), pieces (through `spm`; without it, pad) or ids
// (each in [0, vocab)); a bad id is a tt::FormatError naming `where` and `side` ("source", "target").
std::vector<int32_t> line_ids(const std::string& line, TextFormat format, const io::Vocabulary* spm, int vocab,
                              int32_t pad, const std::string& where, const char* side);
AlignmentFormat parse_alignment_format(const std::string& name);  // none, hard, soft

struct TranslatorOptions {
  SearchOptions search;
  TextFormat input_format = TextFormat::text;
  TextFormat output_format = TextFormat::text;
  int batch_size = 32;
  int batch_tokens = 0;  // 0: no limit
  int window = 16;       // batches per sorting window
  int max_src_len = 256;  // pieces (without </s>); a longer line is searched in parts (decode/long_lines.h)
  bool split_long_lines = true;  // false: truncate a longer line to max_src_len, with a warning
  bool flush = false;
  bool skip_invalid = false;  // invalid UTF-8: warn and write an empty line instead of failing
  AlignmentFormat alignment = AlignmentFormat::none;
  // A vocabulary shortlist (shortlist.h): each batch's output layer over its shortlisted pieces only.
  std::shared_ptr<const Shortlist> shortlist;
  // How messages name the options (a tool passes its flags: "--max-src-len").
  std::string max_src_len_name = "max_src_len";
  std::string skip_invalid_name = "skip_invalid";
};

struct TranslatorOutput {
  std::function<void(const std::string&)> text;    // one output line at a time, with its '\n'
  std::function<void(const std::string&)> scores;  // the best score of each line, with '\n' (may be empty)
  std::function<void(const std::string&)> warn;    // warnings, one message each
  std::function<void()> flush;                     // after each window (or line, with flush)
  // Optional, for tools that need more than the text (tt-attnviz): each line's source ids (with </s>;
  // empty for an empty or skipped line) and hypotheses (best first; one empty one for such a line), in
  // input order, just before that line's text.
  std::function<void(size_t line, const std::vector<int32_t>& source, const std::vector<Hypothesis>& hyps)> hypotheses;
};

class Translator {
 public:
  // models: one or more (an ensemble); target vocabulary checked. The tokenizers are needed for text
  // input / output only (may be null otherwise). Keeps references: they must outlive the translator.
  Translator(const std::vector<nn::Transformer*>& models, const io::Vocabulary* source_spm,
             const io::Vocabulary* target_spm, TranslatorOptions options);

  // One more decoding worker: the same models (in the same order) on another backend, e.g. made with
  // nn::Transformer's weight-sharing constructor. The batches of a window are then searched by all
  // workers at once, one batch each at a time, longest first. The output does not change where every
  // backend is batch-invariant (the CPU's): a batch's result does not depend on who searched it.
  void add_worker(const std::vector<nn::Transformer*>& models);
  int workers() const { return static_cast<int>(scorers_.size()); }

  // Translates every line of `in`; returns the number of lines read. inputs (target_inputs.h): per line of
  // `in`, a prefix its translation starts with (a split line's first part takes it; one too long for the
  // model is cut, with a warning) and terminology constraints (search.h; a split line's first part takes
  // them; phrases that cannot fit within the length limit are left out, each with a warning).
  size_t run(util::LineReader& in, const TranslatorOutput& out, const TranslatorInputs& inputs = {});

  // The source ids of one input line (without </s>); throws tt::FormatError naming `where` for bad input.
  std::vector<int32_t> encode(const std::string& line, const std::string& where) const;
  // A hypothesis in the output format (no alignment, no newline).
  std::string render(const std::vector<int32_t>& tokens) const;
  // Marian's alignment formats over `source_size` source ids (incl. </s>): hard "s-t s-t ..." (argmax
  // source piece of each target piece, </s> left out on both sides), soft: one comma-separated row of
  // source weights per target token (incl. </s>), rows separated by spaces.
  std::string alignment(const Hypothesis& h, int source_size) const;

 private:
  struct Pending {
    size_t line = 0;  // 0-based
    bool translate = false;
    std::vector<int32_t> source;              // with </s>; of a split line: its parts' ids, then </s>
    std::vector<std::vector<int32_t>> parts;  // a line longer than max_src_len: its parts, each with </s>
    std::vector<int32_t> prefix;              // target ids its translation starts with
    Constraints constraints;                  // phrases its translation must hold
  };
  // The target ids of a prefix or phrase in the input format; tt::FormatError naming `where`.
  std::vector<int32_t> encode_target(const std::string& text, const std::string& where) const;
  // p's prefix and constraints from `t`, cut or thinned to fit its first part's length limit, with warnings.
  void set_targets(Pending& p, LineTargets t, const std::string& where, const TranslatorOutput& out) const;
  // Splits p's source (from `line`) into parts of at most max_src_len (decode/long_lines.h).
  void split(Pending& p, const std::string& line, const std::string& where) const;
  void translate_window(std::vector<Pending>& window, const TranslatorOutput& out);

  std::vector<nn::Transformer*> models_;
  const io::Vocabulary* source_spm_;
  const io::Vocabulary* target_spm_;
  TranslatorOptions options_;
  std::vector<std::unique_ptr<EnsembleScorer>> scorers_;  // one per worker
  SpecialIds ids_;
  int source_vocab_ = 0, target_vocab_ = 0, max_positions_ = 0;
};

}  // namespace tt::decode
