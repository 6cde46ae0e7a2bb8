#include "io/output_dir.h"

#include <filesystem>

#include "util/error.h"

namespace tt::io {

namespace fs = std::filesystem;

void check_output_dir(const std::string& out, bool replace, const std::vector<std::string>& markers,
                      const std::string& kind) {
  std::error_code ec;
  if (!fs::exists(fs::symlink_status(out, ec))) return;
  if (!replace) throw IoError("output directory " + out + " already exists", "choose a new directory or remove it first");
  const std::string hint = "write to a new directory";
  if (fs::is_symlink(out, ec)) throw IoError("refusing to replace " + out + ": it is a symbolic link", hint);
  if (!fs::is_directory(out, ec)) throw IoError("refusing to replace " + out + ": it is not a directory", hint);
  if (fs::is_empty(out, ec)) return;
  bool ours = !fs::exists(fs::path(out) / "checkpoints", ec);
  for (const auto& marker : markers) ours = ours && fs::exists(fs::path(out) / marker, ec);
  if (!ours) throw IoError("refusing to replace " + out + ": it is not " + kind, hint);
}

}  // namespace tt::io
