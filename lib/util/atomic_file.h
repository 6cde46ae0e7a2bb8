// Write a file all-or-nothing: data goes to a temporary file beside the target, which is fsync'ed and
// renamed over the target on commit(). Destroying an uncommitted AtomicFile removes the temporary, so a
// failure or an exception never leaves half a model or half a translation behind.
#pragma once

#include <fstream>
#include <string>

namespace tt::util {

class AtomicFile {
 public:
  explicit AtomicFile(std::string path, bool binary = true);
  ~AtomicFile();
  AtomicFile(const AtomicFile&) = delete;
  AtomicFile& operator=(const AtomicFile&) = delete;

  std::ostream& stream() { return out_; }
  const std::string& temp_path() const { return temp_path_; }
  // Flush, fsync and rename onto the target path. Throws tt::IoError on failure.
  void commit();

 private:
  std::string path_;
  std::string temp_path_;
  std::ofstream out_;
  bool committed_ = false;
};

// Rename `from` onto `to` after fsync'ing `from` (for files written by a third-party library).
void commit_file(const std::string& from, const std::string& to);

// A unique temporary path beside `path` (same directory, so rename() is atomic).
std::string temp_path_beside(const std::string& path);

}  // namespace tt::util
