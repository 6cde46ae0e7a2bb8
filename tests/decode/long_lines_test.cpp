// Long lines: the sentence rule, packing into parts with cuts at word starts, and rejoining hypotheses.
#include "decode/long_lines.h"

#include <catch2/catch.hpp>
#include <numeric>

using tt::decode::Hypothesis;
using tt::decode::join_parts;
using tt::decode::pack_parts;
using tt::decode::split_sentences;

TEST_CASE("split_sentences: after a sentence end and white space, nowhere else", "[decode][long_lines]") {
  using V = std::vector<std::string>;
  CHECK(split_sentences("One. Two! Three? Four") == V{"One. ", "Two! ", "Three? ", "Four"});
  CHECK(split_sentences("Pi is 3.14, e.g.x stays. \"Quoted.\"  Next...  Last.") ==
        V{"Pi is 3.14, e.g.x stays. ", "\"Quoted.\"  ", "Next...  ", "Last."});
  CHECK(split_sentences("Wait?! (Yes.) Done") == V{"Wait?! ", "(Yes.) ", "Done"});
  CHECK(split_sentences("\u6211\u6765\u4e86\u3002 \u597d\u3002") == V{"\u6211\u6765\u4e86\u3002 ", "\u597d\u3002"});
  CHECK(split_sentences("no boundary at all") == V{"no boundary at all"});
  CHECK(split_sentences("Trailing space. ") == V{"Trailing space. "});
  CHECK(split_sentences("") == V{""});
  for (const std::string line : {"A. B. C.", " lead. x", "x.y. z"}) {  // joined, they give the line back
    std::string joined;
    for (const auto& s : split_sentences(line)) joined += s;
    CHECK(joined == line);
  }
}

TEST_CASE("pack_parts: a part per sentence, long ones cut at a word start", "[decode][long_lines]") {
  // Ids >= 100 begin a word; others continue one.
  auto word = [](int32_t id) { return id >= 100; };
  using P = std::vector<std::vector<int32_t>>;
  CHECK(pack_parts({{100, 1}, {101, 2}, {102}}, 4, word) == P{{100, 1}, {101, 2}, {102}});
  CHECK(pack_parts({{100, 1, 2}, {101, 2}}, 4, word) == P{{100, 1, 2}, {101, 2}});
  // One sentence of 9 over a limit of 4: cut before the word starting at 3 and at 6 (not mid-word).
  CHECK(pack_parts({{100, 1, 2, 101, 1, 102, 103, 1, 2}}, 4, word) == P{{100, 1, 2}, {101, 1, 102}, {103, 1, 2}});
  // A word longer than the limit is cut at the limit.
  CHECK(pack_parts({{100, 1, 2, 3, 4, 5, 6}}, 3, word) == P{{100, 1, 2}, {3, 4, 5}, {6}});
  // A long sentence after a short one: its own parts, the cut at the limit inside its long word.
  CHECK(pack_parts({{100}, {101, 1, 1, 1, 1}}, 3, word) == P{{100}, {101, 1, 1}, {1, 1}});
  CHECK(pack_parts({{100}, {}, {101}}, 8, word) == P{{100}, {101}});  // (a sentence of no pieces: no part)
  // Every id once, in order, each part within the limit, whatever the limit.
  std::vector<std::vector<int32_t>> sentences;
  for (int s = 0; s < 20; ++s) {
    std::vector<int32_t> ids;
    for (int i = 0; i < 1 + (s * 7) % 13; ++i) ids.push_back(i % 3 == 0 ? 100 + s : s);
    sentences.push_back(ids);
  }
  for (int limit : {1, 2, 5, 16, 1000}) {
    std::vector<int32_t> all, packed;
    for (const auto& s : sentences) all.insert(all.end(), s.begin(), s.end());
    for (const auto& part : pack_parts(sentences, limit, word)) {
      CHECK(!part.empty());
      CHECK(static_cast<int>(part.size()) <= limit);
      packed.insert(packed.end(), part.begin(), part.end());
    }
    CHECK(packed == all);
  }
}

TEST_CASE("join_parts: k-th with k-th, scores summed, attention at its offsets", "[decode][long_lines]") {
  // Part 1: source {10, 11, </s>}, hypotheses "7" and "8 9"; part 2: source {12, </s>}, one hypothesis "5".
  Hypothesis a1{{7}, -1.0f, -2.0f, {0.5f, 0.25f, 0.25f, /*</s> row*/ 0.1f, 0.2f, 0.7f}};
  Hypothesis a2{{8, 9}, -3.0f, -4.0f, {1, 0, 0, 0, 1, 0, 0, 0, 1}};
  Hypothesis b1{{5}, -0.5f, -0.75f, {0.6f, 0.4f, /*</s> row*/ 0.3f, 0.7f}};
  const auto joined = join_parts({{a1, a2}, {b1}}, {{10, 11, 3}, {12, 3}}, true);
  REQUIRE(joined.size() == 2);
  CHECK(joined[0].tokens == std::vector<int32_t>{7, 5});
  CHECK(joined[0].score == -1.5f);
  CHECK(joined[0].log_prob == -2.75f);
  CHECK(joined[1].tokens == std::vector<int32_t>{8, 9, 5});  // part 2 has one: its best again
  CHECK(joined[1].log_prob == -4.75f);
  // Source columns: 10, 11, 12, </s>. Rows: 7, 5, </s> (part 1's </s> row and column dropped).
  CHECK(joined[0].attention == std::vector<float>{0.5f, 0.25f, 0, 0,  //
                                                  0, 0, 0.6f, 0.4f,   //
                                                  0, 0, 0.3f, 0.7f});
  CHECK(join_parts({{a1}, {b1}}, {{10, 11, 3}, {12, 3}}, false)[0].attention.empty());
}
