// Text forms of subword sequences as tt-tokenize reads them: space-separated tokens and id lines.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tt::data {

// Space-separated tokens of a line, empty tokens skipped (as spm_decode splits).
std::vector<std::string> split_tokens(std::string_view line);

// Parses a line of space-separated decimal ids into `ids` (cleared first). A CR at the end of the line
// (a CRLF file) is ignored, as spm_decode's number parsing accepts it. Anything else that is not a
// 32-bit integer throws tt::FormatError "'<token>' is not an id", control characters shown as \r, \t, \xNN.
void parse_id_line(std::string_view line, std::vector<int>& ids);

// `s` with control characters spelled out (\r, \t, \x01), so a message shows what is really there.
std::string visible_text(std::string_view s);

}  // namespace tt::data
