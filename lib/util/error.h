// The tt::Error hierarchy. The library throws these; tools turn them into one message and an exit code
// (cli/run_tool.h). Messages say what went wrong *and* what to do, naming the file/line, option or tensor.
#pragma once

#include <functional>
#include <stdexcept>
#include <string>

namespace tt {

// How the library's messages name an option: by its field ("max_len" in "option_ref("max_len") + " must be
// at least 1""), since the library knows fields, not a tool's flags (tools know flags; lib/ never does). The field travels marked,
// so a tool can put its flag in its place (Error::name_options, cli/flag_names.h); unnamed, it reads as
// the bare field ("max_len must be at least 1"). Safe beside user data: the marks are control characters.
std::string option_ref(const std::string& field);

// Base of every user-facing failure. `hint` is an optional second line ("try --device cpu").
class Error : public std::runtime_error {
 public:
  explicit Error(const std::string& what, std::string hint = {});
  // `inner` in context: `context` + its message ("corpus.en:3: " + ...), its hint, its option refs kept.
  Error(const std::string& context, const Error& inner);

  const char* what() const noexcept override { return what_.c_str(); }
  const std::string& hint() const { return hint_; }
  // Names each option_ref of the message and hint as name(field), e.g. "max_len" -> "--max-len".
  void name_options(const std::function<std::string(const std::string&)>& name);

 private:
  std::string context_, message_, hint_raw_;  // message_ and hint_raw_ keep the option refs
  std::string what_, hint_;                   // as shown
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

// How the tool was called is wrong (a value out of range, options that contradict each other), found
// before any work: exit 2 at the tool boundary, like a flag the parser refused.
class UsageError : public ConfigError {
 public:
  using ConfigError::ConfigError;
};

// stdout's reader went away (EPIPE): tools exit quietly with status 0, as `head` users expect.
class BrokenPipe : public std::exception {
 public:
  const char* what() const noexcept override { return "broken pipe"; }
};

// A filter stopped by SIGINT or SIGTERM once the line it was writing was whole (util/signals.h): the
// tool exits 128 + signo, writing nothing more.
class Interrupted : public std::exception {
 public:
  explicit Interrupted(int signo) : signo(signo) {}
  const char* what() const noexcept override { return "interrupted"; }
  int signo;
};

// Internal invariant violated: a bug in tt, not in the user's input.
class InternalError : public std::logic_error {
 public:
  using std::logic_error::logic_error;
};

}  // namespace tt
