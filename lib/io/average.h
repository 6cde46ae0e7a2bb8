// Checkpoint averaging: the element-wise mean of N model directories' weights (Vaswani et al. §6.1
// average the last 5 or 20 checkpoints). Every source must have the same tensors (names, shapes, dtypes)
// and the same "model" config: any difference is a tt::FormatError naming the file and the tensor or key,
// never a silent skip. Sums are taken in double, the mean is stored as F32.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt::io {

struct AverageOptions {
  // Replace an existing output directory (only an empty one or a model directory: never a run directory
  // or an unrelated folder). Without it an existing output is an error.
  bool replace = false;
};

struct AverageResult {
  int64_t tensors = 0;
  int64_t parameters = 0;             // elements averaged
  std::vector<std::string> vocab_files;  // file names copied from the first source
};

// Writes the average of `sources` (model directories: config.json + model.safetensors + the SentencePiece
// model(s) its "vocab" section names) as the model directory `out`:
//  - model.safetensors: the mean, F32, tensor order of the first source; __metadata__ records
//    "averaged_from" (JSON list of the source directories), "tt_average" and "tt_version";
//  - config.json: byte-for-byte copy of the first source's (extra keys kept);
//  - the vocabulary files, which must be identical in every source. Optimizer and trainer state are not copied.
// Everything is checked before anything is written; `out` appears atomically (a temporary sibling directory,
// every file fsync'ed, then renamed), so a failure leaves no partial directory and no stray temporary.
AverageResult average_model_dirs(const std::string& out, const std::vector<std::string>& sources,
                                 const AverageOptions& options = {});

}  // namespace tt::io
