// tt-train on a real (tiny) parallel corpus, as a user runs it: the run directory and its log, resume to
// the bit, refusals that leave the run untouched, Ctrl-C / SIGTERM on a real child process, and the errors.
#include <fcntl.h>
#include <signal.h>
#include <sys/file.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

#include "data/spm_fixture.h"
#include "io/safetensors.h"
#include "support/dead_pid.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"

namespace fs = std::filesystem;
using tt::test::quoted;
using tt::test::read_file;
using tt::test::run_command;
using tt::test::TmpDir;
using tt::test::tool;

namespace {

std::string q(const std::string& s) { return tt::test::quoted(s); }

const std::string tiny_model = " --preset tiny --d-model 32 --d-ff 64 --heads 2 --layers 1";

// The fixture corpus (40 pairs) with a joint SentencePiece model trained on it.
struct Fixture {
  TmpDir dir;
  std::string spm = tt::test::train_fixture_model(dir);
  std::string en = tt::test::fixture_path("corpus.en"), de = tt::test::fixture_path("corpus.de");
  std::string data(int warmup = 10) const {
    return " --train " + q(en) + " " + q(de) + " --spm " + q(spm) +
           " --batch-tokens 150 --threads 1 --device cpu --warmup-steps " + std::to_string(warmup);
  }
  std::string run(const std::string& name) const { return dir.file(name); }
};

// Trains run "a" `steps` steps straight and run "b" half of them, then resumes "b" to `steps` — on the same
// thread count: the bits are the same for any count on AVX-512 hosts, but oneDNN's AVX2 products round by
// the count, and tt-train promises a bit-identical resume on the same threads.
void straight_and_resumed(const Fixture& fx, const std::string& flags, int steps) {
  auto a = run_command(tool("tt-train") + flags + " --max-steps " + std::to_string(steps) + " -o " + q(fx.run("a")));
  REQUIRE(a.status == 0);
  auto b = run_command(tool("tt-train") + flags + " --max-steps " + std::to_string(steps / 2) + " -o " + q(fx.run("b")));
  REQUIRE(b.status == 0);
  b = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --threads 1 --max-steps " +
                  std::to_string(steps) + " -q");
  REQUIRE(b.status == 0);
}

