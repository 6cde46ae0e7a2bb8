#include "train/checkpoint.h"

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <regex>

#include "io/model_dir.h"
#include "io/safetensors.h"
#include "util/atomic_dir.h"
#include "util/atomic_file.h"
#include "util/error.h"
#include "util/file_kind.h"

namespace fs = std::filesystem;

namespace tt::train {

nlohmann::json to_json(const TrainerState& s) {
  nlohmann::json j;
  j["step"] = s.step;
  j["epoch"] = s.position.epoch;
  j["batch"] = s.position.index;
  j["elapsed_s"] = s.elapsed_s;
  j["seed"] = s.seed;
  j["best_metric"] = s.best_metric ? nlohmann::json(*s.best_metric) : nlohmann::json(nullptr);
  j["best_metric_name"] = s.best_metric_name;
  j["best_step"] = s.best_step;
  j["bad_validations"] = s.bad_validations;
  j["options"] = s.options;
  return j;
}

TrainerState trainer_state_from_json(const nlohmann::json& j, const std::string& file) {
  TrainerState s;
  try {
    s.step = j.at("step").get<int64_t>();
    s.position.epoch = j.at("epoch").get<int64_t>();
    s.position.index = j.at("batch").get<int64_t>();
    s.elapsed_s = j.at("elapsed_s").get<double>();
    s.seed = j.at("seed").get<uint64_t>();
    if (!j.at("best_metric").is_null()) s.best_metric = j.at("best_metric").get<double>();
    s.best_metric_name = j.at("best_metric_name").get<std::string>();
    s.best_step = j.at("best_step").get<int64_t>();
    s.bad_validations = j.at("bad_validations").get<int>();
    s.options = j.at("options");
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(file + ": not a tt trainer state (" + e.what() + ")");
  }
  if (s.step < 0 || s.position.epoch < 0 || s.position.index < 0)
    throw FormatError(file + ": negative step or batch position");
  return s;
}

std::string checkpoint_name(int64_t step) {
  char name[32];
  std::snprintf(name, sizeof name, "step-%06lld", static_cast<long long>(step));
  return name;
}

std::string checkpoint_path(int64_t step) { return "checkpoints/" + checkpoint_name(step); }

std::string write_checkpoint(const std::string& run_dir, const CheckpointContents& c) {
  const std::string relative = checkpoint_path(c.state->step);
  util::AtomicDirectory out((fs::path(run_dir) / relative).string());
  nlohmann::json extra = nlohmann::json::object();
  if (!c.vocab.empty()) extra["vocab"] = write_run_vocab(out.path(), c.vocab);
  extra["training"] = c.training;
  io::write_model_files(out.path(), *c.config, c.average ? *c.average : *c.params, extra);
  if (c.average) io::save_parameters(out.file(training_weights_file_name), *c.params);

  const std::vector<float> m = c.adam->m().to_host_f32(), v = c.adam->v().to_host_f32();
  const int64_t steps = c.adam->steps(), n = static_cast<int64_t>(m.size());
  io::write_safetensors(out.file(optimizer_file_name),
                        {io::TensorRef{"adam.m", io::StDType::f32, {n}, m.data()},
                         io::TensorRef{"adam.v", io::StDType::f32, {n}, v.data()},
                         io::TensorRef{"adam.step", io::StDType::i64, {1}, &steps}},
                        {{"format", "tt-adam"}});
  util::AtomicFile state(out.file(trainer_state_file_name), false);
  state.stream() << to_json(*c.state).dump(2) << "\n";
  state.commit();
  out.commit();
  return relative;
}

void load_weights(const std::string& checkpoint_dir, const nn::ParameterSet& weights, const nn::ParameterSet* average) {
  const std::string trained = (fs::path(checkpoint_dir) / training_weights_file_name).string();
  const bool separate = util::regular_file_exists(trained);
  if (separate) io::load_parameters(trained, weights);
  else io::load_model_weights(checkpoint_dir, weights);
  if (!average) return;
  if (separate) io::load_model_weights(checkpoint_dir, *average);
  else average->values().copy_from(weights.values());
}

void set_link(const std::string& run_dir, const std::string& name, const std::string& target) {
  const std::string link = (fs::path(run_dir) / name).string();
  const std::string temp = util::temp_path_beside(link);
  if (::symlink(target.c_str(), temp.c_str()) != 0)
    throw IoError("cannot make the link " + temp + ": " + std::strerror(errno));
  if (std::rename(temp.c_str(), link.c_str()) != 0) {
    const std::string why = std::strerror(errno);
    ::unlink(temp.c_str());
    throw IoError("cannot rename " + temp + " to " + link + ": " + why);
  }
  util::fsync_path(run_dir);
}

std::vector<std::pair<int64_t, std::string>> list_checkpoints(const std::string& run_dir) {
  std::vector<std::pair<int64_t, std::string>> out;
  const fs::path dir = fs::path(run_dir) / "checkpoints";
  std::error_code ec;
  if (!fs::is_directory(dir, ec)) return out;
  static const std::regex name(R"(step-([0-9]{6,}))");
  std::smatch match;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    const std::string file = entry.path().filename().string();
    if (entry.is_directory() && std::regex_match(file, match, name))
      out.emplace_back(std::stoll(match[1].str()), "checkpoints/" + file);
  }
  std::sort(out.begin(), out.end());
  return out;
}

