// What one run of an exec command lives in (command_group.h).
#include "worker/kernels/command_group.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <spdlog/spdlog.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <mutex>

#include "cgroup/cgroup_tree.h"

namespace ballast::kernels {
namespace {

constexpr int kEmptyTimeoutMs = 1000;

struct CgroupParent {
  std::mutex mutex;
  std::string dir;
};

CgroupParent& Parent() {
  static CgroupParent* parent = new CgroupParent;  // outlives every thread
  return *parent;
}

std::atomic<uint64_t> g_next_group{0};
std::atomic<bool> g_warned{false};

std::string ParentDir() {
  std::lock_guard lock(Parent().mutex);
  return Parent().dir;
}

// Logs, once per process, that commands run without a cgroup.
void WarnOnce(const std::string& dir, int error) {
  if (g_warned.exchange(true)) return;
  spdlog::info("exec commands run in process groups only: no cgroup cgroup={} error=\"{}\"", dir,
               std::strerror(error));
}

}  // namespace

bool SetCommandCgroupParent(const std::string& dir) {
  if (!dir.empty() && access((dir + "/cgroup.kill").c_str(), W_OK) != 0) return false;
  std::lock_guard lock(Parent().mutex);
  Parent().dir = dir;
  return true;
}

CommandGroup CommandGroup::Open() {
  const std::string parent = ParentDir();
  if (parent.empty()) return CommandGroup("", -1);
  std::string dir = fmt::format("{}/cmd-{}-{}", parent, getpid(), g_next_group++);
  if (mkdir(dir.c_str(), 0755) != 0) {
    WarnOnce(dir, errno);
    return CommandGroup("", -1);
  }
  const int fd = open((dir + "/cgroup.procs").c_str(), O_WRONLY | O_CLOEXEC);
  if (fd < 0) {
    WarnOnce(dir, errno);
    rmdir(dir.c_str());
    return CommandGroup("", -1);
  }
  return CommandGroup(std::move(dir), fd);
}

CommandGroup::CommandGroup(CommandGroup&& other) noexcept
    : dir_(std::move(other.dir_)), procs_fd_(other.procs_fd_) {
  other.procs_fd_ = -1;
  other.dir_.clear();
}

CommandGroup::~CommandGroup() {
  if (procs_fd_ >= 0) close(procs_fd_);
  if (!dir_.empty()) cgroup::RemoveTree(dir_.c_str());  // empty unless Wait never ran
}

void CommandGroup::EndLeftovers(pid_t leader) {
  kill(-leader, SIGKILL);  // the zombie leader keeps the group's id taken
  if (dir_.empty()) return;
  if (cgroup::Empty(dir_.c_str())) {  // the usual case: the command left nothing
    cgroup::RemoveTree(dir_.c_str());
    dir_.clear();
    return;
  }
  const size_t left = cgroup::Processes(dir_).size();
  const int stayed = cgroup::KillAndRemove(dir_, kEmptyTimeoutMs);
  if (left > 0) {
    spdlog::info("killed what a command left running processes={} cgroup={}", left, dir_);
  }
  if (stayed > 0) {
    spdlog::info("a command's cgroup stays: processes remain in it cgroup={}", dir_);
  }
  dir_.clear();
}

int CommandGroup::Wait(pid_t leader) {
  siginfo_t info{};
  while (waitid(P_PID, static_cast<id_t>(leader), &info, WEXITED | WNOWAIT) < 0 && errno == EINTR) {
  }
  EndLeftovers(leader);
  if (procs_fd_ >= 0) {
    close(procs_fd_);
    procs_fd_ = -1;
  }
  int status = 0;
  while (waitpid(leader, &status, 0) < 0) {
    if (errno != EINTR) return 127;
  }
  if (WIFEXITED(status)) return WEXITSTATUS(status);
  if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
  return 127;
}

}  // namespace ballast::kernels
