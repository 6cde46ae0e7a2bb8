#include "io/checkpoint_selection.h"

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace tt::io {

namespace fs = std::filesystem;

namespace {

// "step-001200" -> 1200; anything else (temporaries "step-001200.tmp.1.2", other names) -> nullopt.
std::optional<int64_t> parse_step_name(const std::string& name) {
  const std::string prefix = "step-";
  if (name.size() <= prefix.size() || name.compare(0, prefix.size(), prefix) != 0) return std::nullopt;
  const std::string digits = name.substr(prefix.size());
  if (digits.size() > 18 || !std::all_of(digits.begin(), digits.end(), [](char c) { return c >= '0' && c <= '9'; }))
    return std::nullopt;
  return std::stoll(digits);
}

std::string clean_path(const std::string& dir) {
  fs::path p = fs::path(dir).lexically_normal();
  if (p.has_parent_path() && p.filename().empty()) p = p.parent_path();
  return p.string();
}

CheckpointSelection take(std::vector<CheckpointInfo> ranked, int n, const std::string& what) {
  if (n < 1) throw Error("the number of checkpoints to average must be at least 1 (got " + std::to_string(n) + ")");
  CheckpointSelection s;
  if (ranked.size() < static_cast<size_t>(n))
    s.notes.push_back("only " + std::to_string(ranked.size()) + " " + what + " of the " + std::to_string(n) +
                      " asked for; averaging " + std::to_string(ranked.size()));
  else
    ranked.resize(static_cast<size_t>(n));
  std::sort(ranked.begin(), ranked.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) {
    return a.step != b.step ? a.step < b.step : a.dir < b.dir;
  });
  s.checkpoints = std::move(ranked);
  return s;
}

}  // namespace

std::vector<CheckpointInfo> list_checkpoints(const std::string& run_dir) {
  const fs::path dir = fs::path(clean_path(run_dir)) / "checkpoints";
  std::error_code ec;
  if (!fs::is_directory(dir, ec))
    throw IoError(clean_path(run_dir) + " has no checkpoints folder (" + dir.string() + ")",
                  "give the run directory that tt-train wrote (the one holding checkpoints/, last, log.jsonl)");
  std::vector<CheckpointInfo> out;
  for (fs::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    const auto step = parse_step_name(it->path().filename().string());
    std::error_code type_ec;
    if (step && it->is_directory(type_ec)) out.push_back(CheckpointInfo{*step, it->path().string(), std::nullopt});
  }
  if (ec) throw IoError("cannot list " + dir.string() + ": " + ec.message());
  std::sort(out.begin(), out.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) {
    return a.step != b.step ? a.step < b.step : a.dir < b.dir;
  });
  return out;
}

CheckpointSelection select_last_checkpoints(const std::string& run_dir, int n) {
  std::vector<CheckpointInfo> all = list_checkpoints(run_dir);
  if (all.empty())
    throw IoError("no checkpoints in " + (fs::path(clean_path(run_dir)) / "checkpoints").string(),
                  "let the run save at least one checkpoint first");
  std::reverse(all.begin(), all.end());  // latest first
  return take(std::move(all), n, "checkpoints exist");
}

CheckpointSelection select_best_checkpoints(const std::string& run_dir, int n, const std::string& log_path) {
  std::vector<CheckpointInfo> all = list_checkpoints(run_dir);
  const std::string log = log_path.empty() ? (fs::path(clean_path(run_dir)) / "log.jsonl").string() : log_path;
  std::ifstream in(log, std::ios::binary);
  if (!in)
    throw IoError("cannot open " + log, "the run's validation log is needed to pick the best checkpoints");
  const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());

  std::map<int64_t, size_t> by_step;
  std::map<std::string, size_t> by_path;
  for (size_t i = 0; i < all.size(); ++i) {
    by_step.emplace(all[i].step, i);
    by_path.emplace(fs::path(all[i].dir).lexically_normal().string(), i);
  }
  std::vector<std::string> notes;
  size_t deleted = 0;
  size_t start = 0;
  for (int line_no = 1; start < text.size(); ++line_no) {
    size_t end = text.find('\n', start);
    const bool terminated = end != std::string::npos;
    if (!terminated) end = text.size();
    const std::string line = text.substr(start, end - start);
    start = end + 1;
    if (line.find_first_not_of(" \t\r") == std::string::npos) continue;
    const std::string where = log + ":" + std::to_string(line_no);
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const nlohmann::json::exception&) {
      if (!terminated) {
        notes.push_back(where + ": unterminated last line (a crash mid-write?) passed over");
        break;
      }
      throw FormatError(where + ": not valid JSON", "each line of the log must be one JSON object");
    }
    if (!j.is_object()) throw FormatError(where + ": not a JSON object", "each line of the log must be one JSON object");
    if (j.value("type", nlohmann::json()) != "valid") continue;
    auto bleu = j.find("bleu");
    if (bleu == j.end() || !bleu->is_number()) continue;

    std::optional<size_t> index;
    auto ckpt = j.find("checkpoint");
    if (ckpt != j.end() && !ckpt->is_null()) {
      if (!ckpt->is_string()) throw FormatError(where + ": \"checkpoint\" must be a path (a string)");
      // Matched by step number when the name is step-N (the run may have moved since it was logged).
      const std::string given = clean_path(ckpt->get<std::string>());
      if (auto step = parse_step_name(fs::path(given).filename().string())) {
        if (auto it = by_step.find(*step); it != by_step.end()) index = it->second;
      } else if (auto it = by_path.find((fs::path(clean_path(run_dir)) / given).lexically_normal().string());
                 it != by_path.end()) {
        index = it->second;
      }
    } else if (ckpt == j.end() && j.contains("step") && j["step"].is_number_integer()) {
      if (auto it = by_step.find(j["step"].get<int64_t>()); it != by_step.end()) index = it->second;
    } else {
      continue;  // validated but not saved
    }
    if (!index) {
      ++deleted;
      continue;
    }
    all[*index].bleu = bleu->get<double>();  // a later line (re-validation after a resume) wins
  }

  std::vector<CheckpointInfo> ranked;
  for (const auto& c : all)
    if (c.bleu) ranked.push_back(c);
  if (ranked.empty())
    throw FormatError(log + ": no validation BLEU for any checkpoint in " +
                          (fs::path(clean_path(run_dir)) / "checkpoints").string(),
                      "select the last checkpoints instead, or validate with BLEU");
  if (deleted)
    notes.push_back(std::to_string(deleted) + " validation line(s) name a checkpoint that no longer exists; passed over");
  std::stable_sort(ranked.begin(), ranked.end(), [](const CheckpointInfo& a, const CheckpointInfo& b) {
    return *a.bleu != *b.bleu ? *a.bleu > *b.bleu : a.step > b.step;
  });
  CheckpointSelection s = take(std::move(ranked), n, "validated checkpoints exist");
  notes.insert(notes.end(), s.notes.begin(), s.notes.end());
  s.notes = std::move(notes);
  return s;
}

}  // namespace tt::io
