// The run loop around the trainer, on ids (no tokenizer): early stopping counts validations without
// improvement, run/best stays on the best, and every validation has its checkpoint.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "backend/backend.h"
#include "support/tmp_dir.h"
#include "train/training_run.h"

namespace fs = std::filesystem;

namespace {

tt::nn::ModelConfig tiny() {
  tt::nn::ModelConfig c = tt::nn::preset("tiny");
  c.d_model = 16;
  c.d_ff = 32;
  c.heads = 2;
  c.n_layers_enc = c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 20;
  c.max_positions = 32;
  return c;
}

tt::data::ParallelCorpus corpus() {
  std::vector<std::vector<int32_t>> src, tgt;
  for (int i = 0; i < 12; ++i) {
    src.push_back({4 + i % 7, 5 + i % 5, 6, 3});  // stored source ends in eos
    tgt.push_back({4 + i % 5, 7, 8 + i % 3});
  }
  return tt::data::ParallelCorpus::from_ids(src, tgt);
}

}  // namespace

TEST_CASE("run_training: early stopping after N validations without improvement, best stays put",
          "[training_run]") {
  tt::test::TmpDir tmp;
  auto backend = tt::backend::make_backend("cpu", 1);
  const auto config = tiny();
  const auto data = corpus();
  tt::train::BatcherOptions batching;
  batching.batch_tokens = 20;
  tt::train::CorpusBatches source(data, batching);
  tt::nn::Transformer model(config, *backend);
  model.init_parameters(1);
  tt::train::Trainer trainer(model, source, {});
  tt::train::Validator validator(data, 64, config);
  // BLEU 10, 12, 12, 11, 12, ...: best at the second validation, then no improvement.
  std::vector<double> scores{10, 12, 12, 11, 12, 13};
  size_t calls = 0;
  validator.set_bleu([&](tt::nn::Transformer&) { return scores.at(calls++); });

  tt::train::RunOptions o;
  o.run_dir = tmp.path();
  o.valid_every = 2;
  o.early_stop = 3;
  o.max_steps = 100;
  o.report_every = 1000;
  o.keep_last = 2;
  tt::train::TrainerState state;
  tt::train::RunLog log(tmp.file("log.jsonl"));
  tt::train::CheckpointContents contents;
  contents.config = &config;
  contents.params = &model.params();
  std::vector<nlohmann::json> records;
  tt::train::RunCallbacks callbacks;
  callbacks.on_record = [&](const nlohmann::json& j) { records.push_back(j); };
  const auto result = tt::train::run_training(trainer, state, &validator, contents, o, log, nullptr, callbacks);

  CHECK(result.reason == tt::train::StopReason::early_stop);
  CHECK(calls == 5);  // steps 2, 4, 6, 8, 10: three without improvement after step 4
  CHECK(state.step == 10);
  CHECK(state.best_step == 4);
  CHECK(*state.best_metric == 12);
  CHECK(state.best_metric_name == "bleu");
  CHECK(state.bad_validations == 3);
  CHECK(fs::read_symlink(tmp.file("best")) == "checkpoints/step-000004");
  CHECK(fs::read_symlink(tmp.file("last")) == "checkpoints/step-000010");
  CHECK(fs::exists(tmp.file("checkpoints/step-000004/model.safetensors")));  // best outlives --keep-last 2
  CHECK_FALSE(fs::exists(tmp.file("checkpoints/step-000006")));
  CHECK(fs::exists(tmp.file("checkpoints/step-000008")));
  REQUIRE(records.size() == 7);  // five validations, the closing train record (steps 1-10), the end
  CHECK(records[1]["best"] == true);
  CHECK(records[2]["best"] == false);
  CHECK(records[5]["type"] == "train");
  CHECK(records[5]["step"] == 10);
  CHECK(records.back()["type"] == "end");
  CHECK(records.back()["reason"] == "early_stop");
  CHECK(records.back()["best_step"] == 4);
  CHECK(records.back()["best_bleu"] == 12);
  // The log file holds exactly what the callback saw.
  std::ifstream in(tmp.file("log.jsonl"));
  size_t lines = 0;
  for (std::string line; std::getline(in, line);) CHECK(nlohmann::json::parse(line) == records.at(lines++));
  CHECK(lines == records.size());
}
