// The rule for a directory a tool writes as a whole (tt-average, tt-convert): an existing one is replaced
// only when asked, and only if it is empty or of the kind the tool writes (it holds every marker file);
// never a symbolic link, a file, a training run or some other folder the user would not want deleted.
#pragma once

#include <string>
#include <vector>

namespace tt::io {

// Returns if `out` does not exist, or may be replaced. Otherwise throws tt::IoError: "output directory
// OUT already exists" without `replace`; "refusing to replace OUT: it is not <kind>" with it.
void check_output_dir(const std::string& out, bool replace, const std::vector<std::string>& markers,
                      const std::string& kind);

}  // namespace tt::io
