// Starting one emulated node's worker for a local run (worker_launch.h).
#include "cli/run/worker_launch.h"

#include <fcntl.h>
#include <fmt/format.h>
#include <signal.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <string_view>

#include "process/child_start.h"

namespace ballast::cli {

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
  // Everything the child uses is built before it starts: only
  // async-signal-safe calls may follow that in a threaded process.
  std::vector<std::string> arg_copy = args;
  std::vector<std::string> env_copy = env;
  const std::vector<char*> argv = process::PointersTo(arg_copy);
  const std::vector<char*> envp = process::PointersTo(env_copy);
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
  process::ChildSpec child;
  child.file = argv[0];
  child.argv = argv.data();
  child.envp = envp.data();
  // SIGTERM when this process dies, however it dies.
  child.parent_death_signal = SIGTERM;
  // Without cgroups, what the worker leaves is found by its session; and
  // the terminal's Ctrl-C reaches this process alone.
  child.leads = process::ChildSpec::Leads::kSession;
  // The node's CPU quota and its group of the run: a worker that cannot
  // join them does not start, what it started would not be contained.
  child.cgroup_procs_files = procs.data();
  child.output = log_fd;  // never this process's stdout
  // The worker must not inherit the coordinator's listening socket (it
  // would keep the port bound after the coordinator closed it).
  child.close_other_fds = true;
  const pid_t pid = process::StartChild(child);
  close(log_fd);
  if (pid < 0) return Status::Unavailable("fork failed");
  return pid;
}

}  // namespace ballast::cli