std::vector<nlohmann::json> log_records(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

std::string listing(const std::string& dir) {
  std::string out;
  for (const auto& e : fs::recursive_directory_iterator(dir))
    out += e.path().string() + " " + (e.is_regular_file() ? std::to_string(fs::file_size(e.path())) : "-") + "\n";
  return out;
}

bool complete_checkpoint(const std::string& dir) {
  for (const char* f : {"config.json", "model.safetensors", "optimizer.safetensors", "trainer.json", "spm.model"})
    if (!fs::is_regular_file(dir + "/" + f)) return false;
  tt::io::SafetensorsReader weights(dir + "/model.safetensors");
  tt::io::SafetensorsReader optimizer(dir + "/optimizer.safetensors");
  return nlohmann::json::parse(read_file(dir + "/trainer.json")).contains("step");
}

// Starts tt-train with `args` (split on spaces; no quoting needed for the temp paths) as a child process.
pid_t spawn(const std::string& args, const std::string& out, const std::string& err) {
  std::vector<std::string> words{tool("tt-train")};
  std::istringstream in(args);
  for (std::string w; in >> w;) words.push_back(w);
  const pid_t pid = fork();
  if (pid == 0) {
    const int o = ::open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    const int e = ::open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
    ::dup2(o, 1);
    ::dup2(e, 2);
    std::vector<char*> argv;
    for (auto& w : words) argv.push_back(w.data());
    argv.push_back(nullptr);
    ::execv(argv[0], argv.data());
    ::_exit(127);
  }
  return pid;
}

// Waits until the run's log has a "train" record (the loop is running), at most ~20 s.
bool wait_for_training(const std::string& log) {
  for (int i = 0; i < 2000; ++i) {
    if (read_file(log).find("\"type\":\"train\"") != std::string::npos) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

int exit_status(pid_t pid) {
  int raw = 0;
  ::waitpid(pid, &raw, 0);
  return WIFEXITED(raw) ? WEXITSTATUS(raw) : 128 + WTERMSIG(raw);
}

}  // namespace

TEST_CASE("tt-train --train: run directory, links, log schema and keep-last", "[tt-train][run]") {
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " --valid " + q(fx.en) + " " + q(fx.de) +
                       " --max-steps 12 --valid-every 6 --save-every 2 --keep-last 2 --report-every 3 -o " +
                       q(run));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("40 of 40 pairs kept") && Catch::Contains("padding") &&
                        Catch::Contains("parameters") && Catch::Contains("valid step 6"));
  // stdout: the end record, for scripts.
  const auto end = nlohmann::json::parse(r.out);
  CHECK(end["type"] == "end");
  CHECK(end["reason"] == "max_steps");
  CHECK(end["step"] == 12);

  // Saved at 2, 4, ..., 12 and at both validations; the last two kept, plus best wherever it points.
  CHECK(fs::read_symlink(run + "/last") == "checkpoints/step-000012");
  const std::string best = fs::read_symlink(run + "/best").string();
  CHECK((best == "checkpoints/step-000006" || best == "checkpoints/step-000012"));
  std::set<std::string> kept;
  for (const auto& e : fs::directory_iterator(run + "/checkpoints")) kept.insert(e.path().filename().string());
  std::set<std::string> expected{"step-000010", "step-000012", fs::path(best).filename().string()};
  CHECK(kept == expected);
  CHECK(complete_checkpoint(run + "/last"));
  const auto trainer = nlohmann::json::parse(read_file(run + "/last/trainer.json"));
  CHECK(trainer["step"] == 12);
  CHECK(trainer["options"]["batch_tokens"] == 150);
  const auto config = nlohmann::json::parse(read_file(run + "/last/config.json"));
  CHECK(config["model"]["vocab_size_src"] == 200);  // from the SentencePiece model
  CHECK(config["vocab"]["source"] == "spm.model");
  CHECK(config["training"]["max_steps"] == 12);

  const auto log = log_records(run + "/log.jsonl");
  REQUIRE(log.size() >= 4);
  CHECK(log.front()["type"] == "start");
  CHECK(log.front()["train"]["lines"] == 40);
  CHECK(log.front()["train"]["kept"] == 40);
  CHECK(log.front()["parameters"].get<int64_t>() > 0);
  CHECK(log.front()["padding"].get<double>() > 0);
  CHECK(log.back()["type"] == "end");
  int train = 0, valid = 0, save = 0;
  for (const auto& j : log) {
    if (j["type"] == "train") {
      ++train;
      CHECK(j["step"].get<int>() % 3 == 0);
      for (const char* key : {"epoch", "loss", "ppl", "lr", "tgt_tok_s", "elapsed_s"}) CHECK(j.contains(key));
    } else if (j["type"] == "valid") {
      ++valid;
      CHECK(j["checkpoint"] == (valid == 1 ? "checkpoints/step-000006" : "checkpoints/step-000012"));
      CHECK(std::exp(j["loss"].get<double>()) > 1);
      CHECK(j["ppl"].get<double>() > 1);
    } else if (j["type"] == "save") {
      ++save;
    }
  }
  CHECK(train == 4);
  CHECK(valid == 2);
  CHECK(save == 4);  // steps 2, 4, 8, 10 (6 and 12 are validation checkpoints, logged as such)
}

TEST_CASE("tt-train --resume: 2N steps straight and N + resume + N give bit-identical weights", "[tt-train][resume]") {
  Fixture fx;
  const std::string common = tiny_model + fx.data() + " --accum 2 -q";  // dropout 0.3 (tiny): masks matter
  auto a = run_command(tool("tt-train") + common + " --max-steps 10 -o " + q(fx.run("a")));
  REQUIRE(a.status == 0);
  auto b = run_command(tool("tt-train") + common + " --max-steps 5 -o " + q(fx.run("b")));
  REQUIRE(b.status == 0);
  // Step 5 is mid-epoch (8 batches an epoch, 2 a step): the data position must resume too.
  CHECK(nlohmann::json::parse(read_file(fx.run("b") + "/last/trainer.json"))["batch"] == 2);
  b = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 10 --threads 1 -q");
  REQUIRE(b.status == 0);
  CHECK(nlohmann::json::parse(b.out)["step"] == 10);
  const std::string wa = read_file(fx.run("a") + "/last/model.safetensors");
  CHECK(wa.size() > 100000);
  CHECK(wa == read_file(fx.run("b") + "/last/model.safetensors"));
  CHECK(read_file(fx.run("a") + "/last/optimizer.safetensors") ==
        read_file(fx.run("b") + "/last/optimizer.safetensors"));
  // The resumed run appends to the same log.
  const auto log = log_records(fx.run("b") + "/log.jsonl");
  CHECK(std::count_if(log.begin(), log.end(), [](auto& j) { return j["type"] == "start"; }) == 2);
  CHECK(log.back()["step"] == 10);

  // A different model or trajectory is refused with nothing written.
  const std::string before = listing(fx.run("b"));
  auto r = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 20 --d-model 64");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("differs from the run being resumed") && Catch::Contains("d_model: 64 vs 32"));
  r = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 20 --seed 3");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("--seed differs"));
  r = run_command(tool("tt-train") + " --resume " + q(fx.dir.path()) + " --max-steps 20");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("no checkpoint to resume"));
  CHECK(listing(fx.run("b")) == before);
}

