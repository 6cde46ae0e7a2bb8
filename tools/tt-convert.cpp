// tt-convert: model files in other forms. `quantize` stores a model's product weights as int8 or bf16
// (io/quantized_model.h); `export-ct2` writes a CTranslate2 model directory (io/ct2_export.h);
// `import-marian` reads a Hugging Face MarianMTModel directory (OPUS-MT) into a tt one (io/marian_import.h);
// `shortlist` counts a parallel corpus into a vocabulary shortlist for tt-translate (io/shortlist_corpus.h).
#include <cstdio>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/run_tool.h"
#include "io/ct2_export.h"
#include "io/marian_import.h"
#include "io/quantized_model.h"
#include "io/shortlist_corpus.h"
#include "util/file_kind.h"
#include "util/error.h"

namespace {

const char* const kSubcommands = "quantize, export-ct2, import-marian or shortlist";

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tt-convert: error: " << message << "\n"
            << "Run 'tt-convert --help' for usage.\n";
  throw tt::cli::ExitRequest{2};
}

struct Paths {
  std::string model, output;
  bool force = false;
};

void add_paths(CLI::App* sub, Paths& p, const std::string& output_help,
               const std::string& input_help = "tt model directory (config.json, model.safetensors)",
               const std::string& input_name = "MODEL") {
  sub->add_option("model", p.model, input_help)->required()->type_name(input_name);
  sub->add_option("-o,--output", p.output, output_help)->required()->type_name("OUT");
  sub->add_flag("--force", p.force, "Replace OUT if it exists (only an empty directory or one of the same kind)");
}

int export_ct2(const Paths& p, bool quiet) {
  tt::io::Ct2ExportOptions options;
  options.replace = p.force;
  const tt::io::Ct2ExportResult r = tt::io::export_ct2(p.model, p.output, options);
  if (!quiet) {
    std::cerr << "tt-convert: wrote " << p.output << " (CTranslate2: " << r.variables << " variables, " << r.aliases
              << (r.aliases == 1 ? " alias; " : " aliases; ");
    for (size_t i = 0; i < r.files.size(); ++i) std::cerr << (i ? ", " : "") << r.files[i];
    std::cerr << ")\n";
    if (r.named_ids)
      std::cerr << "tt-convert: note: the model has no SentencePiece model; its vocabulary names the ids "
                   "<pad> <unk> <s> </s> t4 t5 ...\n";
  }
  return 0;
}

int import_marian(const Paths& p, bool quiet) {
  tt::io::MarianImportOptions options;
  options.replace = p.force;
  const tt::io::MarianImportResult r = tt::io::import_marian(p.model, p.output, options);
  if (!quiet) {
    const tt::nn::ModelConfig& c = r.config;
    std::cerr << "tt-convert: wrote " << p.output << " (" << r.tensors << " tensors, " << c.parameter_count()
              << " parameters: " << c.n_layers_enc << "+" << c.n_layers_dec << " layers, d_model " << c.d_model
              << ", " << tt::nn::activation_name(c.activation) << ", vocabulary " << c.vocab_size_src
              << (c.shared_vocab ? " shared" : "/" + std::to_string(c.vocab_size_tgt))
              << (c.output_bias ? ", logits bias" : "") << "; ";
    for (size_t i = 0; i < r.files.size(); ++i) std::cerr << (i ? ", " : "") << r.files[i];
    std::cerr << ")\n";
  }
  return 0;
}

std::string megabytes(int64_t bytes) {
  char text[32];
  std::snprintf(text, sizeof text, "%.1f MB", static_cast<double>(bytes) / 1e6);
  return text;
}

int quantize(const Paths& p, const std::string& type, bool quiet) {
  const tt::io::QuantizeResult r = tt::io::quantize_model_dir(p.model, p.output, type, p.force);
  if (!quiet)
    std::cerr << "tt-convert: wrote " << p.output << " (" << r.quantized << " weight matrices as " << type << "; "
              << "weights " << megabytes(r.bytes_in) << " -> " << megabytes(r.bytes_out) << ")\n";
  return 0;
}

struct ShortlistFlags {
  std::string model, output;
  std::vector<std::string> train;  // SRC TGT
  tt::io::ShortlistCorpusOptions options;
  bool force = false;
};

