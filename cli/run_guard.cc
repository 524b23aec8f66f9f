#include "cli/run_guard.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "worker/cgroup_tree.h"

namespace ballast::cli {
namespace {

// How long the guard waits for the killed processes to be gone before it
// removes the cgroups.
constexpr int kEmptyTimeoutMs = 10000;
constexpr int kWakeFd = 3;

// Detaches the guard from the run: a session of its own, the terminal's
// signals ignored, stdin/stdout/stderr on /dev/null (a pipeline reading the
// run's output does not wait for the guard), no descriptor of the run but
// the pipe's read end, moved to kWakeFd. Async-signal-safe.
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

// The guard: waits until the run is gone (end of file on the pipe), then
// kills and removes what is left. Async-signal-safe.
[[noreturn]] void Guard(int wake_fd, const char* kill_dir, const char* const* remove_dirs) {
  Detach(wake_fd);
  char byte;
  while (read(kWakeFd, &byte, 1) < 0 && errno == EINTR) {
  }
  cgroup::Kill(kill_dir);
  cgroup::WaitEmpty(kill_dir, kEmptyTimeoutMs);
  cgroup::RemoveTree(kill_dir);
  for (const char* const* dir = remove_dirs; *dir != nullptr; ++dir) {
    cgroup::WaitEmpty(*dir, kEmptyTimeoutMs);
    cgroup::RemoveTree(*dir);
  }
  _exit(0);
}

}  // namespace

StatusOr<std::unique_ptr<RunGuard>> RunGuard::Start(const std::string& kill_dir,
                                                    const std::vector<std::string>& remove_dirs) {
  // Everything the child reads is made before fork.
  std::vector<const char*> others;
  for (const std::string& dir : remove_dirs) others.push_back(dir.c_str());
  others.push_back(nullptr);
  int pipe_fds[2];
  if (pipe2(pipe_fds, O_CLOEXEC) != 0) {
    return Status::Unavailable(std::string("the run's guard: pipe: ") + std::strerror(errno));
  }
  const pid_t pid = fork();
  if (pid < 0) {
    const int error = errno;
    close(pipe_fds[0]);
    close(pipe_fds[1]);
    return Status::Unavailable(std::string("the run's guard: fork: ") + std::strerror(error));
  }
  if (pid == 0) Guard(pipe_fds[0], kill_dir.c_str(), others.data());
  close(pipe_fds[0]);
  return std::unique_ptr<RunGuard>(new RunGuard(pid, pipe_fds[1]));
}

RunGuard::~RunGuard() {
  close(release_fd_);
  while (waitpid(pid_, nullptr, 0) < 0 && errno == EINTR) {
  }
}

}  // namespace ballast::cli