namespace {

std::string link_target(const std::string& run_dir, const char* name) {
  std::error_code ec;
  const fs::path target = fs::read_symlink(fs::path(run_dir) / name, ec);
  return ec ? std::string() : target.lexically_normal().string();
}

// "checkpoints/step-NNNNNN" of the highest step whose files are all there; "" when there is none.
std::string newest_intact(const std::string& run_dir) {
  const auto all = list_checkpoints(run_dir);
  for (auto it = all.rbegin(); it != all.rend(); ++it) {
    const fs::path dir = fs::path(run_dir) / it->second;
    std::error_code ec;
    bool intact = true;
    for (const char* file : {io::config_file_name, io::weights_file_name, optimizer_file_name, trainer_state_file_name})
      intact = intact && fs::is_regular_file(dir / file, ec);
    if (intact) return it->second;
  }
  return {};
}

}  // namespace

void prune_checkpoints(const std::string& run_dir, int keep_last) {
  if (keep_last < 1) return;
  const auto all = list_checkpoints(run_dir);
  const std::string best = link_target(run_dir, "best"), last = link_target(run_dir, "last");
  for (size_t i = 0; i + static_cast<size_t>(keep_last) < all.size(); ++i) {
    if (all[i].second == best || all[i].second == last) continue;
    // Renamed to a temporary name first, so that a kill mid-removal leaves a temporary for the next run
    // to remove (train/stale_temporaries.h), never a half-deleted checkpoint that looks like one.
    const std::string path = (fs::path(run_dir) / all[i].second).string();
    const std::string doomed = util::temp_path_beside(path);
    if (std::rename(path.c_str(), doomed.c_str()) != 0)
      throw IoError("cannot remove old checkpoint " + path + ": " + std::strerror(errno));
    std::error_code ec;
    fs::remove_all(doomed, ec);
    if (ec) throw IoError("cannot remove old checkpoint " + path + " (renamed " + doomed + "): " + ec.message());
  }
}

std::string newest_intact_checkpoint(const std::string& run_dir) {
  const std::string relative = newest_intact(run_dir);
  return relative.empty() ? relative : (fs::path(run_dir) / relative).string();
}

std::string last_checkpoint(const std::string& run_dir) {
  const fs::path link = fs::path(run_dir) / "last";
  std::error_code ec;
  if (fs::is_symlink(link, ec) && fs::is_directory(link, ec))
    return (fs::path(run_dir) / link_target(run_dir, "last")).string();
  const std::string newest = newest_intact(run_dir);
  const std::string what = fs::is_symlink(link, ec)
                               ? link.string() + " points to " + link_target(run_dir, "last") + ", which is missing"
                               : link.string() + " is missing";
  if (newest.empty())
    throw IoError(run_dir + " has no checkpoint to resume (" + what + ")",
                  "give the run directory a previous tt-train -o wrote, after its first checkpoint");
  // A link that is gone or points nowhere (a checkpoint deleted by hand, a file system that could not
  // replace a directory in one step): the user chooses where to go on from; the hint says where one can.
  throw IoError(what, "the newest intact checkpoint is " + (fs::path(run_dir) / newest).string() + ": point " +
                          link.string() + " at it (ln -sfn " + newest + " " + link.string() + ") and resume");
}

TrainerState load_trainer_state(const std::string& checkpoint_dir) {
  const std::string path = (fs::path(checkpoint_dir) / trainer_state_file_name).string();
  std::ifstream in(path);
  if (!in) throw IoError("cannot open " + path);
  try {
    return trainer_state_from_json(nlohmann::json::parse(in), path);
  } catch (const nlohmann::json::exception& e) {
    throw FormatError(path + ": not valid JSON (" + e.what() + ")");
  }
}

void load_optimizer(const std::string& checkpoint_dir, Adam& adam) {
  io::SafetensorsReader reader((fs::path(checkpoint_dir) / optimizer_file_name).string());
  const int64_t n = adam.m().numel();
  reader.expect("adam.m", io::StDType::f32, {n});
  reader.expect("adam.v", io::StDType::f32, {n});
  const std::vector<int64_t> step = reader.read_i64("adam.step");
  if (step.size() != 1) throw FormatError(reader.path() + ": adam.step must hold one value");
  adam.load_state(reader.read_f32("adam.m"), reader.read_f32("adam.v"), step[0]);
}

}  // namespace tt::train
