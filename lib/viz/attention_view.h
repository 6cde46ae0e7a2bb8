// What a user asked to see of a sentence's attention (attention_maps.h): some kinds, some layers, some heads,
// heads reduced (mean or max), and SentencePiece pieces merged into words. Merging keeps each row a
// distribution: the columns of a word's pieces are summed (the weight given to the word), the rows of a
// word's pieces averaged (the word's queries, each weighing the same). So rows still sum to 1 — except
// after --reduce max, whose rows are per-key maxima and sum to 1 or more.
#pragma once

#include <string>
#include <vector>

#include "viz/attention_maps.h"

namespace tt::viz {

enum class Reduce { none, mean, max };
Reduce parse_reduce(const std::string& name);  // none, mean, max
const char* reduce_name(Reduce r);

// "0,5", "0-3", "1,3-5": sorted, without repeats. Throws tt::ConfigError naming `what` on bad syntax.
std::vector<int> parse_index_list(const std::string& spec, const std::string& what);

struct ViewOptions {
  KindSet kinds;
  std::vector<int> layers;  // empty: all layers of each kind
  std::vector<int> heads;   // empty: all heads
  Reduce reduce = Reduce::none;
  bool merge_words = false;
  std::string layers_name = "layers", heads_name = "heads";  // how messages name the options
};

// A sentence's tokens as text: pieces, and which stand alone (specials such as <s> and </s>).
struct Tokens {
  std::vector<std::string> pieces;
  std::vector<bool> special;
};

// Word of each piece (0, 1, ...): a piece starting with U+2581 starts a word, a special is a word of its own.
std::vector<int> word_of_pieces(const Tokens& tokens);
// The words' text: their pieces joined, the leading U+2581 dropped.
std::vector<std::string> word_labels(const Tokens& tokens, const std::vector<int>& word_of);
// m [R, C] -> [Rw, Cw]: rows of one group averaged, columns of one group summed. Groups are 0..n-1, in order.
std::vector<float> merge_matrix(const float* m, int R, int C, const std::vector<int>& row_group, int Rw,
                                const std::vector<int>& col_group, int Cw);

struct MapSet {
  Kind kind = Kind::cross;
  std::vector<int> layers;  // the model's layer indices
  int heads = 0;            // maps per layer (1 after a reduction)
  int rows = 0, cols = 0;
  std::vector<float> data;  // [layers][heads][rows][cols]
};

struct AttentionView {
  std::vector<std::string> src_tokens, tgt_tokens;  // pieces, or words with merge_words
  std::vector<int> heads;                           // the model's head indices selected
  Reduce reduce = Reduce::none;
  std::vector<MapSet> maps;  // the selected kinds, in Kind order
};

// Throws tt::ConfigError naming options.layers_name / heads_name for an index the model does not have.
AttentionView make_view(const SentenceAttention& a, const Tokens& src, const Tokens& tgt, const ViewOptions& options);

}  // namespace tt::viz
