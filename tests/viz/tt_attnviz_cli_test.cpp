// tt-attnviz as a user runs it, on the trained fixture: the translation is tt-translate's, the JSON follows
// schema/attnviz.schema.json with consistent shapes, --target forcing the search's own output reproduces
// its maps, alignments equal tt-translate's, bertviz's layout reads back in Python, and the HTML page
// renders in a real browser (headless Chromium, when installed).
#include <catch2/catch.hpp>

#include <cmath>
#include <nlohmann/json.hpp>
#include <sstream>

#include "decode/trained_fixture.h"
#include "support/run_command.h"
#include "viz/json_schema.h"

using namespace tt;
using nlohmann::json;
using test::quoted;
using test::run_command;
using test::tool;

namespace {

const std::string search_flags = " --threads 1 --beam 3 --max-len-b 6 ";

std::string attnviz(const std::string& flags) {
  return tool("tt-attnviz") + " -m " + quoted(test::trained_fixture().model_dir) + search_flags + flags;
}

std::string translate(const std::string& flags) {
  return tool("tt-translate") + " -m " + quoted(test::trained_fixture().model_dir) + search_flags + flags;
}

// n fixture lines, the second one empty.
std::string input(size_t n) {
  std::string in;
  const auto& lines = test::trained_fixture().lines;
  for (size_t i = 0; i < n; ++i) in += (i == 1 ? std::string() : lines[i]) + "\n";
  return in;
}

std::vector<std::string> split_lines(const std::string& s) {
  std::vector<std::string> v;
  std::istringstream in(s);
  for (std::string l; std::getline(in, l);) v.push_back(l);
  return v;
}

std::vector<json> parse_lines(const std::string& s) {
  std::vector<json> v;
  for (const auto& l : split_lines(s)) v.push_back(json::parse(l));
  return v;
}

// Checks a kind's [layers][heads][rows][cols] array; returns the largest |row sum - 1|.
double check_maps(const json& maps, size_t layers, size_t heads, size_t rows, size_t cols) {
  double worst = 0;
  REQUIRE(maps.size() == layers);
  for (const auto& layer : maps) {
    REQUIRE(layer.size() == heads);
    for (const auto& map : layer) {
      REQUIRE(map.size() == rows);
      for (const auto& row : map) {
        REQUIRE(row.size() == cols);
        double sum = 0;
        for (const auto& w : row) sum += w.get<double>();
        worst = std::max(worst, std::abs(sum - 1.0));
      }
    }
  }
  return worst;
}

}  // namespace

TEST_CASE("tt-attnviz: tt-translate's translations, one schema-valid object per line, rows summing to 1", "[viz][cli]") {
  const std::string in = input(12);
  auto t = run_command(translate("-q"), in);
  REQUIRE(t.status == 0);
  // Capture on (alignments) or off changes no byte of the translations.
  auto ta = run_command(translate("-q --alignment soft"), in);
  std::string stripped;
  for (const auto& l : split_lines(ta.out)) stripped += l.substr(0, l.find(" ||| ")) + "\n";
  CHECK(stripped == t.out);

  auto r = run_command(attnviz("--precision 9 --batch-size 5"), in);
  REQUIRE(r.status == 0);
  CHECK(r.err.find("tt-attnviz: cpu") != std::string::npos);
  const auto translations = split_lines(t.out);
  const auto objects = parse_lines(r.out);
  REQUIRE(objects.size() == translations.size());
  const json schema = json::parse(test::read_file(std::string(TT_SOURCE_DIR) + "/schema/attnviz.schema.json"));
  for (size_t i = 0; i < objects.size(); ++i) {
    const json& o = objects[i];
    INFO("line " << i);
    CHECK(test::validate_json(o, schema, schema) == "");
    CHECK(o["id"] == i);
    CHECK(o["translation"] == translations[i]);
    const size_t S = o["src_tokens"].size(), T = o["tgt_tokens"].size(), H = o["heads"].size();
    CHECK(H == 4);
    if (i == 1) {  // the empty line
      CHECK(S == 0);
      CHECK(T == 0);
      CHECK_FALSE(o.contains("score"));
      continue;
    }
    CHECK(o["src_tokens"].back() == "</s>");
    CHECK(o["tgt_tokens"].front() == "<s>");
    CHECK(check_maps(o["encoder_self"], 2, H, S, S) <= 1e-5);
    CHECK(check_maps(o["decoder_self"], 2, H, T, T) <= 1e-5);
    CHECK(check_maps(o["cross"], 2, H, T, S) <= 1e-5);
    for (const auto& layer : o["decoder_self"])
      for (const auto& map : layer)
        for (size_t q = 0; q < T; ++q)
          for (size_t k = q + 1; k < T; ++k) CHECK(map[q][k].get<double>() == 0.0);
  }
  // Batching changes no byte.
  auto one = run_command(attnviz("--precision 9 --batch-size 1 -q"), in);
  CHECK(one.out == r.out);
  // A schema violation is caught (the validator is not a no-op).
  json bad = objects[0];
  bad["cross"][0][0][0][0] = -0.5;
  CHECK(test::validate_json(bad, schema, schema).find("minimum") != std::string::npos);
  bad = objects[0];
  bad["extra"] = 1;
  CHECK(test::validate_json(bad, schema, schema).find("extra") != std::string::npos);
}