TEST_CASE("tt-train --train twice with --corpus-weights: counts in the log, resumed bit for bit", "[tt-train][resume]") {
  Fixture fx;
  // The second corpus: the first 20 lines of the fixture, weighted 3 against 1.
  std::istringstream en(read_file(fx.en)), de(read_file(fx.de));
  std::string small_en, small_de;
  for (std::string a, b; small_en.size() < 2000 && std::getline(en, a) && std::getline(de, b);) {
    small_en += a + "\n";
    small_de += b + "\n";
  }
  fx.dir.write("small.en", small_en);
  fx.dir.write("small.de", small_de);
  const std::string common = tiny_model + fx.data() + " --train " + q(fx.run("small.en")) + " " + q(fx.run("small.de")) +
                             " --corpus-weights 1 3 -q";
  straight_and_resumed(fx, common, 7);
  CHECK(read_file(fx.run("a") + "/last/model.safetensors") == read_file(fx.run("b") + "/last/model.safetensors"));
  const auto start = log_records(fx.run("a") + "/log.jsonl").front();
  REQUIRE(start["corpora"].size() == 2);
  const int64_t n1 = start["corpora"][0]["kept"], n2 = start["corpora"][1]["kept"];
  const int64_t d1 = start["corpora"][0]["drawn_per_epoch"], d2 = start["corpora"][1]["drawn_per_epoch"];
  CHECK(d1 + d2 == n1 + n2);
  CHECK(std::abs(static_cast<double>(d2) / static_cast<double>(d1) - 3.0) < 0.05);
  // Refusals name the flag: a weight count that is not the corpus count, a negative weight, a changed weight.
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " --corpus-weights 1 2 --max-steps 1 -o " + q(fx.run("c")));
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--corpus-weights has 2 weights for 1"));
  r = run_command(tool("tt-train") + common + " --corpus-weights 1 -2 --max-steps 1 -o " + q(fx.run("c")));
  CHECK(r.status == 2);
  r = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 8 --corpus-weights 1 1");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("--corpus-weights differs"));
}

TEST_CASE("tt-train --ema-decay: checkpoints hold the average and the weights, resumed bit for bit", "[tt-train][resume]") {
  Fixture fx;
  const std::string common = tiny_model + fx.data() + " --ema-decay 0.9 -q";
  straight_and_resumed(fx, common, 6);
  for (const char* file : {"model.safetensors", "training_weights.safetensors", "optimizer.safetensors"}) {
    INFO(file);
    CHECK(read_file(fx.run("a") + "/last/" + file) == read_file(fx.run("b") + "/last/" + file));
  }
  // The average is not the weights, and tt-translate reads it like any model.
  CHECK(read_file(fx.run("a") + "/last/model.safetensors") != read_file(fx.run("a") + "/last/training_weights.safetensors"));
  auto t = run_command(tool("tt-translate") + " -m " + q(fx.run("a") + "/last") + " -q --max-len-b 3", "a b\n");
  CHECK(t.status == 0);
  // Out of range: a usage error naming the flag; a resumed run keeps its decay.
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " --ema-decay 1 --max-steps 1 -o " + q(fx.run("c")));
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--ema-decay"));
  r = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 7 --ema-decay 0.5");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("--ema-decay differs"));
}

