#include "train/resume.h"

#include <algorithm>
#include <filesystem>

#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "util/error.h"

namespace tt::train {

const std::vector<RunOption>& run_options() {
  static const std::vector<RunOption> options = {
      {"train", {"train_src", "train_tgt", "train_more"}, true},  {"corpus_weights", {"corpus_weights"}, true},
      {"spm", {"source_spm", "target_spm"}, true},  {"spm_alpha", {"spm_alpha"}, true},
      {"spm_nbest", {"spm_nbest"}, true},
      {"src_spm", {"source_spm"}, true},            {"tgt_spm", {"target_spm"}, true},
      {"max_len", {"max_len"}, true},               {"max_len_ratio", {"max_len_ratio"}, true},
      {"batch_tokens", {"batch_tokens"}, true},     {"accum", {"accum"}, true},
      {"clip_norm", {"clip_norm"}, true},           {"weight_decay", {"weight_decay"}, true},
      {"warmup_steps", {"warmup_steps"}, true},     {"lr_scale", {"lr_scale", "lr_schedule"}, true},
      {"lr", {"lr", "lr_schedule"}, true},          {"seed", {"seed"}, true},
      {"ema_decay", {"ema_decay"}, true},
      {"valid", {"valid_src", "valid_tgt"}, false}, {"valid_metric", {"valid_metric"}, false},
      {"max_steps", {"max_steps"}, false},          {"max_epochs", {"max_epochs"}, false},
      {"time_limit_s", {"time_limit_s"}, false},    {"early_stop", {"early_stop"}, false},
      {"valid_every", {"valid_every"}, false},      {"save_every", {"save_every"}, false},
      {"save_minutes", {"save_minutes"}, false},    {"keep_last", {"keep_last"}, false},
      {"report_every", {"report_every"}, false},    {"log", {"log"}, false}};
  return options;
}

ResumePoint find_resume_point(const std::string& run_dir) {
  ResumePoint p;
  p.checkpoint = last_checkpoint(run_dir);
  p.model = io::load_model_config(p.checkpoint, &p.config_json);
  p.state = load_trainer_state(p.checkpoint);
  const io::VocabFiles vocab = io::vocab_files(p.checkpoint, p.config_json);
  p.source_spm = vocab.source;
  p.target_spm = vocab.target;
  return p;
}

RunConfig merge_for_resume(const RunConfig& now, const std::vector<std::string>& given, const ResumePoint& point) {
  const std::string file = (std::filesystem::path(point.checkpoint) / trainer_state_file_name).string();
  const nlohmann::json& saved = point.state.options;
  const nlohmann::json here = to_json(now);
  nlohmann::json merged = saved;
  for (const RunOption& option : run_options()) {
    if (std::find(given.begin(), given.end(), option.name) == given.end()) continue;
    for (const std::string& key : option.keys) {
      if (!option.trajectory) {
        merged[key] = here[key];
      } else if (saved.contains(key) && saved[key] != here[key]) {
        throw ConfigError(option_ref(option.name) + " differs from the run being resumed (" + key + ": " +
                              here[key].dump() + " here, " + saved[key].dump() + " in " + file + ")",
                          "leave " + option_ref(option.name) + " out to keep the run's value, or start a new run with " +
                              option_ref("output"));
      }
    }
  }
  return run_config_from_json(merged, file);
}

std::string config_diff(const nn::ModelConfig& a, const nn::ModelConfig& b) {
  const nlohmann::json ja = nn::to_json(a), jb = nn::to_json(b);
  std::string out;
  for (const auto& [key, value] : ja.items())
    if (!jb.contains(key) || jb[key] != value)
      out += (out.empty() ? "" : ", ") + key + ": " + value.dump() + " vs " + jb[key].dump();
  return out;
}

void check_same_model(nn::ModelConfig given, const ResumePoint& point) {
  given.vocab_size_src = point.model.vocab_size_src;
  given.vocab_size_tgt = point.model.vocab_size_tgt;
  given.shared_vocab = point.model.shared_vocab;
  if (const std::string diff = config_diff(given, point.model); !diff.empty())
    throw ConfigError("the model configuration differs from the run being resumed (" + diff + "; here vs " +
                          point.checkpoint + "/config.json)",
                      "resume without model options, or start a new run with " + option_ref("output"));
}

}  // namespace tt::train
