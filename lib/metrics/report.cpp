#include "metrics/report.h"

#include <algorithm>
#include <cstdio>
#include <nlohmann/json.hpp>

namespace tt::metrics {

std::string fixed(double value, int width) {
  char buf[512];
  std::snprintf(buf, sizeof buf, "%.*f", std::clamp(width, 0, 100), value);
  return buf;
}

std::string format_score(const Score& score, const Signature& signature, const FormatOptions& options,
                         const std::optional<Confidence>& confidence) {
  std::string sc = fixed(score.score, options.width);
  nlohmann::ordered_json d;
  d["name"] = score.name;
  d["score"] = std::stod(sc);
  d["signature"] = signature.format();
  const std::string sig = signature.format(options.short_signature && !options.json);
  if (confidence && confidence->mean > 0) {
    std::string mean = fixed(confidence->mean, options.width), var = fixed(confidence->ci, options.width);
    std::string text = "\xCE\xBC = " + mean + " \xC2\xB1 " + var;
    sc += " (" + text + ")";
    d["confidence_mean"] = std::stod(mean);
    d["confidence_var"] = std::stod(var);
    d["confidence"] = text;
  }
  std::string full = (sig.empty() ? score.name : score.name + "|" + sig) + " = " + sc;
  if (!score.verbose.empty()) {
    full += " " + score.verbose;
    d["verbose_score"] = score.verbose;
  }
  if (options.score_only) return sc;
  if (options.json) {
    for (const auto& [key, value] : signature.items()) d[key] = value;
    return options.one_line ? d.dump() : d.dump(1);
  }
  return full;
}

std::string join_results(const std::vector<std::string>& results, bool json) {
  std::string out;
  if (results.empty()) return out;
  if (json) {
    if (results.size() == 1) return results[0];
    out = "[\n";
    for (size_t k = 0; k < results.size(); ++k) out += (k ? ",\n" : "") + results[k];
    return out + "\n]";
  }
  if (results.size() == 1) return results[0];
  // Right-align the part before " = " (sacreBLEU aligns on the first '=' of each line).
  std::vector<long> lens;
  std::vector<std::string> plain;
  for (const auto& line : results) {
    size_t eq = line.find('=');
    if (eq == std::string::npos) {
      plain.push_back(line);
    } else {
      lens.push_back(static_cast<long>(eq) - 1);
    }
  }
  for (const auto& line : plain) out += line + "\n";
  if (!lens.empty()) {
    long w = *std::max_element(lens.begin(), lens.end());
    // sacreBLEU zips lens with all results, so lines are paired with lens in order
    for (size_t k = 0; k < lens.size(); ++k) {
      const std::string& line = results[k];
      std::string left = line.substr(0, static_cast<size_t>(std::max(0L, lens[k])));
      std::string right = line.substr(left.size());
      // Python pads by code points, not bytes
      size_t cps = 0;
      for (unsigned char c : left) cps += (c & 0xC0) != 0x80;
      out += std::string(static_cast<size_t>(std::max(0L, w - static_cast<long>(cps))), ' ') + left + right + "\n";
    }
  }
  if (!out.empty() && out.back() == '\n') out.pop_back();
  return out;
}

}  // namespace tt::metrics
