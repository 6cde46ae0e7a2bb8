// Selecting, reducing and merging attention maps, and how they are printed (worked examples).
#include <catch2/catch.hpp>

#include <nlohmann/json.hpp>

#include "util/error.h"
#include "viz/alignment.h"
#include "viz/attention_html.h"
#include "viz/attention_json.h"
#include "viz/attention_view.h"

using namespace tt;
using viz::Kind;

namespace {

// Source "▁Ein fach ▁gut </s>" (two words and </s>), target "<s> ▁Sim ple"; one layer, two heads, cross only.
viz::SentenceAttention example() {
  viz::SentenceAttention a;
  a.source = {10, 11, 12, 3};
  a.target = {2, 20, 21};
  a.layers_enc = a.layers_dec = 1;
  a.heads = 2;
  a.cross = {0.1f, 0.2f, 0.3f, 0.4f,  0.5f, 0.25f, 0.125f, 0.125f,  0.3f, 0.3f, 0.2f, 0.2f,   // head 0
             0.7f, 0.1f, 0.1f, 0.1f,  0.0f, 0.5f,  0.5f,   0.0f,    0.25f, 0.25f, 0.25f, 0.25f};  // head 1
  return a;
}

viz::Tokens src_tokens() { return {{"\xE2\x96\x81" "Ein", "fach", "\xE2\x96\x81" "gut", "</s>"}, {false, false, false, true}}; }
viz::Tokens tgt_tokens() { return {{"<s>", "\xE2\x96\x81" "Sim", "ple"}, {true, false, false}}; }

viz::ViewOptions cross_only() {
  viz::ViewOptions o;
  o.kinds = viz::KindSet{false, false, true};
  return o;
}

}  // namespace

TEST_CASE("merge-words: key pieces summed, query pieces averaged, rows still sum to 1", "[viz]") {
  viz::ViewOptions o = cross_only();
  o.merge_words = true;
  o.heads = {0};
  const viz::AttentionView v = viz::make_view(example(), src_tokens(), tgt_tokens(), o);
  CHECK(v.src_tokens == std::vector<std::string>{"Einfach", "gut", "</s>"});
  CHECK(v.tgt_tokens == std::vector<std::string>{"<s>", "Simple"});
  REQUIRE(v.maps.size() == 1);
  const viz::MapSet& m = v.maps[0];
  CHECK(m.rows == 2);
  CHECK(m.cols == 3);
  // <s>: (.1+.2, .3, .4); Simple: mean of (.5+.25, .125, .125) and (.3+.3, .2, .2).
  const std::vector<float> want = {0.3f, 0.3f, 0.4f, 0.675f, 0.1625f, 0.1625f};
  REQUIRE(m.data.size() == want.size());
  for (size_t i = 0; i < want.size(); ++i) CHECK(m.data[i] == Approx(want[i]).margin(1e-6));
  CHECK(m.data[3] + m.data[4] + m.data[5] == Approx(1.0f).margin(1e-6));
}

TEST_CASE("heads, --reduce mean and max, and index lists", "[viz]") {
  viz::ViewOptions o = cross_only();
  o.reduce = viz::Reduce::mean;
  auto v = viz::make_view(example(), src_tokens(), tgt_tokens(), o);
  REQUIRE(v.maps[0].heads == 1);
  CHECK(v.heads == std::vector<int>{0, 1});
  CHECK(v.maps[0].data[0] == Approx(0.4f));   // (.1 + .7) / 2
  CHECK(v.maps[0].data[5] == Approx(0.375f));  // (.25 + .5) / 2
  o.reduce = viz::Reduce::max;
  v = viz::make_view(example(), src_tokens(), tgt_tokens(), o);
  CHECK(v.maps[0].data[0] == Approx(0.7f));
  CHECK(v.maps[0].data[3] == Approx(0.4f));
  o.reduce = viz::Reduce::none;
  o.heads = {1};
  v = viz::make_view(example(), src_tokens(), tgt_tokens(), o);
  CHECK(v.maps[0].data[0] == Approx(0.7f));
  CHECK(viz::parse_index_list("3,0-2,1", "--heads") == std::vector<int>{0, 1, 2, 3});
  CHECK_THROWS_WITH(viz::parse_index_list("1-x", "--layers"), Catch::Contains("--layers '1-x'"));
  CHECK_THROWS_WITH(viz::parse_index_list("3-1", "--heads"), Catch::Contains("runs backwards"));
  o.heads = {2};
  o.heads_name = "--heads";
  CHECK_THROWS_WITH(viz::make_view(example(), src_tokens(), tgt_tokens(), o),
                    Catch::Contains("--heads: 2 does not exist; the model has 2 heads per layer (0-1)"));
  o.heads = {};
  o.layers = {1};
  o.layers_name = "--layers";
  CHECK_THROWS_WITH(viz::make_view(example(), src_tokens(), tgt_tokens(), o),
                    Catch::Contains("--layers: 1 does not exist; the model has 1 decoder layers"));
}

