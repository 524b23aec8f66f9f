#include "cli/run/run_cleanup.h"

#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>

#include <cctype>
#include <charconv>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "cgroup/cgroup_tree.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

constexpr char kGroupPrefix[] = "run";

// A process's state and session from /proc/<pid>/stat; false when it is gone.
// The fields after the command (which may hold spaces and parentheses) are
// "state ppid pgrp session ...".
bool ReadStat(pid_t pid, char* state, pid_t* session) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  pid_t ppid = 0;
  pid_t group = 0;
  return static_cast<bool>(fields >> *state >> ppid >> group >> *session);
}

std::vector<pid_t> ProcessesOf(const std::string& procs_file) {
  std::ifstream in(procs_file);
  std::vector<pid_t> pids;
  pid_t pid = 0;
  while (in >> pid) pids.push_back(pid);
  return pids;
}

// Kills what is left in a stale group and the groups below it, and removes
// them. Returns true when the group is gone.
bool RemoveGroup(const fs::path& dir) {
  if (cgroup::KillAndRemove(dir.string(), 1000) > 0) {
    spdlog::info("stale cgroup left in place group={}", dir.string());
    return false;
  }
  return true;
}

}  // namespace

std::string OwnedGroupName(pid_t owner, const std::string& name) {
  return fmt::format("{}{}-{}", kGroupPrefix, owner, name);
}

pid_t GroupOwner(const std::string& group) {
  const std::string_view text(group);
  if (!text.starts_with(kGroupPrefix)) return 0;
  const char* begin = group.data() + sizeof(kGroupPrefix) - 1;
  const char* end = group.data() + group.size();
  pid_t owner = 0;
  const auto [rest, error] = std::from_chars(begin, end, owner);
  if (error != std::errc() || rest == begin || rest == end || *rest != '-' || owner <= 0) return 0;
  return owner;
}

bool ProcessRuns(pid_t pid) {
  char state = 0;
  pid_t session = 0;
  return ReadStat(pid, &state, &session) && state != 'Z' && state != 'X';
}

int KillSession(pid_t session) {
  if (session <= 0) return 0;
  int killed = 0;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.empty() || !std::isdigit(static_cast<unsigned char>(name[0]))) continue;
    const pid_t pid = static_cast<pid_t>(std::stol(name));
    char state = 0;
    pid_t its_session = 0;
    if (!ReadStat(pid, &state, &its_session) || its_session != session || state == 'Z') continue;
    if (kill(pid, SIGKILL) == 0) ++killed;
  }
  if (killed > 0)
    spdlog::info("killed what a worker left session={} processes={}", session, killed);
  return killed;
}

bool WaitGroupEmpty(const std::string& procs_file, std::chrono::milliseconds patience) {
  const auto deadline = Clock::now() + patience;
  while (true) {
    if (!fs::exists(procs_file) || ProcessesOf(procs_file).empty()) return true;
    if (Clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

std::vector<std::string> RemoveStaleGroups(const std::vector<std::string>& parents) {
  std::vector<std::string> removed;
  for (const std::string& parent : parents) {
    std::vector<std::pair<fs::path, pid_t>> stale;
    std::error_code error;
    for (const auto& entry : fs::directory_iterator(parent, error)) {
      if (!entry.is_directory()) continue;
      const pid_t owner = GroupOwner(entry.path().filename().string());
      if (owner != 0 && !ProcessRuns(owner)) stale.emplace_back(entry.path(), owner);
    }
    for (const auto& [dir, owner] : stale) {
      if (!RemoveGroup(dir)) continue;
      spdlog::info("removed a stale cgroup of an earlier run group={} owner={}", dir.string(),
                   owner);
      removed.push_back(dir.string());
    }
  }
  return removed;
}

std::vector<std::string> RunGroupParents() {
  std::vector<std::string> parents = {"/sys/fs/cgroup/cpu/ballast", "/sys/fs/cgroup/ballast"};
  const std::string v2 = cgroup::V2Mount();
  if (!v2.empty() && v2 + "/ballast" != parents[1]) parents.push_back(v2 + "/ballast");
  return parents;
}

}  // namespace ballast::cli
