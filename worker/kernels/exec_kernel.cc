// The exec kernel: the user's command in a child process (posix_spawnp), once
// per range or once per item.
//
// Environment contract (docs/workloads.md): the child gets this process's
// environment plus BALLAST_START and BALLAST_END, the half-open range of items
// it is to compute, and with perItem BALLAST_ITEM, its one item (then START =
// ITEM and END = ITEM + 1, so a command sees the same values however the job
// was split). The child's stdout and stderr both go to this process's stderr,
// unchanged, so a worker's own stdout stays free. Exit 0 is success; anything
// else is retried up to `retries` more times and then recorded in the Result
// with its exit code (128 + signal when killed, 127 when it could not start).
// The child starts with no signal blocked and SIGTERM, SIGINT, SIGPIPE and the
// like at their defaults, whatever the worker does with them.
//
// Thread-safety: Compute may run concurrently; it reads `environ`, so nothing
// in the process may call setenv while a kernel runs.
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <string>
#include <string_view>
#include <vector>

#include "kernels/factories.h"

extern char** environ;

namespace ballast::kernels {
namespace {

using workload::Result;
using workload::WorkloadSpec;

// This process's environment without any BALLAST_START/END/ITEM of its own.
std::vector<std::string> InheritedEnvironment() {
  std::vector<std::string> env;
  for (char** entry = environ; entry != nullptr && *entry != nullptr; ++entry) {
    std::string_view text(*entry);
    if (text.starts_with("BALLAST_START=") || text.starts_with("BALLAST_END=") ||
        text.starts_with("BALLAST_ITEM=")) {
      continue;
    }
    env.emplace_back(text);
  }
  return env;
}

class ExecKernel : public Kernel {
 public:
  explicit ExecKernel(const WorkloadSpec& spec) : spec_(spec) {}

  StatusOr<Result> Compute(balance::Range items) override {
    BALLAST_RETURN_IF_ERROR(CheckRange(spec_, items));
    Result total = Result::Empty(workload::WorkloadKind::kExec);
    if (items.empty()) return total;
    if (!spec_.exec.per_item) {
      BALLAST_RETURN_IF_ERROR(total.Merge(RunWithRetries(items, /*per_item=*/false)));
      return total;
    }
    for (uint64_t item = items.begin; item < items.end; ++item) {
      BALLAST_RETURN_IF_ERROR(total.Merge(RunWithRetries({item, item + 1}, /*per_item=*/true)));
    }
    return total;
  }

 private:
  Result RunWithRetries(balance::Range items, bool per_item) const {
    int code = 0;
    uint32_t attempts = 0;
    while (attempts <= spec_.exec.retries) {
      ++attempts;
      code = RunOnce(items, per_item);
      if (code == 0) return Result::ExecSucceeded(items.size());
    }
    return Result::ExecFailed(items, code, attempts);
  }

  // Runs the command once; returns its exit status as a shell would report it.
  int RunOnce(balance::Range items, bool per_item) const {
    std::vector<std::string> env = InheritedEnvironment();
    env.push_back("BALLAST_START=" + std::to_string(items.begin));
    env.push_back("BALLAST_END=" + std::to_string(items.end));
    if (per_item) env.push_back("BALLAST_ITEM=" + std::to_string(items.begin));
    std::vector<char*> envp;
    for (std::string& entry : env) envp.push_back(entry.data());
    envp.push_back(nullptr);
    std::vector<std::string> words = spec_.exec.command;
    std::vector<char*> argv;
    for (std::string& word : words) argv.push_back(word.data());
    argv.push_back(nullptr);

    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, STDERR_FILENO, STDOUT_FILENO);
    // The child starts with no signal blocked and the usual signals at their
    // defaults, whatever the worker blocks or ignores for itself.
    posix_spawnattr_t attributes;
    posix_spawnattr_init(&attributes);
    sigset_t none;
    sigemptyset(&none);
    posix_spawnattr_setsigmask(&attributes, &none);
    sigset_t defaults;
    sigemptyset(&defaults);
    for (int signal : {SIGHUP, SIGINT, SIGQUIT, SIGPIPE, SIGTERM, SIGUSR1, SIGUSR2, SIGCHLD}) {
      sigaddset(&defaults, signal);
    }
    posix_spawnattr_setsigdefault(&attributes, &defaults);
    posix_spawnattr_setflags(&attributes, POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF);
    pid_t child = 0;
    const int error =
        posix_spawnp(&child, argv[0], &actions, &attributes, argv.data(), envp.data());
    posix_spawnattr_destroy(&attributes);
    posix_spawn_file_actions_destroy(&actions);
    if (error != 0) return 127;
    int status = 0;
    while (waitpid(child, &status, 0) < 0) {
      if (errno != EINTR) return 127;
    }
    if (WIFEXITED(status)) return WEXITSTATUS(status);
    if (WIFSIGNALED(status)) return 128 + WTERMSIG(status);
    return 127;
  }

  WorkloadSpec spec_;
};

}  // namespace

std::unique_ptr<Kernel> MakeExecKernel(const WorkloadSpec& spec) {
  return std::make_unique<ExecKernel>(spec);
}

}  // namespace ballast::kernels