TEST_CASE("tt-attnviz: --target with the search's own output reproduces its maps", "[viz][cli]") {
  const std::string in = input(6);
  auto t = run_command(translate("-q"), in);
  test::TmpDir dir;
  const std::string ref = dir.write("ref.de", t.out);
  auto searched = parse_lines(run_command(attnviz("-q"), in).out);
  auto forced = run_command(attnviz("-q --target " + quoted(ref)), in);
  REQUIRE(forced.status == 0);
  auto f = parse_lines(forced.out);
  REQUIRE(f.size() == searched.size());
  // The reference is detokenised text: SentencePiece may segment it differently from the pieces the
  // search produced (then the maps are over other tokens). Where the pieces agree, the maps must too.
  size_t compared = 0;
  for (size_t i = 0; i < f.size(); ++i) {
    INFO("line " << i);
    CHECK_FALSE(f[i].contains("score"));
    searched[i].erase("score");
    if (f[i]["tgt_tokens"] != searched[i]["tgt_tokens"]) continue;
    ++compared;
    CHECK(f[i] == searched[i]);
  }
  CHECK(compared >= f.size() / 2);
  const std::string short_ref = dir.write("short.de", "x\n");
  auto bad = run_command(attnviz("-q --target " + quoted(short_ref)), in);
  CHECK(bad.status == 1);
  CHECK(bad.err.find("short.de") != std::string::npos);
}

TEST_CASE("tt-attnviz: --kind, --layers, --heads, --reduce, --merge-words, --max-sentences", "[viz][cli]") {
  const std::string in = input(5);
  auto r = run_command(attnviz("-q --kind cross,dec --layers 1 --heads 1-2 --reduce max --max-sentences 3"), in);
  REQUIRE(r.status == 0);
  auto objects = parse_lines(r.out);
  REQUIRE(objects.size() == 3);
  const json& o = objects[0];
  CHECK_FALSE(o.contains("encoder_self"));
  CHECK(o["cross_layers"] == json::array({1}));
  CHECK(o["heads"] == json::array({1, 2}));
  CHECK(o["reduce"] == "max");
  check_maps(o["cross"], 1, 1, o["tgt_tokens"].size(), o["src_tokens"].size());

  auto m = run_command(attnviz("-q --merge-words --precision 9 --kind enc,cross"), in);
  REQUIRE(m.status == 0);
  const json w = parse_lines(m.out)[0];
  const size_t S = w["src_tokens"].size(), T = w["tgt_tokens"].size();
  CHECK(w["src_tokens"][0] == "A");  // "▁A"
  CHECK(S == 12);  // "A man in a blue shirt is standing on a ladder." and </s>
  CHECK(check_maps(w["cross"], 2, 4, T, S) <= 1e-5);
  CHECK(check_maps(w["encoder_self"], 2, 4, S, S) <= 1e-5);

  auto e = run_command(attnviz("-q --layers 2"), in);
  CHECK(e.status == 1);
  CHECK(e.err.find("--layers: 2 does not exist") != std::string::npos);
  CHECK(run_command(attnviz("-q --kind nope"), in).status == 2);
}

TEST_CASE("tt-attnviz --format alignment: tt-translate's hard alignments, soft ones to 1e-5", "[viz][cli]") {
  const std::string in = input(8);
  auto t = split_lines(run_command(translate("-q --alignment hard"), in).out);
  auto a = split_lines(run_command(attnviz("-q --format alignment"), in).out);
  REQUIRE(a.size() == t.size());
  for (size_t i = 0; i < a.size(); ++i) {
    const size_t bar = t[i].find(" ||| ");
    CHECK(a[i] == (bar == std::string::npos ? std::string() : t[i].substr(bar + 5)));
  }
  auto ts = split_lines(run_command(translate("-q --alignment soft"), in).out);
  auto as = split_lines(run_command(attnviz("-q --format alignment --alignment soft"), in).out);
  REQUIRE(as.size() == ts.size());
  for (size_t i = 0; i < as.size(); ++i) {
    const size_t bar = ts[i].find(" ||| ");
    std::string want = bar == std::string::npos ? std::string() : ts[i].substr(bar + 5);
    for (auto* s : {&want, &as[i]}) std::replace(s->begin(), s->end(), ',', ' ');
    std::istringstream x(want), y(as[i]);
    double p = 0, q = 0;
    size_t n = 0;
    while (x >> p) {
      REQUIRE(y >> q);
      CHECK(q == Approx(p).margin(1e-5));
      ++n;
    }
    CHECK_FALSE(y >> q);
    if (i != 1) CHECK(n > 0);
  }
  auto words = split_lines(run_command(attnviz("-q --format alignment --merge-words"), in).out);
  CHECK(words[0].find("0-0") == 0);  // "A" - "A" in this copy model
}

