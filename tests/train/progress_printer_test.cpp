// The stderr display: plain lines off a terminal, a redrawn line on one, nothing when quiet.
#include <catch2/catch.hpp>
#include <sstream>

#include "train/progress_printer.h"

using tt::train::ProgressPrinter;

TEST_CASE("format_duration: seconds, minutes, hours", "[progress]") {
  CHECK(tt::train::format_duration(44.6) == "45s");
  CHECK(tt::train::format_duration(725) == "12m05s");
  CHECK(tt::train::format_duration(12000) == "3h20m");
}

TEST_CASE("ProgressPrinter: one plain line per record off a terminal, a live line on one", "[progress]") {
  const nlohmann::json train{{"type", "train"}, {"step", 200}, {"epoch", 1.5}, {"loss", 3.25}, {"ppl", 20.5},
                             {"lr", 0.0007}, {"tgt_tok_s", 12345.0}, {"elapsed_s", 75.0}};
  const nlohmann::json valid{{"type", "valid"}, {"step", 200}, {"loss", 2.5}, {"ppl", 9.0}, {"bleu", 27.456},
                             {"best", true}, {"checkpoint", "checkpoints/step-000200"}};
  std::ostringstream plain;
  {
    ProgressPrinter p(plain, false, false);
    p.record(train);
    p.record(valid);
  }
  CHECK(plain.str() ==
        "tt-train: epoch 1.50  step 200  loss 3.2500  ppl 20.50  lr 0.0007  12345 tgt tok/s  1m15s\n"
        "tt-train: valid step 200  loss 2.5000  ppl 9.00  bleu 27.46  -> checkpoints/step-000200 (best)\n");

  std::ostringstream live;
  {
    ProgressPrinter p(live, false, true);
    tt::train::StepStats stats;
    stats.step = 7;
    stats.loss_sum = 30;
    stats.nll_sum = 20;
    stats.tokens = 10;
    stats.lr = 1e-4;
    tt::train::TrainerState state;
    p.step(tt::train::StepView{stats, state, 0.25, 5000, 90});
    p.record(train);  // shown by the live line already
    p.record(valid);
  }
  CHECK(live.str().rfind("\repoch 0.25  step 7  loss 3.0000  ppl 7.39  lr 0.0001  5000 tgt tok/s  ETA 1m30s", 0) == 0);
  CHECK(live.str().find("step 200  loss 3.25") == std::string::npos);
  CHECK(live.str().find("\r\033[Ktt-train: valid step 200") != std::string::npos);

  std::ostringstream quiet;
  {
    ProgressPrinter p(quiet, true, true);
    p.record(valid);
  }
  CHECK(quiet.str().empty());
}
