// tt-train over MPI, as a user launches it (mpirun -np 2 on localhost): the same weights as one process with
// twice the accumulation, resume with another rank count, and a killed rank ending the run. Skipped (exit
// status 77, registered as SKIP_RETURN_CODE) where this build has no MPI or mpirun is absent. This file
// sorts after trainer_ranks_test.cpp, so a direct run of the binary has done the thread tests before a skip.
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "data/spm_fixture.h"
#include "io/safetensors.h"
#include "support/run_command.h"
#include "support/tmp_dir.h"

namespace fs = std::filesystem;
using tt::test::read_file;
using tt::test::run_command;
using tt::test::TmpDir;
using tt::test::tool;

namespace {

std::string q(const std::string& s) { return tt::test::quoted(s); }

// mpirun, or a skip: this build's MPI launcher (CMake's TT_MPIEXEC), empty when built without MPI.
std::string mpirun() {
  const std::string path = TT_TEST_MPIEXEC;
  if (path.empty() || !fs::exists(path)) {
    std::cerr << "SKIPPED: " << (path.empty() ? "this build has no MPI (TT_MPI off)" : "mpirun not found at " + path)
              << "; install libopenmpi-dev openmpi-bin (scripts/install-deps.sh) and reconfigure\n";
    std::exit(77);
  }
  return path + " --oversubscribe --allow-run-as-root --mca btl self,vader -np ";
}

const std::string tiny_model = " --preset tiny --d-model 32 --d-ff 64 --heads 2 --layers 1";

struct Fixture {
  TmpDir dir;
  std::string spm = tt::test::train_fixture_model(dir);
  std::string en = tt::test::fixture_path("corpus.en"), de = tt::test::fixture_path("corpus.de");
  // Dropout stays on (the tiny preset's 0.1): equal weights need equal masks.
  std::string data() const {
    return " --train " + q(en) + " " + q(de) + " --spm " + q(spm) +
           " --batch-tokens 150 --threads 1 --device cpu --warmup-steps 4 --seed 3 --quiet" + tiny_model;
  }
};

std::vector<nlohmann::json> log_records(const std::string& path) {
  std::vector<nlohmann::json> out;
  std::istringstream in(read_file(path));
  for (std::string line; std::getline(in, line);) out.push_back(nlohmann::json::parse(line));
  return out;
}

// Attention key biases have a gradient that is exactly zero in exact arithmetic (softmax ignores a shift
// common to all keys), so what they get is rounding noise, which Adam (eps 1e-9) turns into steps of about
// the learning rate whose signs depend on the order of every sum: they differ between any two summation
// orders (thread counts too), and they do not change what the model computes. Left out of comparisons.
bool key_bias(const std::string& name) {
  return name.size() >= 11 && name.compare(name.size() - 11, 11, "k_proj.bias") == 0;
}

// ||a - b|| / ||a|| over the tensors of two model files (key biases aside), and the largest element difference.
std::pair<double, double> weight_difference(const std::string& a_file, const std::string& b_file) {
  tt::io::SafetensorsReader a(a_file), b(b_file);
  REQUIRE(a.tensors().size() == b.tensors().size());
  double diff2 = 0, norm2 = 0, max_abs = 0;
  for (const auto& e : a.tensors()) {
    if (key_bias(e.name)) continue;
    const std::vector<float> x = a.read_f32(e.name), y = b.read_f32(e.name);
    REQUIRE(x.size() == y.size());
    for (size_t i = 0; i < x.size(); ++i) {
      const double d = static_cast<double>(x[i]) - y[i];
      diff2 += d * d;
      norm2 += static_cast<double>(x[i]) * x[i];
      max_abs = std::max(max_abs, std::abs(d));
    }
  }
  return {std::sqrt(diff2 / norm2), max_abs};
}

}  // namespace

