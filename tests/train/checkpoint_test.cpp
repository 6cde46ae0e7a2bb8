// The run directory: checkpoint layout and contents, trainer state and Adam round trips, atomic links,
// pruning that spares run/best, and entries that are not checkpoints.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>

#include "backend/backend.h"
#include "io/model_dir.h"
#include "io/safetensors.h"
#include "nn/transformer.h"
#include "ops/copy.h"
#include "support/tmp_dir.h"
#include "train/checkpoint.h"
#include "train/resume.h"
#include "train/run_config.h"
#include "util/error.h"

namespace fs = std::filesystem;
using tt::test::TmpDir;

namespace {

tt::nn::ModelConfig tiny() {
  tt::nn::ModelConfig c = tt::nn::preset("tiny");
  c.d_model = 8;
  c.d_ff = 16;
  c.heads = 2;
  c.n_layers_enc = c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 10;
  c.max_positions = 16;
  return c;
}

}  // namespace

TEST_CASE("checkpoint names are six-digit zero-padded steps", "[checkpoint]") {
  CHECK(tt::train::checkpoint_name(1200) == "step-001200");
  CHECK(tt::train::checkpoint_path(7) == "checkpoints/step-000007");
  CHECK(tt::train::checkpoint_name(1234567) == "step-1234567");
}

TEST_CASE("a checkpoint is a model directory plus optimizer and trainer state, and loads back", "[checkpoint]") {
  TmpDir tmp;
  auto backend = tt::backend::make_backend("cpu", 1);
  const auto config = tiny();
  tt::nn::Transformer model(config, *backend);
  model.init_parameters(4);
  tt::train::Adam adam(model.params());
  std::vector<float> m(static_cast<size_t>(adam.m().numel())), v(m.size());
  for (size_t i = 0; i < m.size(); ++i) {
    m[i] = 0.001f * static_cast<float>(i);
    v[i] = 1.0f / static_cast<float>(i + 1);
  }
  adam.load_state(m, v, 42);
  tt::train::TrainerState state;
  state.step = 42;
  state.position = {3, 17};
  state.elapsed_s = 12.5;
  state.seed = 9;
  state.best_metric = 27.4;
  state.best_metric_name = "bleu";
  state.best_step = 40;
  state.bad_validations = 1;
  state.options = {{"batch_tokens", 100}};
  const std::string spm = tmp.write("joint.model", "not really a model, only copied");
  tt::train::CheckpointContents c;
  c.config = &config;
  c.params = &model.params();
  c.adam = &adam;
  c.state = &state;
  c.vocab = tt::train::read_run_vocab(spm, spm);
  c.training = {{"accum", 2}};
  const std::string run = tmp.file("run");
  CHECK(tt::train::write_checkpoint(run, c) == "checkpoints/step-000042");
  const std::string dir = run + "/checkpoints/step-000042";
  for (const char* f : {"config.json", "model.safetensors", "optimizer.safetensors", "trainer.json", "spm.model"})
    CHECK(fs::is_regular_file(dir + "/" + f));
  CHECK(std::distance(fs::directory_iterator(run + "/checkpoints"), fs::directory_iterator()) == 1);  // no temps

  nlohmann::json full;
  CHECK(tt::nn::to_json(tt::io::load_model_config(dir, &full)) == tt::nn::to_json(config));
  CHECK(full["training"]["accum"] == 2);
  CHECK(full["vocab"]["source"] == "spm.model");
  CHECK(tt::test::read_file(dir + "/spm.model") == "not really a model, only copied");
  // The vocabulary travels in memory: a later checkpoint needs no file (the one copied from may be gone).
  fs::remove(spm);
  state.step = 43;
  CHECK(tt::train::write_checkpoint(run, c) == "checkpoints/step-000043");
  CHECK(tt::test::read_file(run + "/checkpoints/step-000043/spm.model") == "not really a model, only copied");
  fs::remove_all(run + "/checkpoints/step-000043");
  tt::nn::Transformer loaded(config, *backend);
  tt::io::load_model_weights(dir, loaded.params());
  CHECK(loaded.params().values().to_host_f32() == model.params().values().to_host_f32());
  tt::train::Adam adam2(loaded.params());
  tt::train::load_optimizer(dir, adam2);
  CHECK(adam2.steps() == 42);
  CHECK(adam2.m().to_host_f32() == m);
  CHECK(adam2.v().to_host_f32() == v);
  const auto s = tt::train::load_trainer_state(dir);
  CHECK(s.step == 42);
  CHECK(s.position == tt::train::BatchPosition{3, 17});
  CHECK(s.elapsed_s == 12.5);
  CHECK(s.seed == 9);
  CHECK(*s.best_metric == 27.4);
  CHECK(s.best_metric_name == "bleu");
  CHECK(s.best_step == 40);
  CHECK(s.bad_validations == 1);
  CHECK(s.options["batch_tokens"] == 100);

  // Optimizer state of another model size is refused, naming the file.
  auto other = tiny();
  other.d_ff = 24;
  tt::nn::Transformer bigger(other, *backend);
  tt::train::Adam adam3(bigger.params());
  CHECK_THROWS_WITH(tt::train::load_optimizer(dir, adam3), Catch::Contains("optimizer.safetensors"));

  // A trainer state whose number overflows a double (nlohmann's out_of_range) is a FormatError naming it.
  std::ofstream(fs::path(dir) / tt::train::trainer_state_file_name) << R"({"step": 1e999})";
  CHECK_THROWS_AS(tt::train::load_trainer_state(dir), tt::FormatError);
  CHECK_THROWS_WITH(tt::train::load_trainer_state(dir), Catch::Contains("trainer.json"));
}

