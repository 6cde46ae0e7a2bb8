// sacreBLEU's TercomTokenizer (TER's preprocessing): lowercasing unless case-sensitive, optional
// tercom normalization (XML unescaping, western punctuation splitting, CJK splitting with
// --ter-asian-support) and punctuation removal; whitespace normalised.
#pragma once

#include <string>
#include <string_view>

namespace tt::metrics {

struct TercomOptions {
  bool normalized = false;
  bool no_punct = false;
  bool asian_support = false;
  bool case_sensitive = false;
};

std::string tercom_tokenize(const TercomOptions& options, std::string_view sentence);

}  // namespace tt::metrics