TEST_CASE("mpi: 2 ranks x accum 1 give the weights of 1 process x accum 2 after 10 steps", "[dist]") {
  const std::string launch = mpirun();
  Fixture fx;
  const std::string one = fx.dir.file("one"), two = fx.dir.file("two"), other = fx.dir.file("other");
  auto r1 = run_command(tool("tt-train") + fx.data() + " --accum 2 --max-steps 10 -o " + q(one));
  REQUIRE(r1.status == 0);
  auto r2 = run_command(launch + "2 " + tool("tt-train") + fx.data() + " --accum 1 --max-steps 10 -o " + q(two));
  INFO(r2.err);
  REQUIRE(r2.status == 0);
  const auto [rel, max_abs] = weight_difference(one + "/last/model.safetensors", two + "/last/model.safetensors");
  INFO("relative difference " << rel << ", largest element difference " << max_abs);
  CHECK(rel < 1e-5);
  // The weights moved: a run that trained nothing would pass the comparison above.
  auto init = run_command(tool("tt-train") + fx.data() + " --accum 2 --max-steps 1 -o " + q(other));
  REQUIRE(init.status == 0);
  CHECK(weight_difference(one + "/last/model.safetensors", other + "/last/model.safetensors").first > 1e-3);

  // Rank 0 alone wrote the log: one start (saying 2 ranks), one end, the same losses as the single process.
  const auto log = log_records(two + "/log.jsonl");
  REQUIRE(log.front()["type"] == "start");
  CHECK(log.front()["ranks"] == 2);
  CHECK(std::count_if(log.begin(), log.end(), [](const auto& j) { return j["type"] == "end"; }) == 1);
  CHECK(log.back()["step"] == 10);
  const auto log1 = log_records(one + "/log.jsonl");
  CHECK(log1.back()["step"] == 10);
  // Both read 20 batches: the same position.
  const auto s1 = nlohmann::json::parse(read_file(one + "/last/trainer.json"));
  const auto s2 = nlohmann::json::parse(read_file(two + "/last/trainer.json"));
  CHECK(s1["epoch"] == s2["epoch"]);
  CHECK(s1["batch"] == s2["batch"]);
}

TEST_CASE("mpi: a 2-rank run resumes on 1 process and a 1-process run on 2 ranks", "[dist]") {
  const std::string launch = mpirun();
  Fixture fx;
  const std::string run = fx.dir.file("run");
  auto a = run_command(launch + "2 " + tool("tt-train") + fx.data() + " --max-steps 3 -o " + q(run));
  INFO(a.err);
  REQUIRE(a.status == 0);
  const auto s3 = nlohmann::json::parse(read_file(run + "/last/trainer.json"));
  CHECK(s3["step"] == 3);
  auto b = run_command(tool("tt-train") + " --resume " + q(run) + " --max-steps 5 --quiet");
  INFO(b.err);
  REQUIRE(b.status == 0);
  auto c = run_command(launch + "2 " + tool("tt-train") + " --resume " + q(run) + " --max-steps 6 --quiet");
  INFO(c.err);
  REQUIRE(c.status == 0);
  const auto s6 = nlohmann::json::parse(read_file(run + "/last/trainer.json"));
  CHECK(s6["step"] == 6);
  // 3 steps x 2 batches, 2 x 1, 1 x 2: 10 batches into the run.
  const auto log = log_records(run + "/log.jsonl");
  const int64_t per_epoch = log.front()["batches_per_epoch"];
  REQUIRE(per_epoch > 2);
  CHECK(s6["epoch"] == 10 / per_epoch);
  CHECK(s6["batch"] == 10 % per_epoch);
  int starts = 0;
  for (const auto& j : log)
    if (j["type"] == "start") {
      ++starts;
      CHECK(j.value("ranks", 1) == (starts == 2 ? 1 : 2));
    }
  CHECK(starts == 3);
}

