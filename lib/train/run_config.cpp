#include "train/run_config.h"

#include <charconv>
#include <cstdlib>

#include "util/error.h"

namespace tt::train {

namespace {

// A float as the double with its shortest decimal form: 0.9f is written 0.9 (people read these files).
double json_float(float x) {
  char buf[32];
  auto r = std::to_chars(buf, buf + sizeof buf, x);
  return std::strtod(std::string(buf, r.ptr).c_str(), nullptr);
}

}  // namespace

nlohmann::json to_json(const RunConfig& c) {
  const auto& d = c.data;
  const auto& t = c.trainer;
  const auto& r = c.run;
  return {{"train_src", d.train_src},
          {"train_tgt", d.train_tgt},
          {"valid_src", d.valid_src},
          {"valid_tgt", d.valid_tgt},
          {"source_spm", d.source_spm},
          {"target_spm", d.target_spm},
          {"max_len", d.filter.max_len},
          {"max_len_ratio", d.filter.max_len_ratio},
          {"batch_tokens", d.batch_tokens},
          {"accum", t.accum},
          {"clip_norm", t.clip_norm},
          {"weight_decay", json_float(t.adam.weight_decay)},
          {"adam_betas", {json_float(t.adam.beta1), json_float(t.adam.beta2)}},
          {"adam_eps", json_float(t.adam.eps)},
          {"lr_schedule", t.schedule.kind == LrScheduleKind::paper ? "paper" : "inverse-sqrt"},
          {"warmup_steps", t.schedule.warmup_steps},
          {"lr_scale", t.schedule.scale},
          {"lr", t.schedule.peak_lr},
          {"seed", t.seed},
          {"max_steps", r.max_steps},
          {"max_epochs", r.max_epochs},
          {"time_limit_s", r.time_limit_s},
          {"early_stop", r.early_stop},
          {"valid_every", r.valid_every},
          {"save_every", r.save_every},
          {"save_minutes", r.save_minutes},
          {"keep_last", r.keep_last},
          {"report_every", r.report_every},
          {"log", c.log},
          {"valid_metric", c.valid_metric}};
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
  auto& d = c.data;
  auto& t = c.trainer;
  auto& r = c.run;
  get("train_src", d.train_src);
  get("train_tgt", d.train_tgt);
  get("valid_src", d.valid_src);
  get("valid_tgt", d.valid_tgt);
  get("source_spm", d.source_spm);
  get("target_spm", d.target_spm);
  get("max_len", d.filter.max_len);
  get("max_len_ratio", d.filter.max_len_ratio);
  get("batch_tokens", d.batch_tokens);
  get("accum", t.accum);
  get("clip_norm", t.clip_norm);
  get("weight_decay", t.adam.weight_decay);
  get("adam_eps", t.adam.eps);
  if (j.contains("adam_betas")) {
    std::vector<float> betas;
    get("adam_betas", betas);
    if (betas.size() != 2) throw FormatError(file + ": 'adam_betas' must hold two numbers");
    t.adam.beta1 = betas[0];
    t.adam.beta2 = betas[1];
  }
  std::string schedule = "paper";
  get("lr_schedule", schedule);
  if (schedule != "paper" && schedule != "inverse-sqrt")
    throw FormatError(file + ": unknown lr_schedule '" + schedule + "' (paper or inverse-sqrt)");
  t.schedule.kind = schedule == "paper" ? LrScheduleKind::paper : LrScheduleKind::inverse_sqrt;
  get("warmup_steps", t.schedule.warmup_steps);
  get("lr_scale", t.schedule.scale);
  get("lr", t.schedule.peak_lr);
  get("seed", t.seed);
  get("max_steps", r.max_steps);
  get("max_epochs", r.max_epochs);
  get("time_limit_s", r.time_limit_s);
  get("early_stop", r.early_stop);
  get("valid_every", r.valid_every);
  get("save_every", r.save_every);
  get("save_minutes", r.save_minutes);
  get("keep_last", r.keep_last);
  get("report_every", r.report_every);
  get("log", c.log);
  get("valid_metric", c.valid_metric);
  if (c.valid_metric != "bleu" && c.valid_metric != "loss")
    throw FormatError(file + ": unknown valid_metric '" + c.valid_metric + "' (bleu or loss)");
  return c;
}

}  // namespace tt::train
