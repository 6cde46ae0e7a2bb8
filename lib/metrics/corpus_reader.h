// Reads hypothesis and reference files the way sacreBLEU does: UTF-8 (invalid bytes are an error naming
// file and line), lines split at LF only, trailing (Unicode) whitespace stripped, a BOM kept as text.
#pragma once

#include <string>
#include <vector>

namespace tt::metrics {

// Path "-" reads stdin. Throws tt::IoError (missing file) or tt::FormatError (invalid UTF-8, with line).
std::vector<std::string> read_corpus(const std::string& path);

// Throws tt::FormatError naming both files and both line counts when they differ.
void check_same_length(const std::vector<std::string>& hyps, const std::string& hyp_name,
                       const std::vector<std::string>& refs, const std::string& ref_name);

// "<stdin>" for "-", else the path.
std::string display_name(const std::string& path);

}  // namespace tt::metrics