TEST_CASE("json lines: numbers with --precision, keys and nesting", "[viz]") {
  std::string s;
  viz::append_number(s, 0.675f, 4);
  s += ' ';
  viz::append_number(s, 1.0f, 4);
  s += ' ';
  viz::append_number(s, 0.0f, 3);
  s += ' ';
  viz::append_number(s, 0.12345f, 2);
  s += ' ';
  viz::append_number(s, 0.5f, 0);
  CHECK(s == "0.675 1 0 0.12 0");
  viz::ViewOptions o = cross_only();
  o.heads = {1};
  const auto v = viz::make_view(example(), src_tokens(), tgt_tokens(), o);
  const std::string line = viz::json_line(v, {7, "Simple \"x\"", -0.25f}, 2);
  CHECK(line ==
        "{\"id\":7,\"src_tokens\":[\"\xE2\x96\x81" "Ein\",\"fach\",\"\xE2\x96\x81" "gut\",\"</s>\"],"
        "\"tgt_tokens\":[\"<s>\",\"\xE2\x96\x81" "Sim\",\"ple\"],\"translation\":\"Simple \\\"x\\\"\",\"score\":-0.25,"
        "\"heads\":[1],\"reduce\":null,\"cross_layers\":[0],"
        "\"cross\":[[[[0.7,0.1,0.1,0.1],[0,0.5,0.5,0],[0.25,0.25,0.25,0.25]]]]}\n");
  const auto bert = nlohmann::json::parse(viz::json_line(v, {7, "x", std::nullopt}, 2, viz::JsonLayout::bertviz));
  CHECK(bert["cross_attention"].size() == 1);        // layers
  CHECK(bert["cross_attention"][0].size() == 1);     // batch of one
  CHECK(bert["cross_attention"][0][0].size() == 1);  // heads
  CHECK(bert["cross_attention"][0][0][0].size() == 3);
  CHECK(bert["encoder_tokens"].size() == 4);
  CHECK_FALSE(bert.contains("score"));
}

TEST_CASE("alignments from cross-attention: pieces, and words with merging", "[viz]") {
  const viz::SentenceAttention a = example();
  // Predicted pieces: "▁Sim ple </s>" (rows: the <s> step predicts ▁Sim).
  const viz::Tokens predicted{{"\xE2\x96\x81" "Sim", "ple", "</s>"}, {false, false, true}};
  auto m = viz::cross_alignment(a, {0}, {0}, false, src_tokens(), predicted);
  CHECK(viz::hard_alignment(m) == "2-0 0-1");  // row 2 (</s>) and column 3 (</s>) left out
  CHECK(viz::soft_alignment(m) == "0.1,0.2,0.3,0.4 0.5,0.25,0.125,0.125 0.3,0.3,0.2,0.2");
  m = viz::cross_alignment(a, {0}, {0, 1}, false, src_tokens(), predicted);
  CHECK(m.data[0] == Approx(0.4f));
  m = viz::cross_alignment(a, {0}, {0}, true, src_tokens(), predicted);
  REQUIRE(m.rows == 2);  // "Simple", </s>
  REQUIRE(m.cols == 3);  // "Einfach", "gut", </s>
  CHECK(viz::hard_alignment(m) == "0-0");  // (.1+.5)/2+(.2+.25)/2 = .525 for Einfach beats (.3+.125)/2 for gut
}

TEST_CASE("base64 for the HTML page's quantised weights", "[viz]") {
  const unsigned char d[] = {'M', 'a', 'n', 'y'};
  CHECK(viz::base64(d, 0).empty());
  CHECK(viz::base64(d, 1) == "TQ==");
  CHECK(viz::base64(d, 2) == "TWE=");
  CHECK(viz::base64(d, 3) == "TWFu");
  CHECK(viz::base64(d, 4) == "TWFueQ==");
}
