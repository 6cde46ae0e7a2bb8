// Write a file all-or-nothing: data goes to a temporary file beside the target, which is fsync'ed and
// renamed over the target on commit(). Destroying an uncommitted AtomicFile removes the temporary, so a
// failure or an exception never leaves half a model or half a translation behind.
// The target is what the path names, as a shell's `>` sees it: a symlink is followed (the file it points
// to is replaced, the link stays), and a FIFO, a device or a socket is written through in place (it cannot
// be replaced, and must never be: `--html /dev/full` fails with "No space left on device"). A directory is
// refused.
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
  // Where the bytes go until commit(): the temporary, or the target itself when written through.
  const std::string& temp_path() const { return temp_path_; }
  // Flush, fsync and rename onto the target path (written through: flush only). Throws tt::IoError on failure.
  void commit();

 private:
  std::string path_;       // as the caller named it (for messages)
  std::string temp_path_;  // the temporary, or the target when written through
  std::string target_;     // the symlink's end
  bool through_ = false;   // a FIFO, device or socket: no temporary, no rename
  std::ofstream out_;
  bool committed_ = false;
};

// The path a symlink chain ends at (relative links resolved against their own directory); `path` itself
// when it is not a symlink. The end need not exist (a dangling link is created through, as `>` does).
// Throws tt::IoError after 40 links (a loop).
std::string follow_symlinks(const std::string& path);

// Rename `from` onto `to` after fsync'ing `from` (for files written by a third-party library).
void commit_file(const std::string& from, const std::string& to);

// A unique temporary path beside `path` (same directory, so rename() is atomic).
std::string temp_path_beside(const std::string& path);

}  // namespace tt::util
