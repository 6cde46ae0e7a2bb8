// Length penalties that normalise a finished hypothesis's log-probability: score = log_prob / penalty(L),
// L = target tokens including </s>.
//   gnmt:  ((5 + L) / 6)^alpha   (Wu et al. 2016, eq. 14; what the Transformer paper used, alpha 0.6)
//   power: L^alpha               (CTranslate2's and fairseq's form)
//   none:  1
#pragma once

#include <string>

namespace tt::decode {

enum class LengthPenalty { none, gnmt, power };

float length_penalty(LengthPenalty kind, float alpha, int length);
// score of a hypothesis of `length` tokens with summed log-probability `log_prob`
inline float normalized_score(LengthPenalty kind, float alpha, float log_prob, int length) {
  return log_prob / length_penalty(kind, alpha, length);
}

// "none", "gnmt", "power" <-> the enum; an unknown name throws tt::ConfigError listing the valid ones.
LengthPenalty parse_length_penalty(const std::string& name);
std::string to_string(LengthPenalty kind);

}  // namespace tt::decode
