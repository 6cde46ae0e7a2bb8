#include "metrics/results_table.h"

#include <algorithm>
#include <charconv>
#include <cmath>
#include <cstdio>
#include <sstream>

#include "metrics/report.h"

namespace tt::metrics {

namespace {

size_t display_width(const std::string& s) {
  size_t n = 0;
  for (unsigned char c : s) n += (c & 0xC0) != 0x80;
  return n;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> lines;
  std::stringstream in(s);
  std::string line;
  while (std::getline(in, line)) lines.push_back(line);
  if (lines.empty()) lines.emplace_back();
  return lines;
}

std::string repeat(const std::string& unit, size_t n) {
  std::string out;
  for (size_t k = 0; k < n; ++k) out += unit;
  return out;
}

// Python's "{:>w}" and "{:^w}" on display width.
std::string align(const std::string& s, size_t w, bool right) {
  size_t len = display_width(s);
  if (len >= w) return s;
  size_t pad = w - len;
  if (right) return std::string(pad, ' ') + s;
  size_t left = pad / 2;
  return std::string(left, ' ') + s + std::string(pad - left, ' ');
}

// tabulate(..., tablefmt="fancy_grid", colalign=("right",), stralign="center", numalign="center").
std::string fancy_grid(const std::vector<std::string>& headers, const std::vector<std::vector<std::string>>& rows) {
  const size_t n_cols = headers.size();
  std::vector<size_t> widths(n_cols);
  for (size_t c = 0; c < n_cols; ++c) {
    widths[c] = display_width(headers[c]) + 2;  // tabulate's MIN_PADDING for headers
    for (const auto& row : rows) {
      for (const auto& line : split_lines(row[c])) widths[c] = std::max(widths[c], display_width(line));
    }
  }
  auto rule = [&](const char* left, const char* fill, const char* mid, const char* right) {
    std::string out = left;
    for (size_t c = 0; c < n_cols; ++c) out += repeat(fill, widths[c] + 2) + (c + 1 < n_cols ? mid : right);
    return out + "\n";
  };
  auto render = [&](const std::vector<std::string>& cells) {
    std::vector<std::vector<std::string>> lines(n_cols);
    size_t height = 1;
    for (size_t c = 0; c < n_cols; ++c) {
      lines[c] = split_lines(cells[c]);
      height = std::max(height, lines[c].size());
    }
    std::string out;
    for (size_t h = 0; h < height; ++h) {
      out += "\xE2\x94\x82";
      for (size_t c = 0; c < n_cols; ++c) {
        std::string text = h < lines[c].size() ? lines[c][h] : "";
        out.append(1, ' ').append(align(text, widths[c], c == 0)).append(" \xE2\x94\x82");
      }
      out += "\n";
    }
    return out;
  };
  std::string out = rule("\xE2\x95\x92", "\xE2\x95\x90", "\xE2\x95\xA4", "\xE2\x95\x95");
  out += render(headers);
  out += rule("\xE2\x95\x9E", "\xE2\x95\x90", "\xE2\x95\xAA", "\xE2\x95\xA1");
  for (size_t r = 0; r < rows.size(); ++r) {
    out += render(rows[r]);
    if (r + 1 < rows.size()) out += rule("\xE2\x94\x9C", "\xE2\x94\x80", "\xE2\x94\xBC", "\xE2\x94\xA4");
  }
  out += rule("\xE2\x95\x98", "\xE2\x95\x90", "\xE2\x95\xA7", "\xE2\x95\x9B");
  return out;
}

std::string json_string(const std::string& s) {
  // json.dumps with ensure_ascii=True
  std::string out = "\"";
  for (size_t i = 0; i < s.size();) {
    unsigned char c = static_cast<unsigned char>(s[i]);
    char32_t cp = c;
    size_t len = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
    if (len > 1) {
      cp = c & (0x3F >> (len - 1));
      for (size_t k = 1; k < len && i + k < s.size(); ++k) cp = (cp << 6) | (static_cast<unsigned char>(s[i + k]) & 0x3F);
    }
    i += len;
    char buf[16];
    if (cp == '"') out += "\\\"";
    else if (cp == '\\') out += "\\\\";
    else if (cp == '\n') out += "\\n";
    else if (cp == '\t') out += "\\t";
    else if (cp == '\r') out += "\\r";
    else if (cp >= 0x20 && cp < 0x7F) out.push_back(static_cast<char>(cp));
    else if (cp >= 0x10000) {
      char32_t v = cp - 0x10000;
      std::snprintf(buf, sizeof buf, "\\u%04x\\u%04x", 0xD800 + (v >> 10), 0xDC00 + (v & 0x3FF));
      out += buf;
    } else {
      std::snprintf(buf, sizeof buf, "\\u%04x", static_cast<unsigned>(cp));
      out += buf;
    }
  }
  return out + "\"";
}

std::string json_number(const std::optional<double>& v) { return v ? python_float_repr(*v) : "null"; }

}  // namespace

std::string python_float_repr(double value) {
  if (value != value) return "NaN";
  if (value == 0) return std::signbit(value) ? "-0.0" : "0.0";
  char buf[64];
  auto res = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::scientific);
  std::string sci(buf, res.ptr);  // d.ddde[+-]XX
  size_t e = sci.find('e');
  int exponent = std::stoi(sci.substr(e + 1));
  bool negative = sci[0] == '-';
  std::string digits;
  for (size_t k = negative ? 1 : 0; k < e; ++k) {
    if (sci[k] != '.') digits.push_back(sci[k]);
  }
  std::string out = negative ? "-" : "";
  if (exponent < -4 || exponent >= 16) {
    out += digits.substr(0, 1);
    if (digits.size() > 1) out.append(1, '.').append(digits, 1);
    char exp_buf[16];
    std::snprintf(exp_buf, sizeof exp_buf, "e%c%02d", exponent < 0 ? '-' : '+', std::abs(exponent));
    return out + exp_buf;
  }
  if (exponent < 0) return out.append("0.").append(static_cast<size_t>(-exponent - 1), '0').append(digits);
  size_t int_len = static_cast<size_t>(exponent) + 1;
  if (digits.size() <= int_len) return out + digits + std::string(int_len - digits.size(), '0') + ".0";
  return out + digits.substr(0, int_len) + "." + digits.substr(int_len);
}

