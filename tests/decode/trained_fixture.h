// A tiny Transformer trained inside the test on a copy task over SentencePiece ids of the fixture corpus
// (tests/data/tokenize/corpus.{en,de}), saved as a model directory with its SentencePiece model. Trained
// once per test binary (a few seconds on one thread), with its own loop over forward_backward + Adam so
// that it does not depend on the trainer.
#pragma once

#include <algorithm>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include "backend/backend.h"
#include "data/spm_tokenizer.h"
#include "data/spm_trainer.h"
#include "io/model_dir.h"
#include "io/model_vocab.h"
#include "nn/transformer.h"
#include "support/tmp_dir.h"
#include "train/adam.h"
#include "util/atomic_dir.h"

namespace tt::test {

struct TrainedFixture {
  TmpDir dir;
  std::string model_dir;           // config.json, model.safetensors, spm.model
  std::vector<std::string> lines;  // ~200 test inputs: the corpus lines, their halves and suffixes
};

// The small model shape the decoding tests use: d_model 32, 4 heads, no dropout.
inline nn::ModelConfig small_decoding_config(int vocab, int layers, int max_positions) {
  nn::ModelConfig c;
  c.vocab_size_src = c.vocab_size_tgt = vocab;
  c.d_model = 32;
  c.d_ff = 64;
  c.heads = 4;
  c.n_layers_enc = c.n_layers_dec = layers;
  c.dropout = 0.0f;
  c.max_positions = max_positions;
  return c;
}

inline std::vector<std::string> read_lines(const std::string& path) {
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string l; std::getline(in, l);) lines.push_back(l);
  return lines;
}

inline const TrainedFixture& trained_fixture() {
  // Owned by a static so that its directory is removed at exit (a leaked pointer left one per test binary in /tmp).
  static const std::unique_ptr<TrainedFixture> fixture = [] {
    auto f = std::make_unique<TrainedFixture>();
    const std::string data = std::string(TT_TEST_DATA_DIR) + "/tokenize/";
    data::SpmTrainOptions so;
    so.inputs = {data + "corpus.en", data + "corpus.de"};
    so.model_prefix = f->dir.file("spm");
    so.vocab_size = 200;
    so.character_coverage = 1.0;
    so.threads = 1;
    data::train_spm(so);
    auto spm = data::SpmTokenizer::load(so.model_prefix + ".model");

    std::vector<std::string> corpus = read_lines(data + "corpus.en");
    for (auto& l : read_lines(data + "corpus.de")) corpus.push_back(l);
    for (const auto& l : corpus) {
      f->lines.push_back(l);
      const size_t sp = l.find(' ', l.size() / 2);
      if (sp != std::string::npos) {
        f->lines.push_back(l.substr(0, sp));
        f->lines.push_back(l.substr(sp + 1));
      }
    }
    f->lines.resize(std::min<size_t>(f->lines.size(), 200));
    std::vector<std::vector<int32_t>> ids;
    for (const auto& l : f->lines) {
      auto v = spm.encode_ids(l);
      ids.emplace_back(v.begin(), v.end());
    }

    const nn::ModelConfig c = small_decoding_config(spm.piece_size(), 2, 96);
    auto be = backend::make_backend("cpu", 1);
    nn::Transformer model(c, *be);
    model.init_parameters(3);
    train::Adam adam(model.params());
    tensor::Arena arena(*be);
    const int B = 16, steps = 300;
    for (int step = 0; step < steps; ++step) {
      nn::Batch b;
      b.B = B;
      for (int i = 0; i < B; ++i) {
        const auto& s = ids[(static_cast<size_t>(step) * B + i * 7) % ids.size()];
        b.S = std::max(b.S, static_cast<int>(s.size()) + 1);
      }
      b.T = b.S;
      b.src.assign(static_cast<size_t>(B) * b.S, 0);
      b.tgt_in = b.tgt_out = b.src;
      for (int i = 0; i < B; ++i) {
        const auto& s = ids[(static_cast<size_t>(step) * B + i * 7) % ids.size()];
        const size_t o = static_cast<size_t>(i) * b.S;
        std::copy(s.begin(), s.end(), b.src.begin() + static_cast<ptrdiff_t>(o));
        b.src[o + s.size()] = c.eos_id;
        b.tgt_in[o] = c.bos_id;
        std::copy(s.begin(), s.end(), b.tgt_in.begin() + static_cast<ptrdiff_t>(o) + 1);
        std::copy(s.begin(), s.end(), b.tgt_out.begin() + static_cast<ptrdiff_t>(o));
        b.tgt_out[o + s.size()] = c.eos_id;
        b.src_lengths.push_back(static_cast<int32_t>(s.size()) + 1);
        b.tgt_lengths.push_back(static_cast<int32_t>(s.size()) + 1);
      }
      tensor::ArenaScope scope(arena);
      model.params().zero_grad();
      auto stats = model.forward_backward(b, arena, nn::StepRng{1, step, false}, 1.0f / static_cast<float>(B));
      const float warm = std::min(1.0f, static_cast<float>(step + 1) / 30.0f);
      adam.step(model.params(), 3e-3f * warm);
      (void)stats;
    }
    f->model_dir = f->dir.file("model");
    util::AtomicDirectory out(f->model_dir);
    const nlohmann::json vocab = io::copy_vocab_files(out.path(), so.model_prefix + ".model", so.model_prefix + ".model");
    io::write_model_files(out.path(), c, model.params(), nlohmann::json{{"vocab", vocab}});
    out.commit();
    return f;
  }();
  return *fixture;
}

}  // namespace tt::test
