// Test helper shared by the tests of what exec commands leave running: a
// `sleep` whose argv[0] carries a marker unique to the test (a symlink named
// after it), and the live processes that carry it, found in /proc whatever
// their session, process group or parent.
#pragma once

#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include "tests/support/proc_file.h"

namespace ballast::testing {

// A marker unique to this process and `name` (the test's).
inline std::string ProcessMarker(const std::string& name) {
  return "ballast-marked-" + std::to_string(getpid()) + "-" + name;
}

// Makes `dir`/`marker`, a symlink to sleep: run by that path, its argv[0]
// carries the marker. Returns the path.
inline std::string MarkedSleep(const std::filesystem::path& dir, const std::string& marker) {
  const std::filesystem::path link = dir / marker;
  std::error_code error;
  std::filesystem::remove(link, error);
  const char* sleep = std::filesystem::exists("/usr/bin/sleep") ? "/usr/bin/sleep" : "/bin/sleep";
  std::filesystem::create_symlink(sleep, link, error);
  return link.string();
}

// The live processes whose command line holds `marker` (a zombie's is empty).
inline std::vector<pid_t> MarkedProcesses(const std::string& marker) {
  std::vector<pid_t> found;
  std::error_code error;
  for (const auto& entry : std::filesystem::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    if (ReadProcFile(entry.path() / "cmdline").find(marker) != std::string::npos) {
      found.push_back(std::stoi(name));
    }
  }
  return found;
}

// Waits until at least `count` processes carry `marker`, at most `patience`.
// Returns how many do at the end.
inline size_t WaitForMarked(const std::string& marker, size_t count,
                            std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  size_t found = 0;
  while ((found = MarkedProcesses(marker).size()) < count &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return found;
}

// Waits until no process carries `marker`, at most `patience`. Returns how
// many still do at the end.
inline size_t WaitNoneMarked(const std::string& marker, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  size_t found = 0;
  while ((found = MarkedProcesses(marker).size()) > 0 &&
         std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return found;
}

// Kills every process that carries `marker`: a test's own cleanup.
inline void KillMarked(const std::string& marker) {
  for (pid_t pid : MarkedProcesses(marker)) kill(pid, SIGKILL);
}

}  // namespace ballast::testing
