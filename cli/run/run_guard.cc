#include "cli/run/run_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <ctime>

#include "cgroup/cgroup_tree.h"

namespace ballast::cli {
namespace {

// How long, in all, the guard waits for the killed processes to be gone
// before it removes the cgroups (one deadline for every group, not one each:
// a group whose processes cannot be killed must not hold the others).
constexpr int kEmptyTimeoutMs = 10000;
// What the run writes before it lets go of the guard when it has stopped its
// processes and removed its cgroups itself (RunGuard::Release).
constexpr char kReleased = 'r';
constexpr int kWakeFd = 3;

// Detaches the guard from the run: a session of its own, the terminal's
// signals ignored, stdin/stdout/stderr on /dev/null (a pipeline reading the
// run's output does not wait for the guard), no descriptor of the run but
// its end of the socket pair, moved to kWakeFd. Async-signal-safe.
void Detach(int wake_fd) {
  setsid();
  prctl(PR_SET_NAME, "ballast-guard");
  struct sigaction ignore {};
  ignore.sa_handler = SIG_IGN;
  for (int signal : {SIGHUP, SIGINT, SIGQUIT, SIGTERM, SIGPIPE, SIGUSR1, SIGUSR2}) {
    sigaction(signal, &ignore, nullptr);
  }
  dup2(wake_fd, kWakeFd);  // first: the read end may be 0, 1 or 2 when those were closed
  const int null = open("/dev/null", O_RDWR);
  if (null >= 0) {
    dup2(null, STDIN_FILENO);
    dup2(null, STDOUT_FILENO);
    dup2(null, STDERR_FILENO);
  }
  close_range(kWakeFd + 1, ~0U, 0);
}

long long MonotonicMs() {
  timespec now{};
  clock_gettime(CLOCK_MONOTONIC, &now);
  return static_cast<long long>(now.tv_sec) * 1000 + now.tv_nsec / 1000000;
}

// Kills what is in the run's groups: its cgroup v2 subtree at once, and each
// process listed in its other (cgroup v1) groups, which have no cgroup.kill,
// again each round until they are empty (a process may fork meanwhile), at
// most kEmptyTimeoutMs in all. Then removes the groups; one that still holds
// a process stays, for the next run (run_cleanup.h). Async-signal-safe.
void KillAndRemoveAll(const char* kill_dir, const char* const* remove_dirs) {
  cgroup::Kill(kill_dir);
  const long long deadline = MonotonicMs() + kEmptyTimeoutMs;
  for (;;) {
    bool empty = cgroup::Empty(kill_dir);
    for (const char* const* dir = remove_dirs; *dir != nullptr; ++dir) {
      if (!cgroup::Empty(*dir)) {
        empty = false;
        cgroup::KillListed(*dir);
      }
    }
    if (empty || MonotonicMs() >= deadline) break;
    timespec pause{0, 1000000};
    nanosleep(&pause, nullptr);
  }
  cgroup::RemoveTree(kill_dir);
  for (const char* const* dir = remove_dirs; *dir != nullptr; ++dir) cgroup::RemoveTree(*dir);
}

// The guard: waits until the run lets go (a byte, then end of file) or is
// gone (end of file alone), then, in the second case, kills and removes what
// is left. Async-signal-safe.
[[noreturn]] void Guard(int wake_fd, const char* kill_dir, const char* const* remove_dirs) {
  Detach(wake_fd);
  char byte = 0;
  ssize_t got;
  while ((got = read(kWakeFd, &byte, 1)) < 0 && errno == EINTR) {
  }
  // Released: the run has killed what it could and reported what is left;
  // waiting here for what it could not kill would only hold its exit.
  if (got == 1 && byte == kReleased) _exit(0);
  KillAndRemoveAll(kill_dir, remove_dirs);
  _exit(0);
}

}  // namespace

StatusOr<std::unique_ptr<RunGuard>> RunGuard::Start(const std::string& kill_dir,
                                                    const std::vector<std::string>& remove_dirs) {
  // Everything the child reads is made before fork.
  std::vector<const char*> others;
  for (const std::string& dir : remove_dirs) others.push_back(dir.c_str());
  others.push_back(nullptr);
  // A socket pair rather than a pipe: Release writes with MSG_NOSIGNAL, so a
  // guard that is gone (killed) costs the run no SIGPIPE.
  int fds[2];
  if (socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0) {
    return Status::Unavailable(std::string("the run's guard: socketpair: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(fds[0]);
    close(fds[1]);
    return Status::Unavailable(std::string("the run's guard: fork: ") + std::strerror(error));
  }
  if (pid == 0) Guard(fds[0], kill_dir.c_str(), others.data());
  close(fds[0]);
  return std::unique_ptr<RunGuard>(new RunGuard(pid, fds[1]));
}

void RunGuard::Release() {
  if (release_fd_ < 0) return;
  (void)!send(release_fd_, &kReleased, 1, MSG_NOSIGNAL);
  close(release_fd_);
  release_fd_ = -1;
}

RunGuard::~RunGuard() {
  if (release_fd_ >= 0) close(release_fd_);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ballast::cli
