#include "train/progress_printer.h"

#include <cstdio>

namespace tt::train {

std::string format_duration(double seconds) {
  char b[32];
  const long t = static_cast<long>(seconds + 0.5);
  if (t >= 3600) std::snprintf(b, sizeof b, "%ldh%02ldm", t / 3600, t / 60 % 60);
  else if (t >= 60) std::snprintf(b, sizeof b, "%ldm%02lds", t / 60, t % 60);
  else std::snprintf(b, sizeof b, "%lds", t);
  return b;
}

void ProgressPrinter::step(const StepView& v) {
  if (!live_) return;
  const auto now = std::chrono::steady_clock::now();
  if (now - last_ < std::chrono::milliseconds(200)) return;
  last_ = now;
  char line[200];
  std::snprintf(line, sizeof line, "\repoch %.2f  step %lld  loss %.4f  ppl %.2f  lr %.3g  %.0f tgt tok/s  ETA %s\033[K",
                v.epoch, static_cast<long long>(v.stats.step), v.stats.loss(), v.stats.ppl(), v.stats.lr, v.tgt_tok_s,
                v.eta_s < 0 ? "-" : format_duration(v.eta_s).c_str());
  out_ << line << std::flush;
  shown_ = true;
}

void ProgressPrinter::record(const nlohmann::json& j) {
  if (quiet_) return;
  const std::string type = j["type"];
  char line[400];
  if (type == "train") {
    if (live_) return;  // the live line shows it
    std::snprintf(line, sizeof line, "epoch %.2f  step %lld  loss %.4f  ppl %.2f  lr %.3g  %.0f tgt tok/s  %s",
                  j["epoch"].get<double>(), j["step"].get<long long>(), j["loss"].get<double>(),
                  j["ppl"].get<double>(), j["lr"].get<double>(), j["tgt_tok_s"].get<double>(),
                  format_duration(j["elapsed_s"].get<double>()).c_str());
  } else if (type == "valid") {
    char bleu[32] = "";
    if (j.contains("bleu")) std::snprintf(bleu, sizeof bleu, "  bleu %.2f", j["bleu"].get<double>());
    std::snprintf(line, sizeof line, "valid step %lld  loss %.4f  ppl %.2f%s  -> %s%s", j["step"].get<long long>(),
                  j["loss"].get<double>(), j["ppl"].get<double>(), bleu, j["checkpoint"].get<std::string>().c_str(),
                  j["best"].get<bool>() ? " (best)" : "");
  } else if (type == "save") {
    std::snprintf(line, sizeof line, "saved %s", j["checkpoint"].get<std::string>().c_str());
  } else if (type == "end" && j["reason"] != "error") {  // errors are the tool's one message
    std::snprintf(line, sizeof line, "stopped at step %lld (%s) after %s; last checkpoint %s",
                  j["step"].get<long long>(), j["reason"].get<std::string>().c_str(),
                  format_duration(j["elapsed_s"].get<double>()).c_str(), j["checkpoint"].get<std::string>().c_str());
  } else {
    return;
  }
  clear();
  out_ << "tt-train: " << line << "\n";
}

void ProgressPrinter::clear() {
  if (shown_) out_ << "\r\033[K" << std::flush;
  shown_ = false;
}

}  // namespace tt::train
