#include "train/stale_temporaries.h"

#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <climits>
#include <filesystem>
#include <regex>

namespace fs = std::filesystem;

namespace tt::train {

namespace {

// The PID in a temporary's name, <target>.tmp.<pid>.<n>; 0 for any other name.
pid_t temporary_owner(const std::string& name) {
  static const std::regex temporary(R"(.+\.tmp\.([0-9]{1,10})\.[0-9]+)");
  std::smatch match;
  if (!std::regex_match(name, match, temporary)) return 0;
  const long long pid = std::stoll(match[1].str());
  return pid > 0 && pid <= INT_MAX ? static_cast<pid_t>(pid) : 0;
}

// Only ESRCH says the process is gone: EPERM is a live process of another user.
bool process_gone(pid_t pid) { return pid != ::getpid() && ::kill(pid, 0) == -1 && errno == ESRCH; }

// In RUN itself, only the names tt-train writes temporaries of (a user's own files are left alone).
bool written_by_a_run(const std::string& name) {
  for (const char* prefix : {"last.", "best.", ".write-test."})
    if (name.rfind(prefix, 0) == 0) return true;
  return false;
}

}  // namespace

std::vector<std::string> remove_stale_temporaries(const std::string& run_dir) {
  std::vector<std::string> removed;
  for (const std::string sub : {"checkpoints/", ""}) {
    std::error_code ec;
    std::vector<std::string> stale;  // relative to RUN
    for (const auto& entry : fs::directory_iterator(fs::path(run_dir) / sub, ec)) {
      const std::string name = entry.path().filename().string();
      if (sub.empty() && !written_by_a_run(name)) continue;
      const pid_t owner = temporary_owner(name);
      if (owner != 0 && process_gone(owner)) stale.push_back(sub + name);
    }
    std::sort(stale.begin(), stale.end());
    for (const std::string& path : stale) {
      fs::remove_all(fs::path(run_dir) / path, ec);  // a link is removed, not followed
      if (!ec) removed.push_back(path);
    }
  }
  return removed;
}

}  // namespace tt::train
