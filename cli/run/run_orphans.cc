#include "cli/run/run_orphans.h"

#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <charconv>
#include <filesystem>
#include <fstream>
#include <map>
#include <sstream>
#include <thread>

#include "cgroup/cgroup_tree.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// The entry of process `pid` from its /proc/<pid>/stat: after the command
// (which may hold spaces and parentheses) come "state ppid ...". False when
// the process is gone.
bool ReadProcessEntry(pid_t pid, ProcessEntry* entry) {
  std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(in, line)) return false;
  const size_t close = line.rfind(')');
  if (close == std::string::npos) return false;
  std::istringstream fields(line.substr(close + 1));
  entry->pid = pid;
  return static_cast<bool>(fields >> entry->state >> entry->parent);
}

}  // namespace

std::vector<ProcessEntry> ReadProcessTable() {
  std::vector<ProcessEntry> table;
  std::error_code error;
  for (const auto& dir : fs::directory_iterator("/proc", error)) {
    const std::string name = dir.path().filename().string();
    pid_t pid = 0;
    const auto [end, parsed] = std::from_chars(name.data(), name.data() + name.size(), pid);
    if (parsed != std::errc() || end != name.data() + name.size() || pid <= 0) continue;
    ProcessEntry entry;
    if (ReadProcessEntry(pid, &entry)) table.push_back(entry);
  }
  return table;
}

std::vector<pid_t> EscapedToKill(const std::vector<ProcessEntry>& table, pid_t self,
                                 const std::set<pid_t>& keep, const std::vector<pid_t>& listed) {
  std::map<pid_t, std::vector<pid_t>> children;
  std::map<pid_t, char> state;
  for (const ProcessEntry& entry : table) {
    children[entry.parent].push_back(entry.pid);
    state[entry.pid] = entry.state;
  }
  std::vector<pid_t> pending;
  for (pid_t child : children[self]) {
    if (!keep.contains(child)) pending.push_back(child);
  }
  pending.insert(pending.end(), listed.begin(), listed.end());
  std::set<pid_t> found;
  while (!pending.empty()) {
    const pid_t pid = pending.back();
    pending.pop_back();
    if (pid == self || keep.contains(pid) || !state.contains(pid)) continue;
    if (!found.insert(pid).second) continue;
    const auto below = children.find(pid);
    if (below != children.end()) {
      pending.insert(pending.end(), below->second.begin(), below->second.end());
    }
  }
  std::vector<pid_t> running;
  for (pid_t pid : found) {
    if (state[pid] != 'Z' && state[pid] != 'X') running.push_back(pid);
  }
  return running;
}

RunOrphans::RunOrphans() {
  prctl(PR_GET_CHILD_SUBREAPER, &was_subreaper_);
  adopting_ = prctl(PR_SET_CHILD_SUBREAPER, 1) == 0;
  const pid_t self = getpid();
  for (const ProcessEntry& entry : ReadProcessTable()) {
    if (entry.parent == self) keep_.insert(entry.pid);
  }
}

RunOrphans::~RunOrphans() {
  if (adopting_ && was_subreaper_ == 0) prctl(PR_SET_CHILD_SUBREAPER, 0);
}

size_t RunOrphans::ReapExited(const std::set<pid_t>& workers) {
  if (!adopting_) return 0;  // nothing was handed to this process
  size_t reaped = 0;
  while (true) {
    siginfo_t info{};
    if (waitid(P_ALL, 0, &info, WEXITED | WNOHANG | WNOWAIT) != 0 || info.si_pid == 0) break;
    const pid_t pid = info.si_pid;
    if (keep_.contains(pid) || workers.contains(pid)) break;
    if (waitpid(pid, nullptr, WNOHANG) != pid) break;
    ++reaped;
  }
  return reaped;
}

size_t RunOrphans::KillInGroup(const std::string& dir) {
  size_t signalled = 0;
  for (pid_t pid : cgroup::Processes(dir)) {
    if (keep_.contains(pid) || kill(pid, SIGKILL) != 0) continue;
    signalled_.insert(pid);
    ++signalled;
  }
  if (signalled > 0) {
    spdlog::info("killed what left a worker's group or session processes={} cgroup={}", signalled,
                 dir);
  }
  return signalled;
}

RunOrphans::Sweep RunOrphans::KillEscaped(const std::vector<std::string>& quota_dirs,
                                          std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  const size_t before = signalled_.size();
  std::set<pid_t> killed_here;
  Sweep sweep;
  while (true) {
    ReapExited({});
    std::vector<pid_t> listed;
    for (const std::string& dir : quota_dirs) {
      const std::vector<pid_t> in = cgroup::Processes(dir);
      listed.insert(listed.end(), in.begin(), in.end());
    }
    const std::vector<pid_t> victims = EscapedToKill(ReadProcessTable(), getpid(), keep_, listed);
    if (victims.empty()) break;
    if (std::chrono::steady_clock::now() >= deadline) {
      sweep.remaining = victims.size();
      break;
    }
    for (pid_t pid : victims) {
      if (kill(pid, SIGKILL) == 0) {
        signalled_.insert(pid);
        killed_here.insert(pid);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  // The table shows a killed process as a zombie before this process can
  // reap it: wait for each one that became a child here, so none is left.
  for (pid_t pid : killed_here) {
    while (waitpid(pid, nullptr, WNOHANG) == 0 && std::chrono::steady_clock::now() < deadline) {
      std::this_thread::sleep_for(std::chrono::milliseconds(1));
    }
  }
  sweep.killed = signalled_.size();
  if (signalled_.size() > before || sweep.remaining > 0) {
    spdlog::info("killed what left the run's cgroups or sessions processes={} remaining={}",
                 signalled_.size() - before, sweep.remaining);
  }
  return sweep;
}

}  // namespace ballast::cli
