// The data-parallel step without MPI: ranks as threads (thread_communicator.h), each with its own model,
// against one process that accumulates the same batches. Also the communicator factory's launcher check.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "backend/backend.h"
#include "dist/communicator.h"
#include "dist/thread_communicator.h"
#include "nn/transformer.h"
#include "train/synthetic.h"
#include "train/trainer.h"
#include "util/rng.h"

namespace {

tt::nn::ModelConfig tiny() {
  tt::nn::ModelConfig c = tt::nn::preset("tiny");
  c.d_model = 16;
  c.d_ff = 32;
  c.heads = 2;
  c.n_layers_enc = c.n_layers_dec = 1;
  c.vocab_size_src = c.vocab_size_tgt = 20;
  c.dropout = 0.3f;  // on: the ranks' masks must be the single process's
  c.attention_dropout = c.relu_dropout = 0.1f;
  c.max_positions = 64;
  return c;
}

tt::train::TrainerOptions options(int accum) {
  tt::train::TrainerOptions o;
  o.accum = accum;
  o.seed = 5;
  o.clip_norm = 0.5;  // the norm of the summed gradient, on every rank
  o.schedule.warmup_steps = 3;
  o.bucket_floats = 1000;  // several buckets, the last one partial
  return o;
}

struct Trained {
  std::vector<float> weights;
  std::vector<double> losses;
  std::vector<std::pair<std::string, std::pair<int64_t, int64_t>>> params;  // name, (offset, size)
};

Trained train(int ranks_accum, tt::dist::Communicator& comm, int steps) {
  auto backend = tt::backend::make_backend("cpu", 1);
  tt::nn::Transformer model(tiny(), *backend);
  model.init_parameters(11);
  tt::train::SyntheticBatches source(model.config(), tt::train::SyntheticTask::random, 3, 6, 5, 9);
  tt::train::Trainer trainer(model, source, options(ranks_accum), comm);
  Trained out;
  for (int s = 0; s < steps; ++s) out.losses.push_back(trainer.step().loss());
  out.weights = model.params().values().to_host_f32();
  for (const auto& p : model.params().all()) out.params.push_back({p.name, {p.offset, p.shape.numel()}});
  return out;
}

// ||a - b|| / ||a|| over the parameters, attention key biases aside: their gradient is exactly zero in exact
// arithmetic (softmax ignores a shift common to all keys), so they get rounding noise, which Adam (eps 1e-9)
// turns into steps of about the learning rate whose signs depend on the order of every sum. They differ
// between any two summation orders and do not change what the model computes.
double relative_difference(const Trained& a, const std::vector<float>& b) {
  double d2 = 0, n2 = 0;
  for (const auto& [name, range] : a.params) {
    if (name.ends_with("k_proj.bias")) continue;
    for (int64_t i = range.first; i < range.first + range.second; ++i) {
      const auto k = static_cast<size_t>(i);
      d2 += (static_cast<double>(a.weights[k]) - b[k]) * (static_cast<double>(a.weights[k]) - b[k]);
      n2 += static_cast<double>(a.weights[k]) * a.weights[k];
    }
  }
  return std::sqrt(d2 / n2);
}

}  // namespace

TEST_CASE("Trainer: 2 ranks x accum 2 give 1 process x accum 4, every rank the same bits", "[dist]") {
  tt::dist::LocalCommunicator local;
  const Trained one = train(4, local, 4);
  tt::test::ThreadGroup group(2);
  Trained ranks[2];
  std::thread other([&] {
    tt::test::ThreadCommunicator comm(group, 1);
    ranks[1] = train(2, comm, 4);
  });
  {
    tt::test::ThreadCommunicator comm(group, 0);
    ranks[0] = train(2, comm, 4);
  }
  other.join();
  REQUIRE(ranks[0].weights.size() == one.weights.size());
  CHECK(std::memcmp(ranks[0].weights.data(), ranks[1].weights.data(), one.weights.size() * sizeof(float)) == 0);
  const double rel = relative_difference(one, ranks[0].weights);
  INFO("relative difference " << rel);
  CHECK(rel < 1e-5);
  for (size_t s = 0; s < one.losses.size(); ++s) CHECK(ranks[0].losses[s] == Approx(one.losses[s]).epsilon(1e-5));
  // Not a comparison of two untrained models: the weights moved.
  tt::dist::LocalCommunicator again;
  CHECK(relative_difference(one, train(4, again, 1).weights) > 1e-4);
}

TEST_CASE("Trainer: 2 ranks x accum 1 give 1 process x accum 2 (a step covers ranks x accum batches)",
          "[dist]") {
  tt::dist::LocalCommunicator local;
  const Trained two = train(2, local, 3);
  tt::test::ThreadGroup group(2);
  Trained ranks[2];
  std::thread other([&] {
    tt::test::ThreadCommunicator comm(group, 1);
    ranks[1] = train(1, comm, 3);
  });
  tt::test::ThreadCommunicator comm(group, 0);
  ranks[0] = train(1, comm, 3);
  other.join();
  CHECK(relative_difference(two, ranks[0].weights) < 1e-5);
}

TEST_CASE("rng_stream: batch 0 is the step's stream, and batches differ from each other and other steps", "[dist]") {
  using tt::util::rng_stream;
  using tt::util::RngPurpose;
  CHECK(rng_stream(RngPurpose::dropout, 7, 3, 0) == rng_stream(RngPurpose::dropout, 7, 3));
  CHECK(rng_stream(RngPurpose::dropout, 7, 3, 1) != rng_stream(RngPurpose::dropout, 7, 3, 0));
  CHECK(rng_stream(RngPurpose::dropout, 7, 3, 1) != rng_stream(RngPurpose::dropout, 8, 3, 0));
  CHECK(rng_stream(RngPurpose::dropout, 7, 3, 1) != rng_stream(RngPurpose::dropout, 7, 3, 2));
}

TEST_CASE("launcher_size: the launcher's environment, and make_communicator is local for one process", "[dist]") {
  for (const char* name : {"OMPI_COMM_WORLD_SIZE", "PMI_SIZE", "PMIX_SIZE", "MPI_LOCALNRANKS"}) unsetenv(name);
  CHECK(tt::dist::launcher_size() == 1);
  setenv("PMI_SIZE", "4", 1);
  CHECK(tt::dist::launcher_size() == 4);
  setenv("PMI_SIZE", "1", 1);
  const auto comm = tt::dist::make_communicator("tt-test");
  CHECK(comm->name() == "local");
  CHECK(comm->size() == 1);
  unsetenv("PMI_SIZE");
  if (!tt::dist::mpi_available()) {
    setenv("OMPI_COMM_WORLD_SIZE", "2", 1);
    CHECK_THROWS_WITH(tt::dist::make_communicator("tt-test"), Catch::Contains("no MPI support"));
    unsetenv("OMPI_COMM_WORLD_SIZE");
  }
}
