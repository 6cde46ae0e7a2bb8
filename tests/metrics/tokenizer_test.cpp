// Tokenizer outputs checked against sacreBLEU 2.6.0 (values printed by its Tokenizer13a,
// TokenizerV14International, TokenizerZh and TercomTokenizer for the same inputs).
#include <catch2/catch.hpp>

#include "metrics/tercom_tokenizer.h"
#include "metrics/tokenizer.h"
#include "metrics/unicode_text.h"
#include "util/error.h"

using namespace tt::metrics;

TEST_CASE("13a splits ASCII punctuation, keeps numbers and unescapes XML", "[metrics]") {
  CHECK(tokenize_13a("It costs $1,000.50 -- or 3-4 euros (approx.) &amp; more.") ==
        "It costs $ 1,000.50 -- or 3 - 4 euros ( approx . ) & more .");
  CHECK(tokenize_13a("a.. b,, 1.5. x.y 2,b") == "a . . b , , 1.5 . x . y 2 , b");
  CHECK(tokenize_13a("Hello, world! <skipped> &quot;x&quot;") == "Hello , world ! \" x \"");
  CHECK(tokenize_13a("Москва — 2021 год.") == "Москва — 2021 год .");
  CHECK(tokenize_13a("price: 5€ or ¥600 + tax") == "price : 5€ or ¥600 + tax");
  // U+00A0 and U+3000 are whitespace for Python's str.split(); U+200B is not
  CHECK(tokenize_13a("a\u00a0b\u3000c\u200bd") == "a b c\u200bd");
  CHECK(tokenize_13a("") == "");
  CHECK(tokenize_13a("!!! ... ???") == "! ! ! . . . ? ? ?");
}

TEST_CASE("intl splits Unicode punctuation and symbols except inside numbers", "[metrics]") {
  CHECK(tokenize_intl("It costs $1,000.50 -- or 3-4 euros (approx.) &amp; more.") ==
        "It costs $ 1,000.50 - - or 3-4 euros ( approx . ) & amp ; more .");
  CHECK(tokenize_intl("Dominic Raab ：英国外交大臣说，“我们”。") == "Dominic Raab ： 英国外交大臣说 ， “ 我们 ” 。");
  CHECK(tokenize_intl("price: 5€ or ¥600 + tax") == "price : 5 € or ¥ 600 + tax");
  CHECK(tokenize_intl("Москва — 2021 год.") == "Москва — 2021 год .");
}

TEST_CASE("zh splits CJK characters, including sacreBLEU's accidental U+2001..U+2A6D range", "[metrics]") {
  CHECK(tokenize_zh("Dominic Raab ：英国外交大臣说，“我们”。") ==
        "Dominic Raab ： 英 国 外 交 大 臣 说 ， “ 我 们 ” 。");
  CHECK(tokenize_zh("price: 5€ or ¥600 + tax") == "price : 5 € or ¥600 + tax");
  CHECK(tokenize_zh("a\u00a0b\u3000c\u200bd") == "a b c \u200b d");
  CHECK(tokenize_zh("It costs $1,000.50 (approx.) &amp; more.") == "It costs $ 1,000.50 ( approx . ) & amp ; more .");
}

TEST_CASE("char and none tokenizers", "[metrics]") {
  CHECK(tokenize(Tokenizer::character, "ab 日本") == "a b   日 本");
  CHECK(tokenize(Tokenizer::none, " a  b ") == " a  b ");
}

TEST_CASE("unknown tokenizer names list the valid ones", "[metrics]") {
  CHECK(parse_tokenizer("intl") == Tokenizer::intl);
  try {
    parse_tokenizer("moses");
    FAIL("no exception");
  } catch (const tt::ConfigError& e) {
    CHECK(std::string(e.what()).find("13a, intl, zh, char, none") != std::string::npos);
  }
}

TEST_CASE("Python str semantics: lower() with final sigma, split() and rstrip() on Unicode spaces", "[metrics]") {
  CHECK(python_lower("ΟΔΟΣ ΣΟΦΙΑΣ İstanbul ΑΣ. Σ") == "οδος σοφιας i\u0307stanbul ας. σ");
  CHECK(python_lower("ÜNÏCÖDÉ Test") == "ünïcödé test");
  auto words = split_whitespace("\ta\u00a0b\u2009c\u200bd \u3000");
  REQUIRE(words.size() == 3);
  CHECK(words[2] == "c\u200bd");
  CHECK(rstrip("x y \t\u3000\r") == "x y");
  CHECK(strip("\u00a0 x ") == "x");
}

TEST_CASE("tercom tokenizer: normalization, Asian support, punctuation removal", "[metrics]") {
  TercomOptions normalized{true, false, true, false};
  CHECK(tercom_tokenize(normalized, "John's book, it's Mary's") == "john 's book , it 's mary 's");
  CHECK(tercom_tokenize(normalized, "日本語のテキスト、です。") == "日 本 語 のテキスト 、 です 。");
  CHECK(tercom_tokenize(normalized, "A (b) 1.5 x.y") == "a ( b ) 1.5 x . y");
  TercomOptions no_punct{false, true, true, true};
  CHECK(tercom_tokenize(no_punct, "Hello, (World)! 日本、です。") == "Hello World 日本です");
  CHECK(tercom_tokenize(TercomOptions{}, "") == "");
}