TEST_CASE("tt-train --spm-alpha: each epoch sampled anew, resumed bit for bit across epochs", "[tt-train][resume]") {
  Fixture fx;
  const std::string common = tiny_model + fx.data() + " --spm-alpha 0.2 -q";
  straight_and_resumed(fx, common, 24);
  const auto log = log_records(fx.run("a") + "/log.jsonl");
  REQUIRE(log.back()["epoch"].get<double>() > 2);  // a resume mid-run, several epochs of samples
  CHECK(read_file(fx.run("a") + "/last/model.safetensors") == read_file(fx.run("b") + "/last/model.safetensors"));
  CHECK(log.front()["options"]["spm_alpha"] == 0.2);
  CHECK(log.front()["options"]["spm_nbest"] == -1);
  // Sampling changes what the model sees: the same run without it ends elsewhere.
  auto plain = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 24 -o " + q(fx.run("plain")));
  REQUIRE(plain.status == 0);
  CHECK(read_file(fx.run("a") + "/last/model.safetensors") != read_file(fx.run("plain") + "/last/model.safetensors"));
  // Refusals name the flag: out of range, an n-best that would not sample or has no alpha, a changed value.
  for (const char* bad : {" --spm-alpha 1.5", " --spm-alpha -0.1", " --spm-alpha 0.1 --spm-nbest 1", " --spm-nbest 8"}) {
    INFO(bad);
    auto r = run_command(tool("tt-train") + tiny_model + fx.data() + bad + " --max-steps 1 -o " + q(fx.run("c")));
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::Contains(std::string(bad).find("nbest") != std::string::npos ? "--spm-nbest" : "--spm-alpha"));
    CHECK_FALSE(fs::exists(fx.run("c")));
  }
  auto r = run_command(tool("tt-train") + " --resume " + q(fx.run("b")) + " --max-steps 25 --spm-alpha 0.3");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("--spm-alpha differs"));
}

TEST_CASE("tt-train: Ctrl-C finishes the step, saves and exits 130, a second signal exits at once",
          "[tt-train][signals]") {
  Fixture fx;
  const std::string run = fx.run("run");
  const std::string args = tiny_model + " --train " + fx.en + " " + fx.de + " --spm " + fx.spm +
                           " --batch-tokens 150 --threads 1 --device cpu --report-every 1 -o " + run;
  pid_t pid = spawn(args, fx.run("out"), fx.run("err"));
  REQUIRE(wait_for_training(run + "/log.jsonl"));
  ::kill(pid, SIGINT);
  CHECK(exit_status(pid) == 130);
  const auto log = log_records(run + "/log.jsonl");
  REQUIRE(log.back()["type"] == "end");
  CHECK(log.back()["reason"] == "signal");
  CHECK(log.back()["signal"] == SIGINT);
  const int64_t step = log.back()["step"];
  CHECK(fs::read_symlink(run + "/last") == "checkpoints/step-" + std::string(6 - std::to_string(step).size(), '0') +
                                               std::to_string(step));
  CHECK(complete_checkpoint(run + "/last"));
  CHECK(nlohmann::json::parse(read_file(run + "/last/trainer.json"))["step"] == step);

  // Resumed and interrupted twice in a row: out at once with 128 + the second signal (the kernel may deliver
  // the two in either order), no "end" record, and the checkpoint from before untouched.
  const std::string before = read_file(run + "/last/model.safetensors");
  pid = spawn("--resume " + run + " --report-every 1 --save-every 1000000", fx.run("out"), fx.run("err"));
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  for (int i = 0; i < 2000 && log_records(run + "/log.jsonl").back()["type"] != "train"; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  ::kill(pid, SIGINT);
  ::kill(pid, SIGTERM);
  const int status = exit_status(pid);
  CHECK((status == 130 || status == 143));
  CHECK(log_records(run + "/log.jsonl").back()["type"] != "end");
  CHECK(complete_checkpoint(run + "/last"));
  CHECK(read_file(run + "/last/model.safetensors") == before);
}

TEST_CASE("tt-train --train: errors name the file, flag or count, bad flags exit 2", "[tt-train][errors]") {
  Fixture fx;
  const std::string t = tool("tt-train") + tiny_model;
  const std::string short_de = fx.dir.write("short.de", "Ein Hund.\nZwei Katzen.\n");
  auto r = run_command(t + " --train " + q(fx.en) + " " + q(short_de) + " --spm " + q(fx.spm) +
                       " -o " + q(fx.run("r1")) + " --max-steps 1");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("corpus.en") && Catch::Contains("short.de") && Catch::Contains("40") &&
                        Catch::Contains("2"));

  r = run_command(t + fx.data() + " --vocab-size 300 -o " + q(fx.run("r2")) + " --max-steps 1");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("--vocab-size 300") && Catch::Contains("200 pieces"));
  CHECK_FALSE(fs::exists(fx.run("r2")));

  // The output is checked before any training.
  const std::string file = fx.dir.write("a-file", "x");
  r = run_command(t + fx.data() + " -o " + q(file + "/run") + " --max-steps 1");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(file));

  // Options at odds with each other are a usage error (man 7 tt), found before anything is read or written.
  r = run_command(t + fx.data() + " --max-len 2000 -o " + q(fx.run("r3")) + " --max-steps 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--max-len 2000") && Catch::Contains("max_positions"));
  CHECK_FALSE(fs::exists(fx.run("r3")));
  r = run_command(t + fx.data() + " --lr-scale -1 -o " + q(fx.run("r3")) + " --max-steps 1");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--lr-scale must be a positive number"));
  r = run_command(tool("tt-train") + " --preset tiny --vocab-size 50 --synthetic-steps 1 --src-len 5000");
  CHECK(r.status == 2);
  CHECK_THAT(r.err, Catch::Contains("--src-len/--tgt-len exceed max_positions"));

  // A fresh run into a directory that holds one is refused (nothing overwritten); so is a diverged loss.
  r = run_command(t + fx.data() + " -q --max-steps 2 -o " + q(fx.run("r4")));
  REQUIRE(r.status == 0);
  const std::string before = listing(fx.run("r4"));
  r = run_command(t + fx.data() + " -q --max-steps 2 -o " + q(fx.run("r4")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("already holds a training run") && Catch::Contains("--resume"));
  CHECK(listing(fx.run("r4")) == before);
  r = run_command(t + fx.data(1) + " -q --lr 1e30 --max-steps 5 -o " + q(fx.run("r5")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("step 2: the training loss is not finite") &&
                        Catch::Contains("hint: lower the learning rate (--lr-scale or --lr), lengthen --warmup-steps"));
  CHECK(log_records(fx.run("r5") + "/log.jsonl").back()["reason"] == "error");

  for (const std::string& bad : std::vector<std::string>{" --max-steps 1", " -o X --train " + q(fx.en) + " " + q(fx.de),
                                " --time-limit 10x" + fx.data() + " -o X", fx.data() + " -o X --lr 1e-3 --lr-scale 2",
                                fx.data() + " -o X --resume " + q(fx.dir.path())}) {
    INFO(bad);
    r = run_command(t + bad);
    CHECK(r.status == 2);
    CHECK_THAT(r.err, Catch::StartsWith("tt-train: error:"));
  }
}

TEST_CASE("tt-train: a model and batch that cannot fit in memory are refused at once, with the estimate",
          "[tt-train][errors]") {
  Fixture fx;
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_command(tool("tt-train") + " --preset big --train " + q(fx.en) + " " + q(fx.de) + " --spm " +
                       q(fx.spm) + " --batch-tokens 10000000 --device cpu -o " + q(fx.run("big")));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tt-train: error: the model does not fit in memory: training needs about ") &&
                        Catch::Contains(" TB (") && Catch::Contains("G parameters") &&
                        Catch::Contains("of activations for a batch of 10000000 tokens") &&
                        Catch::Contains("hint: lower --batch-tokens (reach large batches with --accum)"));
  CHECK(seconds < 10);  // before any allocation or tokenising (a few ms)
  CHECK_FALSE(fs::exists(fx.run("big")));  // nothing written
  // Synthetic runs are held to it too, naming their batch flag.
  r = run_command(tool("tt-train") + " --preset big --vocab-size 32000 --synthetic-steps 1 --batch-size 100000"
                  " --src-len 100 --tgt-len 100 --device cpu");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains("does not fit in memory") && Catch::Contains("hint: lower --batch-size or"));
}

