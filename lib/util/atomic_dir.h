// Write a directory all-or-nothing: files go into a temporary sibling directory, which commit() fsyncs
// and renames onto the target. A crash or Ctrl-C at any instant leaves either the previous directory or
// the new one, never a mix; destroying an uncommitted AtomicDirectory removes the temporary.
// Replacing an existing directory: the two are swapped in one step (renameat2 RENAME_EXCHANGE) and the
// old one removed, so a complete directory is at the target at every instant. Where the file system
// cannot swap, the old one is first renamed aside and the new one renamed in: its contents are never
// lost before the new directory is complete. A target that did not exist when the AtomicDirectory was
// made and appears while the new one is written is never replaced: commit() refuses (IoError).
// A symlink as the target is followed (the directory it names is replaced, the link stays); an existing
// target that is not a directory (a file, a FIFO, a device) is refused, never replaced.
#pragma once

#include <string>

namespace tt::util {

class AtomicDirectory {
 public:
  // Creates the temporary directory beside `target` (the parent must exist or be creatable).
  explicit AtomicDirectory(std::string target);
  ~AtomicDirectory();
  AtomicDirectory(const AtomicDirectory&) = delete;
  AtomicDirectory& operator=(const AtomicDirectory&) = delete;

  const std::string& path() const { return temp_; }  // write the files here
  std::string file(const std::string& name) const;
  const std::string& target() const { return target_; }
  // fsync every file and the directory, then rename onto the target. Throws tt::IoError on failure.
  void commit();

 private:
  void install_new();
  std::string replace_existing();

  std::string target_;
  std::string temp_;
  bool existed_ = false;  // the target existed when writing began: commit() replaces it
  bool committed_ = false;
};

// fsync a file or directory by path. Throws tt::IoError naming it on failure.
void fsync_path(const std::string& path);

}  // namespace tt::util
