#include "cli/run/worker_launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <sys/prctl.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

namespace ballast::cli {
namespace {

// Writes this process's id into the cgroup.procs file `procs`: moves it into
// that cgroup. Async-signal-safe. Returns false when that fails.
bool JoinCgroup(const char* procs) {
  const int fd = open(procs, O_WRONLY | O_CLOEXEC);
  if (fd < 0) return false;
  char text[16];
  char* end = text + sizeof(text);
  char* digit = end;
  for (unsigned long pid = static_cast<unsigned long>(getpid()); digit == end || pid > 0;
       pid /= 10) {
    *--digit = static_cast<char>('0' + pid % 10);
  }
  const bool moved = write(fd, digit, end - digit) == end - digit;
  close(fd);
  return moved;
}

// In the child, between fork and exec (async-signal-safe calls only): ties
// the worker to this process (SIGTERM when it dies, however it dies), makes
// it lead a session of its own (without cgroups, what it leaves is found by
// that session; and the terminal's Ctrl-C reaches this process alone), joins
// the cgroups whose cgroup.procs `procs` names (null-terminated: the node's
// CPU quota, the node's group of the run), sends its output to `log` (a file
// descriptor the parent opened; never to the parent's stdout), and execs. A
// worker that cannot join the run's group does not start: what it started
// would not be contained.
[[noreturn]] void ExecWorker(pid_t parent, const char* const* procs, int log, char* const argv[],
                             char* const envp[]) {
  prctl(PR_SET_PDEATHSIG, SIGTERM);
  if (getppid() != parent) _exit(127);  // the parent died before prctl
  setsid();
  sigset_t none;
  sigemptyset(&none);
  sigprocmask(SIG_SETMASK, &none, nullptr);  // the parent's threads block SIGINT and SIGTERM
  for (const char* const* file = procs; *file != nullptr; ++file) {
    if (!JoinCgroup(*file)) _exit(127);
  }
  if (dup2(log, STDOUT_FILENO) < 0 || dup2(log, STDERR_FILENO) < 0) _exit(127);
  // The worker must not inherit the coordinator's listening socket (it
  // would keep the port bound after the coordinator closed it).
  close_range(3, ~0u, 0);
  execve(argv[0], argv, envp);
  _exit(127);
}

// `strings` as a null-terminated array of pointers into them.
std::vector<char*> PointersTo(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (auto& string : strings) pointers.push_back(string.data());
  pointers.push_back(nullptr);
  return pointers;
}

}  // namespace

std::vector<std::string> WorkerArgs(const WorkerLaunch& launch) {
  std::vector<std::string> args = {launch.binary, "--coordinator",        launch.coordinator_url,
                                   "--job",       launch.job_id,          "--name",
                                   launch.node,   "--job-name",           launch.job_name,
                                   "--namespace", launch.metric_namespace};
  if (!launch.metrics_listen.empty()) {
    args.insert(args.end(), {"--metrics-listen", launch.metrics_listen});
  }
  args.insert(args.end(), {"--threads", std::to_string(launch.threads)});
  if (launch.duty_speed > 0) {
    args.insert(args.end(), {"--speed", fmt::format("{}", launch.duty_speed)});
  }
  if (!launch.exec_cgroup.empty()) args.insert(args.end(), {"--exec-cgroup", launch.exec_cgroup});
  if (launch.verbose) args.push_back("-v");
  return args;
}

std::vector<std::string> WorkerEnvironment(const std::string& token,
                                           const char* const* environment) {
  std::vector<std::string> env = {"BALLAST_TOKEN=" + token};
  for (const char* const* var = environment; *var != nullptr; ++var) {
    if (std::string_view(*var).rfind("BALLAST_TOKEN=", 0) != 0) env.emplace_back(*var);
  }
  return env;
}

std::vector<std::string> CgroupProcsFiles(const std::string& quota_procs,
                                          const std::string& group) {
  std::vector<std::string> procs;
  if (!quota_procs.empty()) procs.push_back(quota_procs);
  const std::string group_procs = group.empty() ? "" : group + "/cgroup.procs";
  if (!group_procs.empty() && (procs.empty() || procs[0] != group_procs)) {
    procs.push_back(group_procs);
  }
  return procs;
}

StatusOr<pid_t> StartWorker(const std::vector<std::string>& args,
                            const std::vector<std::string>& env,
                            const std::vector<std::string>& procs_files, const std::string& log,
                            const std::string& node) {
  // Everything the child uses is built before fork: only async-signal-safe
  // calls may follow it in a threaded process.
  std::vector<std::string> arg_copy = args;
  std::vector<std::string> env_copy = env;
  const std::vector<char*> argv = PointersTo(arg_copy);
  const std::vector<char*> envp = PointersTo(env_copy);
  std::vector<const char*> procs;
  for (const auto& file : procs_files) procs.push_back(file.c_str());
  procs.push_back(nullptr);
  // Opened here, not in the child: a log that cannot be created stops the
  // run with its path and the cause, and the worker's lines never land on
  // the run's stdout (where `-o json` prints).
  const int log_fd = open(log.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
  if (log_fd < 0) {
    return Status::Unavailable(
        fmt::format("cannot create the log of node {}: {}: {}", node, log, std::strerror(errno)));
  }
  const pid_t parent = getpid();
  const pid_t pid = fork();
  if (pid < 0) {
    close(log_fd);
    return Status::Unavailable("fork failed");
  }
  if (pid == 0) ExecWorker(parent, procs.data(), log_fd, argv.data(), envp.data());
  close(log_fd);
  return pid;
}

}  // namespace ballast::cli