TEST_CASE("tt-train: --time-limit and --max-epochs stop the run", "[tt-train][run]") {
  Fixture fx;
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-epochs 2 -o " + q(fx.run("e")));
  REQUIRE(r.status == 0);
  auto end = nlohmann::json::parse(r.out);
  CHECK(end["reason"] == "max_epochs");
  CHECK(end["step"] == 16);  // 8 batches an epoch
  CHECK(end["epoch"] == 2.0);
  r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --time-limit 1s -o " + q(fx.run("t")));
  REQUIRE(r.status == 0);
  end = nlohmann::json::parse(r.out);
  CHECK(end["reason"] == "time_limit");
  CHECK(end["elapsed_s"].get<double>() >= 1.0);
  CHECK(end["elapsed_s"].get<double>() < 5.0);
}

TEST_CASE("tt-train: the validation BLEU is tt-translate --beam 1 scored by tt-bleu", "[tt-train][bleu]") {
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data(30) + " --valid " + q(fx.en) + " " + q(fx.de) +
                       " --dropout 0 --max-steps 300 --valid-every 150 -q -o " + q(run));
  REQUIRE(r.status == 0);
  const auto log = log_records(run + "/log.jsonl");
  const nlohmann::json& valid = log[log.size() - 2];
  REQUIRE(valid["type"] == "valid");
  REQUIRE(valid["step"] == 300);
  const double bleu = valid["bleu"];
  // It has learnt something of its own training set (untrained: ~0). How much depends on rounding: the
  // sanitizer build (other optimisation, other FMA contraction) lands near 3, the release build above 5.
  CHECK(bleu > 1.0);
  // The valid record's BLEU has 2 decimals and the end record's best 4: the best (here the last validation
  // itself) rounds to the logged score.
  CHECK(log.back()["best_bleu"].get<double>() >= bleu - 0.005);
  if (log.back()["best_step"] == 300) CHECK(std::abs(log.back()["best_bleu"].get<double>() - bleu) <= 0.005);

  // The checkpoint is all tt-translate needs; its greedy output scored by tt-bleu gives the same number.
  const std::string hyp = fx.dir.file("hyp.txt");
  r = run_command(tool("tt-translate") + " -m " + q(run + "/last") + " -i " + q(fx.en) + " --beam 1 --threads 1 -q > " +
                  q(hyp));
  REQUIRE(r.status == 0);
  r = run_command(tool("tt-bleu") + " " + q(fx.de) + " -i " + q(hyp) + " -f json");
  REQUIRE(r.status == 0);
  CHECK_THAT(r.out, Catch::Contains("\"score\""));
  const auto scored = nlohmann::json::parse(r.out);
  const double expected = scored.is_array() ? scored[0]["score"].get<double>() : scored["score"].get<double>();
  CHECK(bleu == Approx(expected).margin(0.051));  // tt-bleu prints one decimal, as sacreBLEU

  // --valid-metric loss: no translations, run/best by validation loss.
  r = run_command(tool("tt-train") + tiny_model + fx.data() + " --valid " + q(fx.en) + " " + q(fx.de) +
                  " --valid-metric loss --max-steps 4 --valid-every 2 -q -o " + q(fx.run("loss")));
  REQUIRE(r.status == 0);
  CHECK_FALSE(log_records(fx.run("loss") + "/log.jsonl")[1].contains("bleu"));
  CHECK(nlohmann::json::parse(r.out).contains("best_loss"));
}

