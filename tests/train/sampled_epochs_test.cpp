#include "train/sampled_epochs.h"

#include <catch2/catch.hpp>
#include <span>
#include <string>
#include <vector>

#include "data/spm_fixture.h"
#include "support/tmp_dir.h"
#include "util/error.h"

using tt::data::CorpusFilter;
using tt::data::ParallelCorpus;
using tt::data::SpmTokenizer;
using tt::data::SubwordSampling;
using tt::train::SampledCorpus;
using tt::train::SampledEpochs;
using tt::test::TmpDir;

namespace {

std::vector<std::vector<int32_t>> all_ids(const ParallelCorpus& c) {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < c.size(); ++i) {
    out.emplace_back(c.source(i).begin(), c.source(i).end());
    out.emplace_back(c.target(i).begin(), c.target(i).end());
  }
  return out;
}

}  // namespace

TEST_CASE("sampled epochs: each epoch is its keyed segmentation, prepared ahead or not", "[train][sampling]") {
  TmpDir dir;
  const SpmTokenizer spm = SpmTokenizer::load(tt::test::train_fixture_model(dir));
  const std::string en = tt::test::fixture_path("corpus.en"), de = tt::test::fixture_path("corpus.de");
  // Two corpora: the fixture, and its first 10 lines.
  std::string en10, de10;
  {
    const std::string e = tt::test::read_file(en), d = tt::test::read_file(de);
    size_t pe = 0, pd = 0;
    for (int i = 0; i < 10; ++i) pe = e.find('\n', pe) + 1, pd = d.find('\n', pd) + 1;
    en10 = dir.write("ten.en", e.substr(0, pe));
    de10 = dir.write("ten.de", d.substr(0, pd));
  }
  const CorpusFilter filter;
  SubwordSampling sampling;
  sampling.alpha = 0.2f;
  sampling.seed = 5;
  auto fates = [&](const std::string& src, const std::string& tgt) {
    return ParallelCorpus::load(src, tgt, spm, spm, filter, 1).line_fates();
  };
  const std::vector<SampledCorpus> corpora{{en, de, fates(en, de)}, {en10, de10, fates(en10, de10)}};
  // What epoch e must hold: each corpus loaded with its own (epoch, corpus) key, one after the other.
  auto expected = [&](int64_t epoch) {
    SubwordSampling s = sampling;
    s.epoch = static_cast<uint64_t>(epoch);
    s.fates = &corpora[0].fates;
    ParallelCorpus c = ParallelCorpus::load(en, de, spm, spm, filter, 1, s);
    s.corpus = 1;
    s.fates = &corpora[1].fates;
    c.append(ParallelCorpus::load(en10, de10, spm, spm, filter, 1, s));
    return all_ids(c);
  };
  SampledEpochs epochs(corpora, spm, spm, filter, sampling, 2);
  CHECK(all_ids(epochs.at(0)) == expected(0));
  CHECK(all_ids(epochs.at(1)) == expected(1));  // prepared in the background
  CHECK(all_ids(epochs.at(1)) == expected(1));
  CHECK(all_ids(epochs.at(4)) == expected(4));  // a jump (a resumed run): made on the spot
  CHECK(all_ids(epochs.at(0)) != all_ids(epochs.at(1)));

  // A file that changes during the run is named when an epoch reads it: fewer lines, or a kept line
  // that has become too long to keep.
  SampledEpochs changed(corpora, spm, spm, filter, sampling, 1);
  changed.at(0);
  const std::string ten_en = tt::test::read_file(en10), ten_de = tt::test::read_file(de10);
  dir.write("ten.en", "one line\n");
  dir.write("ten.de", "eine Zeile\n");
  CHECK_THROWS_WITH(changed.at(7), Catch::Contains("ten.en") && Catch::Contains("1 lines where the run started with 10"));
  std::string long_line;
  for (int i = 0; i < 300; ++i) long_line += "the dog runs ";
  dir.write("ten.en", long_line + "\n" + ten_en.substr(ten_en.find('\n') + 1));
  dir.write("ten.de", ten_de);
  CHECK_THROWS_WITH(changed.at(8), Catch::Contains("ten.en:1: the line changed during the run"));
}
