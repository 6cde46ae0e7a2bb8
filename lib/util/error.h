// The tt::Error hierarchy. The library throws these; tools turn them into one message and an exit code
// (cli/run_tool.h). Messages say what went wrong *and* what to do, naming the file/line, option or tensor.
#pragma once

#include <stdexcept>
#include <string>

namespace tt {

// Base of every user-facing failure. `hint` is an optional second line ("try --device cpu").
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, std::string hint = {})
      : std::runtime_error(what), hint_(std::move(hint)) {}
  const std::string& hint() const { return hint_; }

 private:
  std::string hint_;
};

// A file could not be opened, read or written.
class IoError : public Error {
 public:
  using Error::Error;
};

// Input data is malformed (bad UTF-8, wrong field count, corrupt model file ...).
class FormatError : public Error {
 public:
  using Error::Error;
};

// An option or configuration value is invalid.
class ConfigError : public Error {
 public:
  using Error::Error;
};

// stdout's reader went away (EPIPE): tools exit quietly with status 0, as `head` users expect.
class BrokenPipe : public std::exception {
 public:
  const char* what() const noexcept override { return "broken pipe"; }
};

// Internal invariant violated: a bug in tt, not in the user's input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace tt
