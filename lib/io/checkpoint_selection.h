// Which checkpoints of a training run to average: the last N saved, or the N best by the validation BLEU
// that tt-train logs. A run directory holds checkpoints/step-NNNNNN/ (six or more digits), last, best and
// log.jsonl, whose validation lines look like
//   {"type":"valid","step":1200,"loss":2.31,"ppl":10.1,"bleu":27.4,"checkpoint":"checkpoints/step-001200"}
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace tt::io {

struct CheckpointInfo {
  int64_t step = 0;
  std::string dir;              // <run>/checkpoints/step-NNNNNN
  std::optional<double> bleu;   // the logged validation BLEU, when selected by it
};

struct CheckpointSelection {
  std::vector<CheckpointInfo> checkpoints;  // ascending step
  std::vector<std::string> notes;           // e.g. fewer available than asked for
};

// Every checkpoint directory under <run_dir>/checkpoints (names "step-" + digits; temporaries and other
// entries are ignored), ascending step. A missing checkpoints folder is a tt::IoError.
std::vector<CheckpointInfo> list_checkpoints(const std::string& run_dir);

// The `n` checkpoints with the highest steps. Fewer than `n` gives all with a note; none is an error.
CheckpointSelection select_last_checkpoints(const std::string& run_dir, int n);

// The `n` existing checkpoints with the highest logged validation BLEU (ties: the later step). `log_path`
// defaults to <run_dir>/log.jsonl. Lines that are not validations, have no BLEU or name a deleted
// checkpoint are passed over; a checkpoint validated twice (after a resume) counts with its last line.
// A malformed line is a tt::FormatError naming file:line, except an unterminated last line (a crash
// mid-write), which is passed over with a note.
CheckpointSelection select_best_checkpoints(const std::string& run_dir, int n, const std::string& log_path = {});

}  // namespace tt::io
