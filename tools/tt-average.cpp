// tt-average: the element-wise mean of several checkpoints' weights as one model directory, from named
// directories or from the last / best N checkpoints of a tt-train run.
#include <cstdio>
#include <filesystem>
#include <iostream>
#include <string>
#include <vector>

#include "cli/app.h"
#include "cli/common_options.h"
#include "cli/run_tool.h"
#include "cli/validators.h"
#include "io/average.h"
#include "io/checkpoint_selection.h"
#include "util/error.h"

namespace {

[[noreturn]] void usage_error(const std::string& message) {
  std::cerr << "tt-average: error: " << message << "\n"
            << "Run 'tt-average --help' for usage.\n";
  throw tt::cli::ExitRequest{2};
}

std::string format_bleu(double bleu) {
  char text[32];
  std::snprintf(text, sizeof text, "%.2f", bleu);
  return text;
}

int average_main(int argc, char** argv) {
  CLI::App app{"Average the weights of checkpoints (model directories of one training run) into one model\n"
               "directory. Name the directories, or pick the last or best N checkpoints of a tt-train run."};
  tt::cli::configure_app(app, "tt-average");
  std::vector<std::string> dirs;
  std::string output, log;
  int last = 0, best = 0;
  bool force = false;
  tt::cli::CommonOptions common;
  app.add_option("dirs", dirs, "Model directories to average; with --last or --best, one run directory")
      ->type_name("DIR");
  app.add_option("-o,--output", output, "Write the averaged model directory here")->required()->type_name("OUT");
  auto* last_option = app.add_option("--last", last, "Average the N latest checkpoints of the run")
                          ->check(tt::cli::positive)
                          ->type_name("N");
  auto* best_option = app.add_option("--best", best, "Average the N checkpoints with the best validation BLEU")
                          ->check(tt::cli::positive)
                          ->type_name("N");
  last_option->excludes(best_option);
  app.add_option("--log", log, "Validation log for --best (default: RUN_DIR/log.jsonl)")
      ->needs(best_option)
      ->type_name("FILE");
  app.add_flag("--force", force, "Replace OUT if it exists (only a model directory or an empty one)");
  tt::cli::add_quiet_flag(app, common, "Print nothing on stderr but errors");
  tt::cli::parse(app, argc, argv);

  const bool from_run = last > 0 || best > 0;
  if (from_run && dirs.size() != 1)
    usage_error(std::string(last > 0 ? "--last" : "--best") + " takes exactly one run directory (got " +
                std::to_string(dirs.size()) + ")");
  if (!from_run && dirs.empty()) usage_error("no model directories to average (or use --last N / --best N RUN_DIR)");

  std::error_code ec;
  // A directory there would pass for a checkpoint of the run: the next --last N would average it.
  const std::filesystem::path where = std::filesystem::weakly_canonical(std::filesystem::absolute(output), ec);
  if (where.parent_path().filename() == "checkpoints")
    usage_error("-o " + output + " lies inside a training run's checkpoints/ folder, where it would pass for a "
                "checkpoint; write the average beside the run instead");
  if (!force && std::filesystem::exists(std::filesystem::symlink_status(output, ec)))
    throw tt::IoError("output directory " + output + " already exists",
                      "choose a new directory, or pass --force to replace it");

  std::vector<std::string> sources;
  std::vector<std::string> labels;  // what is printed for each source
  if (from_run) {
    const tt::io::CheckpointSelection selection =
        last > 0 ? tt::io::select_last_checkpoints(dirs[0], last) : tt::io::select_best_checkpoints(dirs[0], best, log);
    if (!common.quiet)
      for (const auto& note : selection.notes) std::cerr << "tt-average: note: " << note << "\n";
    for (const auto& c : selection.checkpoints) {
      sources.push_back(c.dir);
      labels.push_back(c.bleu ? c.dir + "  (bleu " + format_bleu(*c.bleu) + ")" : c.dir);
    }
  } else {
    sources = labels = dirs;
  }

  tt::io::AverageOptions options;
  options.replace = force;
  const tt::io::AverageResult result = tt::io::average_model_dirs(output, sources, options);
  if (!common.quiet) {
    std::cerr << "tt-average: averaged " << sources.size() << (sources.size() == 1 ? " checkpoint:\n" : " checkpoints:\n");
    for (const auto& label : labels) std::cerr << "  " << label << "\n";
    std::cerr << "tt-average: wrote " << output << " (" << result.tensors << (result.tensors == 1 ? " tensor, " : " tensors, ")
              << result.parameters << " parameters";
    for (const auto& name : result.vocab_files) std::cerr << ", " << name;
    std::cerr << ")\n";
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv) { return tt::cli::run_tool("tt-average", argc, argv, &average_main); }
