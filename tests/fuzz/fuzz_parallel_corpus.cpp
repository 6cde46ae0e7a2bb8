// tt-train's parallel-corpus reader (data::ParallelCorpus::load) on arbitrary bytes: the input's first
// byte picks the filter and whether the source is stdin-like; the rest is split at its first NUL into the
// source and target files. Either a tt::Error (mismatched line counts, invalid UTF-8, ...) or a corpus that
// keeps its promises: every line counted once (kept or dropped), sources end in </s>, lengths within the
// filter, ids inside the vocabulary, token counts that add up, and the same result on 1 and 3 threads.
#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

#include "data/parallel_corpus.h"
#include "data/spm_tokenizer.h"
#include "data/spm_trainer.h"
#include "fuzz_support.h"
#include "util/error.h"

namespace {

// One SentencePiece model for the whole process, trained on the test fixture (tt's special ids).
const tt::data::SpmTokenizer& model() {
  static const tt::data::SpmTokenizer spm = [] {
    tt::data::SpmTrainOptions o;
    o.inputs = {std::string(TT_FUZZ_FIXTURE_DIR) + "/corpus.en", std::string(TT_FUZZ_FIXTURE_DIR) + "/corpus.de"};
    o.model_prefix = "/tmp/tt-fuzz-spm-" + std::to_string(::getpid());
    o.vocab_size = 120;
    o.character_coverage = 1.0;
    o.threads = 1;
    tt::data::train_spm(o);
    auto loaded = tt::data::SpmTokenizer::load(o.model_prefix + ".model");
    std::remove((o.model_prefix + ".model").c_str());
    std::remove((o.model_prefix + ".vocab").c_str());
    return loaded;
  }();
  return spm;
}

void write(const std::string& path, const std::string& bytes) {
  std::FILE* f = std::fopen(path.c_str(), "wb");
  if (!f) __builtin_trap();
  if (!bytes.empty() && std::fwrite(bytes.data(), 1, bytes.size(), f) != bytes.size()) __builtin_trap();
  std::fclose(f);
}

// Lines as the reader counts them: one per LF, plus an unterminated last line.
int64_t lines_in(const std::string& text) {
  int64_t n = 0;
  for (char c : text) n += c == '\n';
  return n + (!text.empty() && text.back() != '\n');
}

struct Outcome {
  std::optional<tt::data::ParallelCorpus> corpus;
  std::string error;
};

Outcome load(const std::string& src, const std::string& tgt, const tt::data::CorpusFilter& filter, int threads) {
  Outcome out;
  try {
    out.corpus.emplace(tt::data::ParallelCorpus::load(src, tgt, model(), model(), filter, threads));
  } catch (const tt::Error& e) {
    out.error = e.what();
  }
  return out;
}

bool same(const tt::data::ParallelCorpus& a, const tt::data::ParallelCorpus& b) {
  if (a.size() != b.size()) return false;
  for (size_t i = 0; i < a.size(); ++i) {
    const auto as = a.source(i), bs = b.source(i), at = a.target(i), bt = b.target(i);
    if (!std::equal(as.begin(), as.end(), bs.begin(), bs.end()) || !std::equal(at.begin(), at.end(), bt.begin(), bt.end()))
      return false;
  }
  const auto &x = a.stats(), &y = b.stats();
  return x.lines == y.lines && x.kept == y.kept && x.dropped_empty == y.dropped_empty &&
         x.dropped_long == y.dropped_long && x.dropped_ratio == y.dropped_ratio && x.src_tokens == y.src_tokens &&
         x.tgt_tokens == y.tgt_tokens;
}

void check(const tt::data::ParallelCorpus& c, const tt::data::CorpusFilter& filter, int64_t lines) {
  const auto& s = c.stats();
  if (s.lines != lines) __builtin_trap();
  if (s.kept + s.dropped_empty + s.dropped_long + s.dropped_ratio != s.lines) __builtin_trap();
  if (static_cast<int64_t>(c.size()) != s.kept) __builtin_trap();
  int64_t src_tokens = 0, tgt_tokens = 0;
  const int vocab = model().piece_size(), eos = model().eos_id();
  for (size_t i = 0; i < c.size(); ++i) {
    const auto src = c.source(i), tgt = c.target(i);
    if (src.size() < 2 || tgt.empty() || src.back() != eos) __builtin_trap();  // pieces + </s>; no empty side
    const size_t ls = src.size() - 1, lt = tgt.size();
    if (ls > static_cast<size_t>(filter.max_len) || lt > static_cast<size_t>(filter.max_len)) __builtin_trap();
    if (filter.max_len_ratio > 0 &&
        static_cast<double>(std::max(ls, lt)) / static_cast<double>(std::min(ls, lt)) > filter.max_len_ratio)
      __builtin_trap();
    for (auto side : {src, tgt})
      for (int32_t id : side)
        if (id < 0 || id >= vocab) __builtin_trap();
    if (c.source_length(i) != static_cast<int32_t>(src.size()) || c.target_length(i) != static_cast<int32_t>(lt))
      __builtin_trap();
    src_tokens += static_cast<int64_t>(src.size());
    tgt_tokens += static_cast<int64_t>(lt);
  }
  if (src_tokens != s.src_tokens || tgt_tokens != s.tgt_tokens) __builtin_trap();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  if (size == 0) return 0;
  const uint8_t mode = data[0];
  const std::string rest(reinterpret_cast<const char*>(data) + 1, size - 1);
  const size_t nul = rest.find('\0');
  const std::string src_text = rest.substr(0, nul), tgt_text = nul == std::string::npos ? "" : rest.substr(nul + 1);
  tt::data::CorpusFilter filter;
  filter.max_len = 1 + (mode & 0x0f);                  // 1..16 pieces: the long-pair filter fires
  filter.max_len_ratio = (mode & 0x10) ? 1.5 : 0.0;   // the ratio filter on or off
  const std::string& base = tt::fuzz::input_file(data, size);
  const std::string src = base + ".src", tgt = base + ".tgt";
  write(src, src_text);
  write(tgt, tgt_text);
  const Outcome one = load(src, tgt, filter, 1), three = load(src, tgt, filter, 3);
  // The same corpus, or the same first error, on any thread count.
  if (one.corpus.has_value() != three.corpus.has_value() || one.error != three.error) __builtin_trap();
  if (one.corpus) {
    if (lines_in(src_text) != lines_in(tgt_text)) __builtin_trap();  // a mismatch must be refused
    check(*one.corpus, filter, lines_in(src_text));
    if (!same(*one.corpus, *three.corpus)) __builtin_trap();
  }
  std::remove(src.c_str());
  std::remove(tgt.c_str());
  return 0;
}