TEST_CASE("tt-attnviz --format bertviz: per-layer [1, heads, n, m] arrays, read back by Python's json", "[viz][cli]") {
  if (run_command("command -v python3").status != 0) {
    WARN("skipped: python3 is not installed, so the bertviz layout was not read back in Python");
    return;
  }
  test::TmpDir dir;
  auto r = run_command(attnviz("-q --format bertviz"), input(3));
  REQUIRE(r.status == 0);
  const std::string file = dir.write("attn.jsonl", r.out);
  const std::string script = dir.write("check.py", R"(import json, sys
n = 0
for line in open(sys.argv[1]):
    d = json.loads(line)
    S, T = len(d["encoder_tokens"]), len(d["decoder_tokens"])
    for key, rows, cols in (("encoder_attention", S, S), ("decoder_attention", T, T), ("cross_attention", T, S)):
        layers = d[key]
        assert len(layers) == 2, key
        for layer in layers:
            assert len(layer) == 1 and len(layer[0]) == 4, key
            for head in layer[0]:
                assert len(head) == rows and all(len(row) == cols for row in head), key
    n += 1
print("ok", n)
)");
  auto py = run_command("python3 " + quoted(script) + " " + quoted(file));
  CHECK(py.err == "");
  CHECK(py.out == "ok 3\n");
}

TEST_CASE("tt-attnviz --html: one self-contained page, in headless Chromium it renders the grid", "[viz][cli]") {
  test::TmpDir dir;
  const std::string page = dir.file("page.html");
  auto r = run_command(attnviz("-q --html " + quoted(page)), input(4));
  REQUIRE(r.status == 0);
  CHECK(r.out.empty());  // the page only, unless --format asks for stdout too
  const std::string html = test::read_file(page);
  size_t blocks = 0;
  for (size_t at = 0; (at = html.find("class=\"attn\"", at)) != std::string::npos; ++at) ++blocks;
  CHECK(blocks == 4);
  CHECK(html.find("http://") == std::string::npos);  // nothing to fetch
  CHECK(html.find("https://") == std::string::npos);
  CHECK(html.find(" src=") == std::string::npos);
  auto both = run_command(attnviz("-q --format json --max-sentences 1 --html " + quoted(dir.file("p2.html"))), input(4));
  CHECK(split_lines(both.out).size() == 1);
  const json first = json::parse(split_lines(both.out)[0]);

  if (run_command("command -v chromium").status != 0) {
    WARN("skipped: chromium is not installed (scripts/install-deps.sh installs it), so the page was not "
         "rendered in a browser");
    return;
  }
  const std::string browser = "chromium --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir=" +
                              quoted(dir.file("profile")) + " --virtual-time-budget=5000 ";
  auto dom = run_command(browser + "--enable-logging=stderr --v=0 --dump-dom " + quoted("file://" + page));
  REQUIRE(dom.status == 0);
  // Sentence 0, cross-attention by default: 2 layers x 4 heads maps of T x S cells.
  const size_t cells = 2 * 4 * first["tgt_tokens"].size() * first["src_tokens"].size();
  // Count rendered cells, not the page's own script text (which spells the cell markup once).
  std::string rendered = dom.out;
  for (size_t a; (a = rendered.find("<script")) != std::string::npos;) {
    const size_t b = rendered.find("</script>", a);
    rendered.erase(a, b == std::string::npos ? std::string::npos : b + 9 - a);
  }
  size_t found = 0;
  for (size_t at = 0; (at = rendered.find("class=\"c\"", at)) != std::string::npos; ++at) ++found;
  CHECK(found == cells);
  CHECK(dom.out.find("data-rendered=\"" + std::to_string(cells) + "\"") != std::string::npos);
  CHECK(dom.out.find("data-errors") == std::string::npos);
  CHECK(dom.err.find("Uncaught") == std::string::npos);
  const std::string shot = std::string(TT_BIN_DIR) + "/../tt-attnviz-screenshot.png";
  auto s = run_command(browser + "--window-size=1400,900 --screenshot=" + quoted(shot) + " " + quoted("file://" + page));
  CHECK(s.status == 0);
  CHECK(test::read_file(shot).size() > 1000);
}
