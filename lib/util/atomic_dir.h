// Write a directory all-or-nothing: files go into a temporary sibling directory, which commit() fsyncs
// and renames onto the target. A crash or Ctrl-C at any instant leaves either the previous directory or
// the new one, never a mix; destroying an uncommitted AtomicDirectory removes the temporary.
// Replacing an existing directory: it is first renamed aside, the new one renamed in, then the old one
// removed — its contents are never lost before the new directory is complete.
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
  std::string target_;
  std::string temp_;
  bool committed_ = false;
};

// fsync a file or directory by path. Throws tt::IoError naming it on failure.
void fsync_path(const std::string& path);

}  // namespace tt::util
