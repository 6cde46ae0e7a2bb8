// `tt-convert import-marian`: a Hugging Face MarianMTModel directory (OPUS-MT and other Marian
// Transformers: config.json, model.safetensors, source.spm, target.spm, vocab.json) as a tt model directory.
//
// The mapping: Marian's post-LN Transformer is tt's with the fields config.h describes for models trained
// elsewhere — its activation (swish for OPUS-MT), embeddings scaled by sqrt(d_model) or not, the sinusoidal
// table in halves, final_logits_bias as the logits bias (left out when it is all zero), pad as the decoder's
// start token, and vocab.json as the piece table both SentencePiece models read through
// (io/vocabulary.h). Every tensor of the file is either mapped, or checked to be what tt computes itself
// (the position tables, lm_head tied to the embedding); anything else, and any config value tt cannot
// express, is refused naming the key or tensor — never converted wrongly.
#pragma once

#include <string>
#include <vector>

#include "nn/config.h"

namespace tt::io {

struct MarianImportOptions {
  bool replace = false;  // replace an existing output (an empty directory or a tt model directory)
};

struct MarianImportResult {
  nn::ModelConfig config;
  std::vector<std::string> files;  // written into the output directory
  int tensors = 0;                 // in the tt model
};

// Everything is read and checked before the output appears (atomically). Errors name the file and the key
// or tensor: tt::FormatError for what the directory holds, tt::IoError for what cannot be read or written.
MarianImportResult import_marian(const std::string& hf_dir, const std::string& out_dir,
                                 const MarianImportOptions& options = {});

}  // namespace tt::io