int shortlist(ShortlistFlags& f, bool quiet) {
  if (f.output.empty()) f.output = f.model + "/shortlist.txt";
  if (!f.force && tt::util::regular_file_exists(f.output))
    throw tt::UsageError(f.output + " exists", "pass --force to replace it, or -o another file");
  const tt::io::ShortlistCorpusResult r = tt::io::build_shortlist(f.model, f.train[0], f.train[1], f.options);
  r.shortlist.save(f.output);
  if (!quiet)
    std::cerr << "tt-convert: wrote " << f.output << " (" << r.pairs << " sentence pairs; the "
              << r.shortlist.frequent() << " most frequent target pieces and up to " << r.shortlist.best_per_source()
              << " per source piece)\n";
  return 0;
}

int convert_main(int argc, char** argv) {
  CLI::App app{"Convert model files: quantize a tt model's weights, export it to CTranslate2, import a Marian model, "
               "build a vocabulary shortlist."};
  tt::cli::configure_app(app, "tt-convert");
  app.require_subcommand(0, 1);
  app.fallthrough();
  tt::cli::CommonOptions common;
  tt::cli::add_quiet_flag(app, common, "Print nothing on stderr but errors");

  Paths q;
  std::string type;
  auto* quantize_cmd = app.add_subcommand("quantize", "Store the weights of the products as int8 or bf16 (tt-translate loads them as they are)");
  add_paths(quantize_cmd, q, "Write the quantized model directory here");
  quantize_cmd->add_option("--type", type, "int8 (one scale per row) or bf16")
      ->required()
      ->check(CLI::IsMember({"int8", "bf16"}));

  Paths ct2;
  auto* ct2_cmd = app.add_subcommand("export-ct2", "Write a CTranslate2 model directory (model.bin, config.json, vocabulary)");
  add_paths(ct2_cmd, ct2, "Write the CTranslate2 model directory here");

  Paths marian;
  auto* marian_cmd = app.add_subcommand("import-marian", "Write a tt model directory from a Hugging Face MarianMTModel directory (OPUS-MT)");
  add_paths(marian_cmd, marian, "Write the tt model directory here",
            "MarianMTModel directory (config.json, model.safetensors, source.spm, target.spm, vocab.json)", "HF_DIR");

  ShortlistFlags sl;
  auto* shortlist_cmd = app.add_subcommand(
      "shortlist", "Count a parallel corpus into a vocabulary shortlist (tt-translate reads it)");
  shortlist_cmd->add_option("model", sl.model, "tt model directory (its SentencePiece models read the corpus)")
      ->required()->type_name("MODEL");
  shortlist_cmd->add_option("--train", sl.train, "The parallel corpus: source file, then target file (text)")
      ->required()->expected(2)->type_name("SRC TGT");
  shortlist_cmd->add_option("-o,--output", sl.output, "Write the shortlist here (default: MODEL/shortlist.txt)")
      ->type_name("FILE");
  shortlist_cmd->add_option("--frequent", sl.options.frequent, "Target pieces every batch keeps: the most frequent")
      ->check(CLI::Range(0, 1 << 24))->capture_default_str();
  shortlist_cmd->add_option("--best", sl.options.best, "Target pieces kept per source piece")
      ->check(CLI::Range(1, 1 << 24))->capture_default_str();
  shortlist_cmd->add_option("--max-lines", sl.options.max_lines, "Count the first N pairs only (0: all)")
      ->check(CLI::Range(int64_t{0}, int64_t{1} << 40))->capture_default_str();
  shortlist_cmd->add_flag("--force", sl.force, "Replace the output file if it exists");

  const std::string first = argc > 1 ? argv[1] : "-";
  if (first[0] != '-' && first != "quantize" && first != "export-ct2" && first != "import-marian" &&
      first != "shortlist")
    usage_error("unknown subcommand '" + first + "' (expected " + kSubcommands + ")");
  tt::cli::parse(app, argc, argv);
  if (app.get_subcommands().empty()) usage_error(std::string("a subcommand is required: ") + kSubcommands);
  if (*quantize_cmd) return quantize(q, type, common.quiet);
  if (*marian_cmd) return import_marian(marian, common.quiet);
  if (*shortlist_cmd) return shortlist(sl, common.quiet);
  return export_ct2(ct2, common.quiet);
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_tool("tt-convert", argc, argv, &convert_main); }
