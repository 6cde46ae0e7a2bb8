// tt-tokenize: train and apply SentencePiece subword models, as a Unix filter.
//   tt-tokenize train  --input FILE... --model-prefix PREFIX --vocab-size N   -> PREFIX.model, PREFIX.vocab
//   tt-tokenize encode --model M [--format piece|id]    stdin text   -> stdout subwords (one line per line)
//   tt-tokenize decode --model M [--format piece|id]    stdin subwords -> stdout text
//   tt-tokenize vocab  --model M                        id<TAB>piece<TAB>score
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <charconv>
#include <iostream>
#include <sstream>
#include <thread>

#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/flag_names.h"
#include "cli/input_files.h"
#include "cli/run_tool.h"
#include "data/line_pipeline.h"
#include "data/spm_ids.h"
#include "data/spm_tokenizer.h"
#include "data/spm_trainer.h"
#include "util/error.h"
#include "util/text_io.h"

namespace {

using tt::data::SpmTokenizer;

int default_threads() {
  unsigned n = std::thread::hardware_concurrency();
  return static_cast<int>(std::clamp(n, 1u, 8u));
}

struct FilterArgs {
  std::string model;
  std::string format = "piece";
  std::string extra_options;
  int threads = default_threads();
  // encode only
  int nbest = 0;
  float alpha = 0.0f;
  int nbest_size = -1;
  uint32_t seed = 0;
};

void check_utf8(const std::string& line) {
  size_t bad = 0;
  if (!tt::util::is_valid_utf8(line, &bad)) {
    throw tt::FormatError("invalid UTF-8 at byte " + std::to_string(bad + 1),
                          "tt-tokenize reads UTF-8 text; convert the input (e.g. iconv -t UTF-8)");
  }
}

void append_pieces(const std::vector<std::string>& pieces, std::string& out) {
  for (size_t i = 0; i < pieces.size(); ++i) {
    if (i) out += ' ';
    out += pieces[i];
  }
}

void append_ids(const std::vector<int>& ids, std::string& out) {
  char buf[16];
  for (size_t i = 0; i < ids.size(); ++i) {
    if (i) out += ' ';
    auto r = std::to_chars(buf, buf + sizeof buf, ids[i]);
    out.append(buf, r.ptr);
  }
}

size_t run_filter(const FilterArgs& args, const tt::data::LineFunction& fn) {
  tt::util::LineReader reader("-");
  tt::data::LinePipelineOptions options;
  options.threads = args.threads;
  size_t n = tt::data::run_line_pipeline(
      reader, fn, [](const std::string& text) { tt::util::write_stdout(text); }, options);
  tt::util::flush_stdout();
  return n;
}

int encode(const FilterArgs& args, bool sampling, bool seeded) {
  SpmTokenizer tokenizer = SpmTokenizer::load(args.model);
  if (!args.extra_options.empty()) tokenizer.set_encode_extra_options(args.extra_options);
  if (seeded) tt::data::set_sampling_seed(args.seed);
  const bool ids = args.format == "id";
  run_filter(args, [&](const std::string& line, std::string& out) {
    check_utf8(line);
    if (args.nbest > 0) {
      // Several segmentations of one line stay on one line (TAB-separated): line counts are preserved.
      if (ids) {
        auto hyps = tokenizer.nbest_encode_ids(line, args.nbest);
        for (size_t i = 0; i < hyps.size(); ++i) {
          if (i) out += '\t';
          append_ids(hyps[i], out);
        }
      } else {
        auto hyps = tokenizer.nbest_encode_pieces(line, args.nbest);
        for (size_t i = 0; i < hyps.size(); ++i) {
          if (i) out += '\t';
          append_pieces(hyps[i], out);
        }
      }
    } else if (ids) {
      std::vector<int> result;
      if (sampling) tokenizer.sample_encode_ids(line, args.nbest_size, args.alpha, result);
      else tokenizer.encode_ids(line, result);
      append_ids(result, out);
    } else {
      std::vector<std::string> result;
      if (sampling) tokenizer.sample_encode_pieces(line, args.nbest_size, args.alpha, result);
      else tokenizer.encode_pieces(line, result);
      append_pieces(result, out);
    }
  });
  return 0;
}

int decode(const FilterArgs& args) {
  SpmTokenizer tokenizer = SpmTokenizer::load(args.model);
  if (!args.extra_options.empty()) tokenizer.set_decode_extra_options(args.extra_options);
  const bool ids = args.format == "id";
  run_filter(args, [&](const std::string& line, std::string& out) {
    if (!ids) {
      check_utf8(line);
      out += tokenizer.decode_pieces(tt::data::split_tokens(line));
      return;
    }
    std::vector<int> values;
    tt::data::parse_id_line(line, values);
    out += tokenizer.decode_ids(values);
  });
  return 0;
}

int vocab(const std::string& model) {
  SpmTokenizer tokenizer = SpmTokenizer::load(model);
  std::ostringstream os;
  for (int id = 0; id < tokenizer.piece_size(); ++id) {
    os << id << '\t' << tokenizer.id_to_piece(id) << '\t' << tokenizer.score(id) << '\n';
  }
  tt::util::write_stdout(os.str());
  tt::util::flush_stdout();
  return 0;
}

int train(const tt::data::SpmTrainOptions& options, bool quiet) {
  tt::cli::check_input_files(options.inputs);
  // Talk only to a person watching: a pipeline or a log stays silent unless --verbose.
  const bool talk = !quiet && !options.verbose && ::isatty(STDERR_FILENO);
  if (talk) std::cerr << "tt-tokenize: training a " << options.model_type << " model...\n";
  auto summary = tt::data::train_spm(options);
  if (talk || options.verbose) {
    std::cerr << "tt-tokenize: wrote " << summary.model_path << " and " << summary.vocab_path << " ("
              << summary.piece_size << " pieces, trained on " << summary.sentences_used << " of "
              << summary.sentences_eligible << " sentences)\n";
  }
  return 0;
}

void add_filter_options(CLI::App* sub, FilterArgs& args) {
  sub->add_option("-m,--model", args.model, "SentencePiece model (PREFIX.model)")->type_name("FILE")->required();
  sub->add_option("--format", args.format, "Subword format: piece or id")
      ->check(CLI::IsMember({"piece", "id"}))
      ->capture_default_str();
  sub->add_option("--threads", args.threads, "Worker threads (output order is preserved)")
      ->check(CLI::Range(1, tt::cli::max_threads))
      ->capture_default_str();
  sub->add_option("--extra-options", args.extra_options, "SentencePiece extra options, e.g. bos:eos or reverse");
}

void add_train_options(CLI::App* sub, tt::data::SpmTrainOptions& o, bool& quiet) {
  // Existence is checked in train(): a missing file is exit 1 (a file problem), not a usage error.
  sub->add_option("-i,--input", o.inputs, "Training text, one sentence per line (several: joint vocabulary)")
      ->type_name("FILE")
      ->required();
  sub->add_option("-o,--model-prefix", o.model_prefix, "Output prefix")->type_name("PATH")->required();
  sub->add_option("--vocab-size", o.vocab_size, "Vocabulary size")->required();
  sub->add_option("--model-type", o.model_type, "unigram, bpe, char or word")
      ->check(CLI::IsMember({"unigram", "bpe", "char", "word"}))
      ->capture_default_str();
  sub->add_option("--character-coverage", o.character_coverage, "Share of characters covered by the alphabet")
      ->capture_default_str();
  sub->add_option("--input-sentence-size", o.input_sentence_size,
                  "Train on a random sample of this many sentences (0: all)")
      ->capture_default_str();
  sub->add_option("--user-defined-symbols", o.user_defined_symbols, "Symbols always kept as one piece (a,b,...)")
      ->delimiter(',');
  sub->add_flag("--byte-fallback", o.byte_fallback, "Spell unknown characters as UTF-8 bytes");
  sub->add_option("--max-sentence-length", o.max_sentence_length, "Skip training lines longer than this (bytes)")
      ->capture_default_str();
  sub->add_option("--normalization", o.normalization, "nmt_nfkc, nfkc, nmt_nfkc_cf, nfkc_cf or identity")
      ->capture_default_str();
  sub->add_option("--threads", o.threads, "Training threads")->check(CLI::Range(1, 128))->capture_default_str();
  sub->add_option("--seed", o.seed, "Seed for --input-sentence-size sampling")->capture_default_str();
  sub->add_flag("-v,--verbose", o.verbose, "Show SentencePiece's training log");
  sub->add_flag("-q,--quiet", quiet, "Print nothing on success");
}

int tokenize_main(int argc, char** argv) {
  CLI::App app{"Train and apply SentencePiece subword models (stdin -> stdout)."};
  tt::cli::configure_app(app, "tt-tokenize");
  // At most one subcommand; a missing one is reported below, after CLI11 has named any unknown flag.
  app.require_subcommand(0, 1);
  // `tt-tokenize encode --version` reaches the top-level --version flag.
  app.fallthrough();

  tt::data::SpmTrainOptions train_options;
  train_options.threads = default_threads();
  bool quiet = false;
  auto* train_cmd = app.add_subcommand("train", "Train a model: writes PREFIX.model and PREFIX.vocab");
  add_train_options(train_cmd, train_options, quiet);

  FilterArgs encode_args;
  auto* encode_cmd = app.add_subcommand("encode", "Encode text from stdin into subwords on stdout");
  add_filter_options(encode_cmd, encode_args);
  auto* nbest = encode_cmd->add_option("--nbest", encode_args.nbest, "Write the N best segmentations, TAB-separated")
                    ->check(CLI::Range(1, 1000));
  auto* alpha = encode_cmd->add_option("--alpha", encode_args.alpha,
                                       "Sample segmentations (subword regularisation, BPE-dropout)")
                    ->check(CLI::Range(0.0f, 1000.0f));
  encode_cmd->add_option("--nbest-size", encode_args.nbest_size, "With --alpha: sample from the N best (-1: all)")
      ->capture_default_str()
      ->needs(alpha);
  auto* seed = encode_cmd->add_option("--seed", encode_args.seed, "With --alpha: seed (reproducible per --threads)")
                   ->needs(alpha);
  nbest->excludes(alpha);

  FilterArgs decode_args;
  auto* decode_cmd = app.add_subcommand("decode", "Decode subwords from stdin into text on stdout");
  add_filter_options(decode_cmd, decode_args);

  std::string vocab_model;
  auto* vocab_cmd = app.add_subcommand("vocab", "List the vocabulary: id, piece, score");
  vocab_cmd->add_option("-m,--model", vocab_model, "SentencePiece model (PREFIX.model)")
      ->type_name("FILE")
      ->required();

  // CLI11 would report a mistyped subcommand as "A subcommand is required"; name it instead.
  const std::string first = argc > 1 ? argv[1] : "-";
  if (first[0] != '-' && first != "train" && first != "encode" && first != "decode" && first != "vocab") {
    std::cerr << "tt-tokenize: error: unknown subcommand '" << first << "' (expected train, encode, decode or vocab)\n"
              << "Run 'tt-tokenize --help' for usage.\n";
    throw tt::cli::ExitRequest{2};
  }
  tt::cli::parse(app, argc, argv);
  if (app.get_subcommands().empty()) {
    std::cerr << "tt-tokenize: error: a subcommand is required: train, encode, decode or vocab\n"
              << "Run 'tt-tokenize --help' for usage.\n";
    throw tt::cli::ExitRequest{2};
  }
  // The library names options by field; the subcommand's flags name them for the user (-i names `inputs`).
  const tt::cli::FlagNames flags(*app.get_subcommands().front(), {{"inputs", "--input"}});
  return tt::cli::with_flag_names(flags, [&] {
    if (*train_cmd) return train(train_options, quiet);
    if (*encode_cmd) return encode(encode_args, alpha->count() > 0, seed->count() > 0);
    if (*decode_cmd) return decode(decode_args);
    return vocab(vocab_model);
  });
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_filter("tt-tokenize", argc, argv, &tokenize_main); }
