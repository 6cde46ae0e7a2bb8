// `tt-convert export-ct2`: a tt model directory as a CTranslate2 model directory (model.bin, config.json,
// the vocabulary as JSON lists of pieces), so that the same weights run in CTranslate2's Translator. The
// mapping: CTranslate2's TransformerSpec (revision 7) with tt's layout — post- or pre-LN, the model's
// activation (ReLU, or swish / gelu for imported models), embeddings scaled by sqrt(d_model) or not,
// sinusoidal (tt's own table, in either layout) or learned positions, the output projection tied to the
// target embedding with the model's logits bias or a zero one; the pieces are the model's ids' (through
// its piece table where it has one); each self-attention's q, k, v as one [3d, d] product and each
// cross-attention's k, v as one [2d, d] product, as CTranslate2 fuses them. tt appends </s> to every
// source sentence and starts the target with <s>: the config says so (add_source_eos, decoder_start_token).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace tt::io {

struct Ct2ExportOptions {
  bool replace = false;  // replace an existing output (only an empty directory or a CTranslate2 model)
};

struct Ct2ExportResult {
  int64_t variables = 0;  // stored in model.bin (aliases not counted)
  int64_t aliases = 0;
  std::vector<std::string> files;  // written into the output directory
  bool named_ids = false;          // the model has no SentencePiece model: pieces are "<pad>", ..., "t4", ...
};

// Everything is read and checked before the output appears (atomically, util/atomic_dir.h). Errors name
// the file: a missing or damaged model file is a tt::FormatError / tt::IoError.
Ct2ExportResult export_ct2(const std::string& model_dir, const std::string& out_dir, const Ct2ExportOptions& options = {});

}  // namespace tt::io
