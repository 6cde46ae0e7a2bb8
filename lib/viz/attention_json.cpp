#include "viz/attention_json.h"

#include <charconv>
#include <nlohmann/json.hpp>

#include "util/error.h"

namespace tt::viz {

namespace {

void append_string(std::string& out, const std::string& s) { out += nlohmann::json(s).dump(); }

void append_strings(std::string& out, const std::vector<std::string>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    append_string(out, v[i]);
  }
  out += ']';
}

void append_ints(std::string& out, const std::vector<int>& v) {
  out += '[';
  for (size_t i = 0; i < v.size(); ++i) {
    if (i) out += ',';
    out += std::to_string(v[i]);
  }
  out += ']';
}

// [rows][cols] starting at p.
void append_matrix(std::string& out, const float* p, int rows, int cols, int precision) {
  out += '[';
  for (int r = 0; r < rows; ++r) {
    out += r ? ",[" : "[";
    for (int c = 0; c < cols; ++c) {
      if (c) out += ',';
      append_number(out, p[static_cast<size_t>(r) * cols + c], precision);
    }
    out += ']';
  }
  out += ']';
}

// One layer's heads: [heads][rows][cols]; bertviz wraps it in a batch of one.
void append_layer(std::string& out, const MapSet& m, size_t layer, int precision, bool batch_of_one) {
  const size_t size = static_cast<size_t>(m.rows) * m.cols;
  if (batch_of_one) out += '[';
  out += '[';
  for (int h = 0; h < m.heads; ++h) {
    if (h) out += ',';
    append_matrix(out, m.data.data() + (layer * m.heads + h) * size, m.rows, m.cols, precision);
  }
  out += ']';
  if (batch_of_one) out += ']';
}

const char* key(Kind k, JsonLayout layout) {
  if (layout == JsonLayout::json) return kind_name(k);
  return k == Kind::encoder_self ? "encoder_attention" : k == Kind::decoder_self ? "decoder_attention" : "cross_attention";
}

}  // namespace

void append_number(std::string& out, float value, int precision) {
  char buf[64];
  auto [end, ec] = std::to_chars(buf, buf + sizeof buf, value, std::chars_format::fixed, precision);
  if (ec != std::errc()) throw InternalError("append_number: cannot format a weight");
  char* last = end;
  if (precision > 0) {
    while (last[-1] == '0') --last;
    if (last[-1] == '.') --last;
  }
  if (last - buf == 2 && buf[0] == '-' && buf[1] == '0') {  // -0 (a tiny negative rounded) prints as 0
    out += '0';
    return;
  }
  out.append(buf, last);
}

std::string json_line(const AttentionView& v, const SentenceInfo& info, int precision, JsonLayout layout) {
  if (precision < 0 || precision > 9) throw ConfigError("precision " + std::to_string(precision) + " must be in [0, 9]");
  const bool bertviz = layout == JsonLayout::bertviz;
  std::string out = "{\"id\":" + std::to_string(info.id);
  out += bertviz ? ",\"encoder_tokens\":" : ",\"src_tokens\":";
  append_strings(out, v.src_tokens);
  out += bertviz ? ",\"decoder_tokens\":" : ",\"tgt_tokens\":";
  append_strings(out, v.tgt_tokens);
  out += ",\"translation\":";
  append_string(out, info.translation);
  if (info.score) {
    out += ",\"score\":";
    append_number(out, *info.score, 6);
  }
  if (!bertviz) {
    out += ",\"heads\":";
    append_ints(out, v.heads);
    out += ",\"reduce\":";
    out += v.reduce == Reduce::none ? "null" : std::string("\"") + reduce_name(v.reduce) + "\"";
  }
  for (const MapSet& m : v.maps) {
    if (!bertviz) {
      out += ",\"" + std::string(kind_name(m.kind)) + "_layers\":";
      append_ints(out, m.layers);
    }
    out += ",\"" + std::string(key(m.kind, layout)) + "\":[";
    for (size_t l = 0; l < m.layers.size(); ++l) {
      if (l) out += ',';
      append_layer(out, m, l, precision, bertviz);
    }
    out += ']';
  }
  out += "}\n";
  return out;
}

}  // namespace tt::viz
