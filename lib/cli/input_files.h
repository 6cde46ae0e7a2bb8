// Checks a tool makes on its input files before doing any work, so that a missing, directory or
// unreadable file is reported at once, naming the file, with exit status 1 (a data/file problem, not a
// usage error: see man 7 tt). CLI11's ExistingFile would report it as a usage error (exit 2).
#pragma once

#include <string>
#include <vector>

namespace tt::cli {

// Throws tt::IoError "<path>: cannot read: <reason>" unless `path` can be opened and read as a file.
// "-" (stdin) always passes. Regular files are probed with a 1-byte pread (nothing is consumed); pipes
// and devices are only opened. `what` ("--config file") is prepended to the message when given.
void check_input_file(const std::string& path, const std::string& what = "");
void check_input_files(const std::vector<std::string>& paths, const std::string& what = "");

}  // namespace tt::cli