namespace {

using tt::test::dead_pid;

std::set<std::string> checkpoint_names(const std::string& run) {
  std::set<std::string> names;
  for (const auto& e : fs::directory_iterator(run + "/checkpoints")) names.insert(e.path().filename().string());
  return names;
}

}  // namespace

TEST_CASE("tt-train --resume: a resumed run saves more often than --keep-last keeps", "[tt-train][resume]") {
  // Each save used to copy the SentencePiece model from the checkpoint the run resumed from, which
  // --keep-last deletes a few saves later.
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 2 --save-every 1 --keep-last 2 -o " +
                       q(run));
  REQUIRE(r.status == 0);
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 8");
  INFO(r.err);
  REQUIRE(r.status == 0);
  CHECK(checkpoint_names(run) == std::set<std::string>{"step-000007", "step-000008"});
  CHECK(complete_checkpoint(run + "/last"));
  CHECK(read_file(run + "/last/spm.model") == read_file(fx.spm));
}

TEST_CASE("tt-train: one run directory takes one tt-train at a time", "[tt-train][lock]") {
  Fixture fx;
  const std::string run = fx.run("run");
  // Held here as a running tt-train holds it.
  fs::create_directories(run);
  const int fd = ::open((run + "/lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
  REQUIRE(fd >= 0);
  REQUIRE(::flock(fd, LOCK_EX | LOCK_NB) == 0);
  const std::string pid = std::to_string(::getpid());
  REQUIRE(::write(fd, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size()));
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 2 -o " + q(run));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::StartsWith("tt-train: error: " + run + " is in use") && Catch::Contains("pid " + pid));
  CHECK_FALSE(fs::exists(run + "/checkpoints"));
  CHECK_FALSE(fs::exists(run + "/log.jsonl"));
  ::close(fd);  // released: the run goes ahead, and a resume of it is refused while the lock is held again

  r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 2 -o " + q(run));
  REQUIRE(r.status == 0);
  CHECK(read_file(run + "/lock").empty());  // no holder
  const std::string before = listing(run);
  const int again = ::open((run + "/lock").c_str(), O_RDWR | O_CLOEXEC);
  REQUIRE(::flock(again, LOCK_EX | LOCK_NB) == 0);
  REQUIRE(::write(again, pid.data(), pid.size()) == static_cast<ssize_t>(pid.size()));
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 4");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(run + " is in use") && Catch::Contains("pid " + pid));
  REQUIRE(::ftruncate(again, 0) == 0);
  ::close(again);
  CHECK(listing(run) == before);

  // Two fresh runs into one new directory, started together: one trains, the other is refused cleanly
  // (the run directory is locked, or it already holds the winner's run).
  const std::string both = fx.run("both");
  const std::string args = tiny_model + " --train " + fx.en + " " + fx.de + " --spm " + fx.spm +
                           " --batch-tokens 150 --threads 1 --device cpu -q --max-steps 20 -o " + both;
  const pid_t a = spawn(args, fx.run("a.out"), fx.run("a.err"));
  const pid_t b = spawn(args, fx.run("b.out"), fx.run("b.err"));
  const int status_a = exit_status(a), status_b = exit_status(b);
  INFO(read_file(fx.run("a.err")) + read_file(fx.run("b.err")));
  CHECK(std::min(status_a, status_b) == 0);
  CHECK(std::max(status_a, status_b) == 1);
  const std::string loser = read_file(fx.run(status_a == 0 ? "b.err" : "a.err"));
  CHECK_THAT(loser, Catch::Contains("is in use") || Catch::Contains("already holds a training run"));
  CHECK(complete_checkpoint(both + "/last"));
  const auto log = log_records(both + "/log.jsonl");
  CHECK(std::count_if(log.begin(), log.end(), [](auto& j) { return j["type"] == "start"; }) == 1);
  CHECK(log.back()["step"] == 20);
}

TEST_CASE("tt-train --resume: a partial last line of the log (a crash mid-write) is dropped, with a note",
          "[tt-train][resume]") {
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 2 -o " + q(run));
  REQUIRE(r.status == 0);
  const std::string complete = read_file(run + "/log.jsonl");
  std::ofstream(run + "/log.jsonl", std::ios::app) << R"({"type":"train","step":3,"lo)";
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 3");
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("tt-train: note: " + run + "/log.jsonl: dropped a partial last line (28 bytes)"));
  const std::string log = read_file(run + "/log.jsonl");
  CHECK(log.substr(0, complete.size()) == complete);
  const auto records = log_records(run + "/log.jsonl");  // every line parses
  CHECK(records.back()["type"] == "end");
  CHECK(records.back()["step"] == 3);
  // A log that ends cleanly is left alone, without a note.
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 4");
  REQUIRE(r.status == 0);
  CHECK(r.err.empty());
}

