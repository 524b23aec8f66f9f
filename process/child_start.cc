// Starting another program in a child process (child_start.h).
#include "process/child_start.h"

#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstddef>
#include <cstdlib>
#include <string_view>

#include "cgroup/cgroup_tree.h"

namespace ballast::process {
namespace {

// Step 4: every signal this process catches to its default, and with
// `stop_signals` the usual stop signals and SIGPIPE even when ignored.
void DefaultSignals(bool stop_signals) {
  struct sigaction defaults {};
  defaults.sa_handler = SIG_DFL;
  for (int signal = 1; signal < NSIG; ++signal) {
    struct sigaction current {};
    if (sigaction(signal, nullptr, &current) != 0) continue;  // SIGKILL's peers, libc's own
    const bool caught = current.sa_handler != SIG_DFL && current.sa_handler != SIG_IGN;
    const bool stop = stop_signals && (signal == SIGHUP || signal == SIGINT || signal == SIGQUIT ||
                                       signal == SIGPIPE || signal == SIGTERM ||
                                       signal == SIGUSR1 || signal == SIGUSR2 || signal == SIGCHLD);
    if (caught || stop) sigaction(signal, &defaults, nullptr);
  }
}

// In the child, between its start and exec: async-signal-safe calls only,
// and no write to memory but its own stack (with share_memory it shares
// this process's memory). The steps of child_start.h, in their order.
[[noreturn]] void ExecChild(const ChildSpec& spec, pid_t parent) {
  if (spec.parent_death_signal != 0) {
    prctl(PR_SET_PDEATHSIG, spec.parent_death_signal);
    if (getppid() != parent) _exit(127);  // the parent died before prctl
  }
  if (spec.leads == ChildSpec::Leads::kProcessGroup) setpgid(0, 0);
  if (spec.leads == ChildSpec::Leads::kSession) setsid();
  if (spec.cgroup_procs_fd >= 0 && !cgroup::JoinProcsFd(spec.cgroup_procs_fd)) _exit(127);
  for (const char* const* file = spec.cgroup_procs_files; file != nullptr && *file != nullptr;
       ++file) {
    if (!cgroup::JoinProcs(*file)) _exit(127);
  }
  if (spec.share_memory || spec.default_signals) DefaultSignals(spec.default_signals);
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);
  if (spec.output >= 0) {
    if (dup2(spec.output, STDOUT_FILENO) < 0 || dup2(spec.output, STDERR_FILENO) < 0) _exit(127);
  } else if (dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
    _exit(127);
  }
  if (spec.input >= 0 && dup2(spec.input, STDIN_FILENO) < 0) _exit(127);
  if (spec.reply == kReplyFd) {
    if (fcntl(kReplyFd, F_SETFD, 0) < 0) _exit(127);  // dup2 onto itself keeps close-on-exec
  } else if (spec.reply >= 0 && dup2(spec.reply, kReplyFd) < 0) {
    _exit(127);
  }
  if (spec.close_other_fds) close_range(spec.reply >= 0 ? kReplyFd + 1 : 3, ~0u, 0);
  execve(spec.file, spec.argv, spec.envp);
  _exit(127);
}

#if defined(__has_feature)  // clang
#if __has_feature(thread_sanitizer) || __has_feature(address_sanitizer)
#define BALLAST_CHILD_SANITIZED 1
#endif
#endif
#if defined(__SANITIZE_THREAD__) || defined(__SANITIZE_ADDRESS__) || \
    defined(BALLAST_CHILD_SANITIZED)
constexpr bool kSanitized = true;  // their interceptors must not run in a child sharing memory
#else
constexpr bool kSanitized = false;
#endif

// The child's own stack while it shares this process's memory.
constexpr size_t kChildStackBytes = 64 * 1024;

// What clone hands the child: the spec and the parent's pid.
struct CloneStart {
  const ChildSpec* spec;
  pid_t parent;
};

int CloneMain(void* start) {
  const auto* clone_start = static_cast<const CloneStart*>(start);
  ExecChild(*clone_start->spec, clone_start->parent);
}

}  // namespace

pid_t StartChild(const ChildSpec& spec) {
  const pid_t parent = getpid();
  if (!spec.share_memory || kSanitized) {
    const pid_t child = fork();
    if (child == 0) ExecChild(spec, parent);
    return child;
  }
  std::vector<std::byte> stack(kChildStackBytes);  // new's alignment suits a stack's top
  CloneStart start{&spec, parent};
  sigset_t all;
  sigset_t before;
  sigfillset(&all);
  pthread_sigmask(SIG_SETMASK, &all, &before);
  const pid_t child =
      clone(CloneMain, stack.data() + stack.size(), CLONE_VM | CLONE_VFORK | SIGCHLD, &start);
  pthread_sigmask(SIG_SETMASK, &before, nullptr);
  return child;
}

std::string ResolveCommand(const std::string& command) {
  if (command.empty() || command.find('/') != std::string::npos) return command;
  const char* path = std::getenv("PATH");
  std::string_view dirs = path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const size_t colon = dirs.find(':');
    const std::string dir(dirs.substr(0, colon));
    const std::string candidate = (dir.empty() ? "." : dir) + "/" + command;
    struct stat info {};
    if (stat(candidate.c_str(), &info) == 0 && S_ISREG(info.st_mode) &&
        access(candidate.c_str(), X_OK) == 0) {
      return candidate;
    }
    if (colon == std::string_view::npos) return "";
    dirs.remove_prefix(colon + 1);
  }
}

std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& string : strings) pointers.push_back(string.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace ballast::process
