#include "train/run_config.h"

#include <charconv>
#include <cstdlib>
#include <type_traits>

#include "util/error.h"

namespace tt::train {

namespace {

// A float as the double with its shortest decimal form: 0.9f is written 0.9 (people read these files).
double json_float(float x) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

// Every option stored as a plain JSON value, with its key: one list for writing and reading.
// (adam_betas and lr_schedule are not plain values: see to_json / run_config_from_json.)
template <class Config, class Field>
void for_each_field(Config& c, Field&& field) {
  auto& d = c.data;
  auto& t = c.trainer;
  auto& r = c.run;
  field("train_src", d.train_src);
  field("train_tgt", d.train_tgt);
  field("train_more", d.train_more);
  field("corpus_weights", d.corpus_weights);
  field("spm_alpha", d.spm_alpha);
  field("spm_nbest", d.spm_nbest);
  field("valid_src", d.valid_src);
  field("valid_tgt", d.valid_tgt);
  field("source_spm", d.source_spm);
  field("target_spm", d.target_spm);
  field("max_len", d.filter.max_len);
  field("max_len_ratio", d.filter.max_len_ratio);
  field("batch_tokens", d.batch_tokens);
  field("accum", t.accum);
  field("clip_norm", t.clip_norm);
  field("weight_decay", t.adam.weight_decay);
  field("adam_eps", t.adam.eps);
  field("warmup_steps", t.schedule.warmup_steps);
  field("lr_scale", t.schedule.scale);
  field("lr", t.schedule.peak_lr);
  field("seed", t.seed);
  field("ema_decay", t.ema_decay);
  field("max_steps", r.max_steps);
  field("max_epochs", r.max_epochs);
  field("time_limit_s", r.time_limit_s);
  field("early_stop", r.early_stop);
  field("valid_every", r.valid_every);
  field("save_every", r.save_every);
  field("save_minutes", r.save_minutes);
  field("keep_last", r.keep_last);
  field("report_every", r.report_every);
  field("log", c.log);
  field("valid_metric", c.valid_metric);
}

}  // namespace

nlohmann::json to_json(const RunConfig& c) {
  nlohmann::json j = nlohmann::json::object();
  for_each_field(c, [&](const char* key, const auto& value) {
    if constexpr (std::is_same_v<std::decay_t<decltype(value)>, float>) j[key] = json_float(value);
    else j[key] = value;
  });
  j["adam_betas"] = {json_float(c.trainer.adam.beta1), json_float(c.trainer.adam.beta2)};
  j["lr_schedule"] = c.trainer.schedule.kind == LrScheduleKind::paper ? "paper" : "inverse-sqrt";
  return j;
}

RunConfig run_config_from_json(const nlohmann::json& j, const std::string& file) {
  RunConfig c;
  auto get = [&](const char* key, auto& field) {
    const auto it = j.find(key);
    if (it == j.end()) return;
    try {
      it->get_to(field);
    } catch (const nlohmann::json::exception&) {
      throw FormatError(file + ": training option '" + key + "' has the wrong type (" + it->dump() + ")");
    }
  };
  if (!j.is_object()) throw FormatError(file + ": training options must be a JSON object");
  for_each_field(c, get);
  if (j.contains("adam_betas")) {
    std::vector<float> betas;
    get("adam_betas", betas);
    if (betas.size() != 2) throw FormatError(file + ": 'adam_betas' must hold two numbers");
    c.trainer.adam.beta1 = betas[0];
    c.trainer.adam.beta2 = betas[1];
  }
  std::string schedule = "paper";
  get("lr_schedule", schedule);
  if (schedule != "paper" && schedule != "inverse-sqrt")
    throw FormatError(file + ": unknown lr_schedule '" + schedule + "' (paper or inverse-sqrt)");
  c.trainer.schedule.kind = schedule == "paper" ? LrScheduleKind::paper : LrScheduleKind::inverse_sqrt;
  if (c.valid_metric != "bleu" && c.valid_metric != "loss")
    throw FormatError(file + ": unknown valid_metric '" + c.valid_metric + "' (bleu or loss)");
  return c;
}

}  // namespace tt::train