TEST_CASE("tt-train --resume: temporaries that killed runs left in the run directory are removed",
          "[tt-train][resume]") {
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 2 -o " + q(run));
  REQUIRE(r.status == 0);
  // What kill -9 leaves mid-save: a checkpoint being written, a link being replaced (util::temp_path_beside).
  const std::string dead = std::to_string(dead_pid()), live = std::to_string(::getpid());
  const std::string written = run + "/checkpoints/step-000003.tmp." + dead + ".4";
  fs::create_directories(written);
  std::ofstream(written + "/model.safetensors") << "half a model";
  fs::create_directory_symlink("checkpoints/step-000003", run + "/last.tmp." + dead + ".7");
  const std::string other = run + "/checkpoints/step-000003.tmp." + live + ".0";  // a live process's: kept
  fs::create_directories(other);
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 3");
  REQUIRE(r.status == 0);
  CHECK_FALSE(fs::exists(written));
  CHECK_FALSE(fs::exists(fs::symlink_status(run + "/last.tmp." + dead + ".7")));
  CHECK(fs::exists(other));
  CHECK_THAT(r.err, Catch::Contains("tt-train: note: " + run + ": removed 2 temporaries left by interrupted runs"));
  CHECK(complete_checkpoint(run + "/last"));
}

TEST_CASE("tt-train --resume: a dangling last names the newest intact checkpoint", "[tt-train][resume]") {
  Fixture fx;
  const std::string run = fx.run("run");
  auto r = run_command(tool("tt-train") + tiny_model + fx.data() + " -q --max-steps 3 --save-every 1 -o " + q(run));
  REQUIRE(r.status == 0);
  fs::remove_all(run + "/checkpoints/step-000003");
  r = run_command(tool("tt-train") + " --resume " + q(run) + " -q --max-steps 4");
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(run + "/last points to checkpoints/step-000003, which is missing") &&
                        Catch::Contains("hint: the newest intact checkpoint is " + run + "/checkpoints/step-000002") &&
                        Catch::Contains("ln -sfn checkpoints/step-000002 " + run + "/last"));
}

TEST_CASE("tt-train: --batch-tokens below a pair's length says that pair is a batch of its own", "[tt-train][run]") {
  Fixture fx;
  auto r = run_command(tool("tt-train") + tiny_model + " --train " + q(fx.en) + " " + q(fx.de) + " --spm " + q(fx.spm) +
                       " --batch-tokens 1 --threads 1 --device cpu --max-steps 1 -o " + q(fx.run("run")));
  REQUIRE(r.status == 0);
  CHECK_THAT(r.err, Catch::Contains("40 batches per epoch of <= 1 tokens a side (40 pairs longer, in batches of one)"));
}