TEST_CASE("mpi: a killed rank ends the run within seconds, and the last checkpoint stays intact", "[dist]") {
  const std::string launch = mpirun();
  Fixture fx;
  const std::string run = fx.dir.file("run"), err = fx.dir.file("stderr");
  const pid_t launcher = fork();
  REQUIRE(launcher >= 0);
  if (launcher == 0) {
    const std::string cmd = "exec " + launch + "2 " + tool("tt-train") + fx.data() +
                            " --max-steps 100000 --save-every 2 --keep-last 2 -o " + q(run) + " 2>" + q(err) +
                            " >/dev/null";
    execl("/bin/sh", "sh", "-c", cmd.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  using Clock = std::chrono::steady_clock;
  auto waited = [](Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); };
  // Wait for a checkpoint, then kill rank 1 (the launcher's child whose environment says so).
  const auto t0 = Clock::now();
  while (!fs::exists(run + "/last") && waited(t0) < 60) std::this_thread::sleep_for(std::chrono::milliseconds(50));
  REQUIRE(fs::exists(run + "/last"));
  pid_t rank1 = -1;
  for (const auto& e : fs::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(e.path() / "stat");
    std::string line;
    std::getline(stat, line);
    const size_t close = line.rfind(')');
    if (close == std::string::npos) continue;
    std::istringstream rest(line.substr(close + 2));
    char state;
    int ppid = 0;
    rest >> state >> ppid;
    if (ppid != launcher) continue;
    const std::string env = read_file((e.path() / "environ").string());
    if (env.find(std::string("OMPI_COMM_WORLD_RANK=1") + '\0') != std::string::npos) rank1 = std::stoi(name);
  }
  REQUIRE(rank1 > 0);
  REQUIRE(kill(rank1, SIGKILL) == 0);
  const auto t1 = Clock::now();
  int status = 0;
  pid_t done = 0;
  while ((done = waitpid(launcher, &status, WNOHANG)) == 0 && waited(t1) < 30)
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  if (done == 0) {  // a hang: do not leave it behind
    kill(launcher, SIGKILL);
    waitpid(launcher, &status, 0);
  }
  const double seconds = waited(t1);
  const std::string message = read_file(err);
  INFO("stopped after " << seconds << " s; stderr:\n" << message);
  REQUIRE(done == launcher);
  CHECK(seconds < 15);
  CHECK(!(WIFEXITED(status) && WEXITSTATUS(status) == 0));
  CHECK(message.find("rank 1") != std::string::npos);
  // The last checkpoint is complete: its weights and state read back.
  const std::string last = fs::canonical(run + "/last").string();
  tt::io::SafetensorsReader weights(last + "/model.safetensors");
  CHECK(!weights.tensors().empty());
  const auto state = nlohmann::json::parse(read_file(last + "/trainer.json"));
  CHECK(state["step"].get<int64_t>() >= 2);
  CHECK(state["step"].get<int64_t>() % 2 == 0);
}

TEST_CASE("mpi: a rank that cannot use its data stops every rank with its message", "[dist]") {
  const std::string launch = mpirun();
  Fixture fx;
  const std::string empty = fx.dir.write("empty.txt", ""), run = fx.dir.file("run");
  // Rank 1 is given an empty corpus (as if its copy of the data were missing): it fails after MPI started.
  const std::string good = tool("tt-train") + fx.data() + " --max-steps 1000 -o " + q(run);
  const std::string bad = tool("tt-train") + " --train " + q(empty) + " " + q(empty) + " --spm " + q(fx.spm) +
                          " --threads 1 --quiet" + tiny_model + " --max-steps 1000 -o " + q(run);
  const std::string script = "if [ \"$OMPI_COMM_WORLD_RANK\" = 1 ]; then exec " + bad + "; else exec " + good + "; fi";
  const auto t0 = std::chrono::steady_clock::now();
  auto r = run_command("timeout 60 " + launch + "2 sh -c " + q(script));
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  INFO(r.err);
  CHECK(r.status != 0);
  CHECK(r.status != 124);  // not the timeout: no hang
  CHECK(seconds < 30);
  CHECK(r.err.find("no training pairs") != std::string::npos);
}
