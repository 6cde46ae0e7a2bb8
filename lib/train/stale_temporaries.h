// Temporaries that killed runs left in a run directory. A checkpoint is written under a temporary name
// (util::AtomicDirectory) and a link is made under one (set_link), <target>.tmp.<pid>.<n>
// (util::temp_path_beside), then renamed into place; kill -9, an out-of-memory kill or a power cut
// before the rename leaves the temporary, a checkpoint's worth of disk each time, and nothing else would
// ever remove it. A run removes them when it starts, holding the run lock (train/run_lock.h), so no other
// tt-train is writing there; a temporary whose process is still alive is kept all the same.
#pragma once

#include <string>
#include <vector>

namespace tt::train {

// Removes the temporaries of processes that no longer exist from RUN/checkpoints and RUN (the links and
// the write probe); returns their paths relative to RUN. One that cannot be removed is left for the next
// start.
std::vector<std::string> remove_stale_temporaries(const std::string& run_dir);

}  // namespace tt::train
