// The SentencePiece model(s) every checkpoint of a run carries, read once when the run starts and written
// from memory at every save. Copying the files at each save made a checkpoint depend on a file that may
// be gone by then: a resumed run's starting checkpoint, deleted by --keep-last a few saves later, or the
// user's model file, replaced meanwhile by one trained for another run (whose pieces the weights do not
// know). Written by io::write_vocab_files (io/model_vocab.h), so a checkpoint is a model directory like
// any other.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

namespace tt::train {

struct RunVocab {
  std::string source, target;  // the model files' bytes (both empty: no vocabulary, an ids-only run)
  bool shared = false;         // one joint model for both sides: written once
  bool empty() const { return source.empty() && target.empty(); }
};

// Reads the model file(s); one file for both sides (the same file, however named) is a shared vocabulary.
// Throws tt::IoError naming a file it cannot read.
RunVocab read_run_vocab(const std::string& source_spm, const std::string& target_spm);

// Writes the model(s) into `dir` (existing) and returns config.json's "vocab" object. Throws tt::IoError.
nlohmann::json write_run_vocab(const std::string& dir, const RunVocab& vocab);

}  // namespace tt::train
