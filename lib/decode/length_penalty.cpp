#include "decode/length_penalty.h"

#include <cmath>

#include "util/error.h"

namespace tt::decode {

float length_penalty(LengthPenalty kind, float alpha, int length) {
  switch (kind) {
    case LengthPenalty::none:
      return 1.0f;
    case LengthPenalty::gnmt:
      return std::pow((5.0f + static_cast<float>(length)) / 6.0f, alpha);
    case LengthPenalty::power:
      return std::pow(static_cast<float>(length), alpha);
  }
  return 1.0f;
}

LengthPenalty parse_length_penalty(const std::string& name) {
  if (name == "none") return LengthPenalty::none;
  if (name == "gnmt") return LengthPenalty::gnmt;
  if (name == "power") return LengthPenalty::power;
  throw ConfigError("unknown length penalty '" + name + "'; expected none, gnmt or power");
}

std::string to_string(LengthPenalty kind) {
  switch (kind) {
    case LengthPenalty::none:
      return "none";
    case LengthPenalty::gnmt:
      return "gnmt";
    case LengthPenalty::power:
      return "power";
  }
  return "?";
}

}  // namespace tt::decode