std::string format_systems_report(const SystemsReport& report, int width, bool json) {
  const size_t n_sys = report.systems.size(), n_metrics = report.metric_names.size();
  if (json) {
    std::string out = "[\n";
    for (size_t s = 0; s < n_sys; ++s) {
      out += "    {\n        \"system\": " + json_string(report.systems[s]);
      for (size_t m = 0; m < n_metrics; ++m) {
        const PairedResult& r = report.results[m][s];
        out += ",\n        " + json_string(report.metric_names[m]) + ": ";
        if (report.paired) {
          out += "{\n            \"score\": " + python_float_repr(r.score) + ",\n            \"p_value\": " +
                 json_number(r.p_value) + ",\n            \"mean\": " + json_number(r.mean) +
                 ",\n            \"ci\": " + json_number(r.ci) + "\n        }";
        } else {
          out += json_string(fixed(r.score, width));
        }
      }
      out += "\n    }" + std::string(s + 1 < n_sys ? "," : "") + "\n";
    }
    return out + "]\n";
  }
  bool bootstrap = false;
  std::vector<std::string> headers{"System"};
  std::vector<std::vector<std::string>> rows(n_sys);
  for (size_t s = 0; s < n_sys; ++s) rows[s].push_back(report.systems[s]);
  for (size_t m = 0; m < n_metrics; ++m) {
    for (size_t s = 0; s < n_sys; ++s) {
      const PairedResult& r = report.results[m][s];
      std::string cell = fixed(r.score, width);
      if (r.mean) {
        bootstrap = true;
        cell += " (" + fixed(*r.mean, width) + " \xC2\xB1 " + fixed(r.ci.value_or(0.0), width) + ")";
      }
      if (r.p_value) {
        char buf[64];
        std::snprintf(buf, sizeof buf, "(p = %.4f)", *r.p_value);
        cell.append(1, '\n').append(buf).append(*r.p_value > 0.05 ? "" : "*");
      }
      rows[s].push_back(cell);
    }
    headers.push_back(report.metric_names[m] + (bootstrap ? " (\xCE\xBC \xC2\xB1 95% CI)" : ""));
  }
  std::string out = fancy_grid(headers, rows) + "\n";
  if (report.paired) {
    bool bs = report.test == PairedTest::bootstrap;
    std::string msg = std::string("Paired ") + (bs ? "bootstrap resampling" : "approximate randomization") +
                      " test with " + std::to_string(report.n_samples) + (bs ? " resampling trials" : " trials");
    std::string dashes(msg.size(), '-');
    out += dashes + "\n" + msg + "\n" + dashes + "\n";
    out += " - Each system is pairwise compared to " + report.systems[0] + ".\n";
    out += bs ? "   Actual system score / bootstrap estimated true mean / 95% CI are provided for each metric.\n"
              : "   Actual system score is provided for each metric.\n";
    out +=
        "\n"
        " - Null hypothesis: the system and the baseline translations are essentially\n"
        "   generated by the same underlying process. For a given system and the baseline,\n"
        "   the p-value is roughly the probability of the absolute score difference (delta)\n"
        "   or higher occurring due to chance, under the assumption that the null hypothesis is correct.\n"
        "\n"
        " - Assuming a significance threshold of 0.05, the null hypothesis can be rejected\n"
        "   for p-values < 0.05 (marked with \"*\"). This means that the delta is unlikely to be attributed\n"
        "   to chance, hence the system is significantly \"different\" than the baseline.\n"
        "   Otherwise, the p-values are highlighted in red.\n"
        "\n"
        " - NOTE: Significance does not tell whether a system is \"better\" than the baseline but rather\n"
        "   emphasizes the \"difference\" of the systems in terms of the replicability of the delta.\n"
        "\n";
  }
  out += "-----------------\nMetric signatures\n-----------------\n";
  for (size_t m = 0; m < n_metrics; ++m) {
    std::string name = report.metric_names[m];
    if (name.size() < 10) name += std::string(10 - name.size(), ' ');
    out += " - " + name + " " + report.signatures[m] + "\n";
  }
  return out;
}

}  // namespace tt::metrics
