// Shared by the tests/data tests: the tiny bilingual fixture corpus and a model trained on it (models are
// trained inside the tests, never committed).
#pragma once

#include <string>

#include "data/spm_trainer.h"
#include "support/tmp_dir.h"

namespace tt::test {

inline std::string fixture_path(const std::string& name) { return std::string(TT_TEST_DATA_DIR) + "/tokenize/" + name; }

// Trains PREFIX = dir/name on corpus.en + corpus.de and returns the path of PREFIX.model.
inline std::string train_fixture_model(const TmpDir& dir, const std::string& model_type = "unigram",
                                       int vocab_size = 200, const std::string& name = "m") {
  data::SpmTrainOptions options;
  options.inputs = {fixture_path("corpus.en"), fixture_path("corpus.de")};
  options.model_prefix = dir.file(name);
  options.vocab_size = vocab_size;
  options.model_type = model_type;
  options.character_coverage = 1.0;  // keep every letter of the tiny corpus (the default drops a rare 'ö')
  options.threads = 1;
  data::train_spm(options);
  return options.model_prefix + ".model";
}

}  // namespace tt::test
