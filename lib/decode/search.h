// Batched beam search (greedy = beam 1) over a batch of source sentences.
//
// Each step keeps, per sentence, the k best one-token continuations of its k open hypotheses (k = beam at
// first); continuations ending in </s> are finished and leave the beam, which shrinks (as in Marian), so
// beam 1 is exactly greedy. Ties (equal total log-probability) break towards the higher log-probability of
// the step itself, then the lower hypothesis, then the lower token id. Only each row's beam + 3 best
// tokens and its </s> are read back from the device (backend topk): no [rows, V] copy per step.
// Stop rule: a sentence stops when its beam is empty, or when its nbest-th best finished hypothesis scores
// at least what the best open hypothesis could still reach (its log-probability divided by the largest
// length penalty it could get before max length) — so no open hypothesis could enter the n best.
// Finished sentences leave the batch (their decoder rows are dropped with reorder), so long sentences do
// not hold short ones back. Target length: tokens <= max_len_a * source tokens + max_len_b (source tokens
// without </s>), capped by the model's positions; at max length only </s> may follow; before min_len
// </s> may not. Scores are length-normalised (length_penalty.h; L counts </s>).
#pragma once

#include <cstdint>
#include <vector>

#include "decode/length_penalty.h"
#include "decode/scorer.h"
#include "nn/transformer.h"

namespace tt::decode {

struct SearchOptions {
  int beam = 4;
  LengthPenalty length_penalty = LengthPenalty::gnmt;
  float alpha = 0.6f;
  float max_len_a = 1.0f;
  int max_len_b = 50;
  int min_len = 0;
  int nbest = 1;
  // Keep the beam full (fairseq, CTranslate2): a finished hypothesis makes room for the next best open
  // one, and a sentence also stops when the best candidate of a step finishes (with nbest finished).
  bool full_beam = false;
  bool attention = false;  // keep each hypothesis's cross-attention (alignments)
  // Sampling instead of search (sampling.h): `beam` independent samples per sentence, each token drawn
  // from the sampling_topk best (0: all), log-probabilities divided by temperature; seeded by `seed`.
  bool sampling = false;
  int sampling_topk = 0;
  // Nucleus sampling (> 0, with sampling_topk 0): from the fewest best tokens whose probabilities (after
  // the temperature) reach this share of the whole.
  float sampling_topp = 0;
  float temperature = 1.0f;
  uint64_t seed = 1;
  // Output control, each free when off. ban_unk: <unk> is never output. no_repeat_ngram N: no n-gram of N
  // tokens appears twice in a hypothesis (fairseq, CTranslate2; </s> ends a hypothesis and is never
  // banned).
  bool ban_unk = false;
  int no_repeat_ngram = 0;
  // repetition_penalty P (the CTRL form, as CTranslate2): before each step, the score of every token the
  // hypothesis already holds (its prefix included) is divided by P where positive and multiplied by P
  // where negative (repetition_penalty.h); 1: off.
  float repetition_penalty = 1.0f;
  // alternatives N (CTranslate2's return_alternatives; an autocomplete box): at the first position after
  // the prefix, the N best tokens other than </s> each start a hypothesis of their own, which the beam
  // search then completes; a sentence gives those N (fewer if the model offers fewer), in that order.
  int alternatives = 0;
};

struct Hypothesis {
  std::vector<int32_t> tokens;  // target ids without bos/eos
  float score = 0;              // length-normalised, what ranks hypotheses
  float log_prob = 0;           // sum of token log-probabilities (incl. eos)
  // With SearchOptions::attention: [tokens.size() + 1, source size] (rows: each target token, then </s>;
  // columns: the source ids including </s>); the last decoder layer's cross-attention, mean over heads.
  std::vector<float> attention;
};

// The ids the search treats specially (a model's ModelConfig has them). pad and bos are never output.
struct SpecialIds {
  int32_t pad = 0, bos = 2, eos = 3, unk = 1;
};
inline SpecialIds special_ids(const nn::ModelConfig& c) { return {c.pad_id, c.bos_id, c.eos_id, c.unk_id}; }

// The tokens that would repeat an n-gram of `n` tokens in `tokens` if they came next (sorted, unique;
// none for n < 1 or a hypothesis shorter than n - 1).
std::vector<int32_t> repeated_ngram_ends(const std::vector<int32_t>& tokens, int n);

// Throws tt::ConfigError naming the field for options out of range (beam < 1, nbest outside [1, beam], ...).
void validate(const SearchOptions& options);

// A sentence's terminology constraints: target phrases (ids) that must each appear in its translations,
// a phrase listed twice twice (constraints.h).
using Constraints = std::vector<std::vector<int32_t>>;

// What the search takes per source besides its ids; each list empty (none) or one entry per source.
struct SearchInputs {
  // For sampling, each source's random stream (e.g. its input line; default: its index).
  std::vector<uint64_t> streams;
  // Target ids each source's hypotheses start with (none: empty), fed to the decoder in one teacher-forced
  // pass (StepScorer::force); their log-probabilities count in the scores, and the length limit counts the
  // tokens after them. Sources with prefixes of different lengths are searched apart.
  std::vector<std::vector<int32_t>> prefixes;
  // Terminology (constraints.h): every hypothesis of the source holds every phrase. Phrases that could not
  // fit within the length limit are left out (fit_constraints).
  std::vector<Constraints> constraints;
};

// The most target tokens (without </s>) a hypothesis may have for a source of `words` ids (without its
// </s>) after a prefix of `prefix` tokens, in a model of `max_positions` positions.
int max_target_length(const SearchOptions& o, int words, int prefix, int max_positions);

// sources: source ids each ending in eos (as the trainer feeds them). Returns, per source, its n best
// hypotheses best first. An empty source (just eos, or nothing) gives one empty hypothesis.
std::vector<std::vector<Hypothesis>> search(StepScorer& scorer, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options, const SpecialIds& ids = {},
                                            const SearchInputs& inputs = {});
std::vector<std::vector<Hypothesis>> search(nn::Transformer& model, const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options);
// Ensembles: the same over several models (average of log-probabilities; same target vocabulary — checked).
std::vector<std::vector<Hypothesis>> search(const std::vector<nn::Transformer*>& models,
                                            const std::vector<std::vector<int32_t>>& sources,
                                            const SearchOptions& options);

}  // namespace tt::decode