TEST_CASE("tt-train --init MODEL --train: fine-tuning starts from the model's weights and vocabulary",
          "[tt-train][init]") {
  Fixture fx;
  auto a = run_command(tool("tt-train") + tiny_model + fx.data() + " --max-steps 30 -q -o " + q(fx.run("a")));
  REQUIRE(a.status == 0);
  const std::string model = fx.run("a") + "/last";
  // One step over the whole corpus in one batch, without dropout or label smoothing: the step's loss is
  // the model's mean negative log-probability of the corpus, which tt-translate --score measures on its own.
  // No --spm: the model's own SentencePiece model is used.
  const std::string one_step = " --train " + q(fx.en) + " " + q(fx.de) +
                               " --batch-tokens 100000 --dropout 0 --label-smoothing 0 --report-every 1 --threads 1 -q";
  auto ft = run_command(tool("tt-train") + " --init " + q(model) + one_step + " --max-steps 1 -o " + q(fx.run("ft")));
  INFO(ft.err);
  REQUIRE(ft.status == 0);
  const auto log = log_records(fx.run("ft") + "/log.jsonl");
  REQUIRE(log.size() >= 2);
  CHECK(log[0]["init"] == fs::absolute(model).lexically_normal().string());
  REQUIRE(log[0]["train"]["kept"] == 40);
  const double tokens = log[0]["train"]["tgt_tokens"].get<double>() + 40;  // each target's pieces and </s>
  const auto train = std::find_if(log.begin(), log.end(), [](auto& j) { return j["type"] == "train"; });
  REQUIRE(train != log.end());
  auto scored = run_command(tool("tt-translate") + " -m " + q(model) + " -q --threads 1 --score " + q(fx.de) +
                            " < " + q(fx.en));
  REQUIRE(scored.status == 0);
  std::istringstream lines(scored.out);
  double sum = 0, log_prob = 0, score = 0;
  while (lines >> log_prob >> score) sum += log_prob;
  CHECK((*train)["loss"].get<double>() == Approx(-sum / tokens).epsilon(1e-4));
  // A random start has another loss (before this fix, --init took only the architecture).
  auto fresh = run_command(tool("tt-train") + tiny_model + one_step + " --spm " + q(fx.spm) + " --max-steps 1 -o " +
                           q(fx.run("fresh")));
  REQUIRE(fresh.status == 0);
  const auto fresh_log = log_records(fx.run("fresh") + "/log.jsonl");
  const auto fresh_train = std::find_if(fresh_log.begin(), fresh_log.end(), [](auto& j) { return j["type"] == "train"; });
  CHECK(std::abs((*fresh_train)["loss"].get<double>() - (*train)["loss"].get<double>()) > 0.1);

  // A fine-tuning run resumes like any other: 2 + resume + 2 steps = 4 steps straight, bit for bit.
  const std::string ft_steps = " --init " + q(model) + " --train " + q(fx.en) + " " + q(fx.de) +
                               " --batch-tokens 150 --threads 1 -q";
  REQUIRE(run_command(tool("tt-train") + ft_steps + " --max-steps 4 -o " + q(fx.run("straight"))).status == 0);
  REQUIRE(run_command(tool("tt-train") + ft_steps + " --max-steps 2 -o " + q(fx.run("halves"))).status == 0);
  REQUIRE(run_command(tool("tt-train") + " --resume " + q(fx.run("halves")) + " --max-steps 4 --threads 1 -q").status == 0);
  CHECK(read_file(fx.run("straight") + "/last/model.safetensors") ==
        read_file(fx.run("halves") + "/last/model.safetensors"));

  // Another SentencePiece model than the model's own is refused, naming both.
  auto other = run_command(tool("tt-tokenize") + " train -i " + q(fx.en) + " -o " + q(fx.run("other")) +
                           " --vocab-size 50 --threads 1");
  REQUIRE(other.status == 0);
  auto r = run_command(tool("tt-train") + " --init " + q(model) + " --train " + q(fx.en) + " " + q(fx.de) + " --spm " +
                       q(fx.run("other") + ".model") + " --max-steps 1 -q -o " + q(fx.run("refused")));
  CHECK(r.status == 1);
  CHECK_THAT(r.err, Catch::Contains(fx.run("other") + ".model") && Catch::Contains(model));
  CHECK_FALSE(fs::exists(fx.run("refused")));
}
