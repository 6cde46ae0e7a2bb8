// sacreBLEU's BLEU tokenizers, reproduced character for character: 13a (mteval-v13a, the default), intl
// (mteval-v14 international: Unicode punctuation and symbols), zh (CJK characters split, then 13a rules),
// char (every character a token) and none. Each returns the tokenized line; BLEU then splits it on
// Python whitespace.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace tt::metrics {

enum class Tokenizer { none, t13a, intl, zh, character };

// "13a", "intl", "zh", "char", "none" — the names sacreBLEU's -tok accepts (and signatures print).
const std::vector<std::string>& tokenizer_names();
// Throws tt::ConfigError listing the valid names.
Tokenizer parse_tokenizer(const std::string& name);
std::string tokenizer_name(Tokenizer tokenizer);

// With normalize = false the final ' '.join(s.split()) is skipped: the result splits (on Python
// whitespace) into the same tokens, which is all BLEU needs.
std::string tokenize(Tokenizer tokenizer, std::string_view line, bool normalize = true);

std::string tokenize_13a(std::string_view line, bool normalize = true);
std::string tokenize_intl(std::string_view line, bool normalize = true);
std::string tokenize_zh(std::string_view line, bool normalize = true);
std::string tokenize_char(std::string_view line);

// The regular expressions shared by 13a and zh (sacreBLEU's TokenizerRegexp): ASCII punctuation split
// off, period and comma split unless between digits, dash split after a digit; whitespace normalised.
std::string mteval_post_tokenize(std::string_view line, bool normalize = true);

// Python's str.replace(from, to).
void replace_all(std::string& s, std::string_view from, std::string_view to);

}  // namespace tt::metrics