TEST_CASE("links are replaced atomically, pruning keeps the last K and whatever best or last points to",
          "[checkpoint]") {
  TmpDir tmp;
  const std::string run = tmp.path();
  for (int step : {10, 20, 30, 40, 50}) fs::create_directories(run + "/" + tt::train::checkpoint_path(step));
  fs::create_directories(run + "/checkpoints/step-000060.tmp.123.0");  // an interrupted write
  fs::create_directories(run + "/checkpoints/notes");
  const auto all = tt::train::list_checkpoints(run);
  REQUIRE(all.size() == 5);
  CHECK(all.front() == std::make_pair(int64_t{10}, std::string("checkpoints/step-000010")));
  CHECK(all.back().first == 50);

  CHECK_THROWS_AS(tt::train::last_checkpoint(run), tt::IoError);
  tt::train::set_link(run, "best", "checkpoints/step-000020");
  tt::train::set_link(run, "last", "checkpoints/step-000040");
  tt::train::set_link(run, "last", "checkpoints/step-000050");
  CHECK(fs::read_symlink(run + "/last") == "checkpoints/step-000050");
  CHECK(tt::train::last_checkpoint(run) == run + "/checkpoints/step-000050");
  tt::train::prune_checkpoints(run, 2);
  std::vector<int64_t> left;
  for (const auto& [step, path] : tt::train::list_checkpoints(run)) left.push_back(step);
  CHECK(left == std::vector<int64_t>{20, 40, 50});  // best survives
  CHECK(fs::exists(run + "/checkpoints/notes"));
  size_t entries = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(run)) ++entries;
  CHECK(entries == 3);  // checkpoints, best, last: no temporary links left
}

TEST_CASE("last_checkpoint: a missing or dangling RUN/last names the newest intact checkpoint", "[checkpoint]") {
  TmpDir tmp;
  const std::string run = tmp.path();
  auto make = [&](int step, bool intact) {
    const std::string dir = run + "/" + tt::train::checkpoint_path(step);
    fs::create_directories(dir);
    for (const char* f : {"config.json", "model.safetensors", "optimizer.safetensors", "trainer.json"})
      if (intact || std::string(f) != "trainer.json") tmp.write(dir.substr(run.size() + 1) + "/" + f, "{}");
  };
  make(10, true);
  make(20, true);
  make(30, false);  // not all there
  CHECK(tt::train::newest_intact_checkpoint(run) == run + "/checkpoints/step-000020");
  auto hint_of = [&] {
    try {
      tt::train::last_checkpoint(run);
    } catch (const tt::IoError& e) {
      return std::string(e.what()) + " | " + e.hint();
    }
    return std::string("no error");
  };
  CHECK(hint_of() == run + "/last is missing | the newest intact checkpoint is " + run +
                         "/checkpoints/step-000020: point " + run + "/last at it (ln -sfn checkpoints/step-000020 " +
                         run + "/last) and resume");
  tt::train::set_link(run, "last", "checkpoints/step-000040");
  CHECK(hint_of() == run + "/last points to checkpoints/step-000040, which is missing | the newest intact checkpoint is " +
                         run + "/checkpoints/step-000020: point " + run + "/last at it (ln -sfn checkpoints/step-000020 " +
                         run + "/last) and resume");
  fs::remove_all(run + "/checkpoints");
  CHECK_THAT(hint_of(), Catch::StartsWith(run + " has no checkpoint to resume (" + run + "/last points to"));
  CHECK(tt::train::newest_intact_checkpoint(run).empty());
}

TEST_CASE("run options round-trip through JSON, floats written as people write them", "[checkpoint]") {
  tt::train::RunConfig c;
  c.data.train_src = "/data/train.en";
  c.data.train_more = {"/data/news.en", "/data/news.de"};
  c.data.corpus_weights = {1, 4};
  c.data.spm_alpha = 0.1f;
  c.data.spm_nbest = 64;
  c.data.filter.max_len = 100;
  c.data.filter.max_len_ratio = 1.5;
  c.data.batch_tokens = 2048;
  c.trainer.accum = 4;
  c.trainer.clip_norm = 1.0;
  c.trainer.adam.weight_decay = 0.01f;
  c.trainer.schedule.kind = tt::train::LrScheduleKind::inverse_sqrt;
  c.trainer.schedule.peak_lr = 7e-4;
  c.trainer.seed = 77;
  c.run.max_epochs = 30;
  c.run.time_limit_s = 5400;
  c.run.keep_last = 3;
  c.valid_metric = "loss";
  const nlohmann::json j = tt::train::to_json(c);
  CHECK(j["adam_betas"].dump() == "[0.9,0.98]");
  CHECK(j["weight_decay"].dump() == "0.01");
  CHECK(j["lr_schedule"] == "inverse-sqrt");
  CHECK(j["spm_alpha"].dump() == "0.1");
  CHECK(j.size() == 35);  // every option once; every key a resumed run compares or takes is there
  for (const auto& option : tt::train::run_options())
    for (const auto& key : option.keys) CHECK(j.contains(key));
  const auto back = tt::train::run_config_from_json(j, "trainer.json");
  CHECK(tt::train::to_json(back) == j);
  CHECK(back.trainer.adam.beta2 == 0.98f);
  CHECK(back.trainer.schedule.kind == tt::train::LrScheduleKind::inverse_sqrt);
  CHECK(back.run.keep_last == 3);
  CHECK(back.data.train_more == c.data.train_more);
  CHECK(back.data.spm_alpha == 0.1f);
  CHECK(back.data.spm_nbest == 64);
  CHECK(back.data.corpus_weights == std::vector<double>{1, 4});
  // A run from before several corpora and subword sampling: one corpus, no weights, no sampling.
  nlohmann::json old = j;
  for (const char* key : {"train_more", "corpus_weights", "spm_alpha", "spm_nbest"}) old.erase(key);
  const auto before = tt::train::run_config_from_json(old, "trainer.json");
  CHECK(before.data.train_more.empty());
  CHECK(before.data.corpus_weights.empty());
  CHECK(before.data.spm_alpha == 0);
  CHECK(before.data.spm_nbest == -1);
  CHECK_THROWS_WITH(tt::train::run_config_from_json({{"accum", "two"}}, "x/trainer.json"),
                    Catch::Contains("x/trainer.json") && Catch::Contains("'accum'"));
  CHECK_THROWS_WITH(tt::train::run_config_from_json({{"lr_schedule", "cosine"}}, "t.json"), Catch::Contains("cosine"));
}
