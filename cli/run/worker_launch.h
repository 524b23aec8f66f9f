// Starting one emulated node's ballast-worker process for a local run
// (RunLocal): its command line and environment (pure), and the fork and exec
// that tie it to this process, put it in its node's cgroups and send its
// output to its log.
//
// Thread-safety: WorkerArgs, WorkerEnvironment and CgroupProcsFiles are pure;
// StartWorker may be called from any thread (between fork and exec the child
// makes async-signal-safe calls alone).
#pragma once

#include <sys/types.h>

#include <cstdint>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::cli {

// What a worker's command line says.
struct WorkerLaunch {
  std::string binary;            // ballast-worker
  std::string coordinator_url;   // --coordinator
  std::string job_id;            // --job
  std::string node;              // --name
  std::string job_name;          // --job-name, the job's metrics label
  std::string metric_namespace;  // --namespace
  std::string metrics_listen;    // --metrics-listen (host:port); empty: none
  int threads = 1;               // --threads
  double duty_speed = 0;         // --speed, the worker's duty cycle; 0: none
  std::string exec_cgroup;       // --exec-cgroup; empty: none
  bool verbose = false;          // -v, debug lines into its log
};

// The worker's argv: the binary, then its flags in the order above, each
// optional one only when set.
std::vector<std::string> WorkerArgs(const WorkerLaunch& launch);

// The worker's environment: BALLAST_TOKEN=`token`, then `environment` (a
// null-terminated array, as `environ`) without any BALLAST_TOKEN of its own.
std::vector<std::string> WorkerEnvironment(const std::string& token,
                                           const char* const* environment);

// The cgroup.procs files a worker joins: its CPU quota's (`quota_procs`,
// empty for none), then its node's group of the run's (`group`, empty for
// none) unless that is the same file (the quota set on that group, cgroup v2).
std::vector<std::string> CgroupProcsFiles(const std::string& quota_procs, const std::string& group);

// Forks and execs the worker of `args` with `env`: it gets SIGTERM when the
// thread that started it ends (however this process ends), leads a session
// of its own, joins the cgroups of `procs_files` (a worker that cannot join
// them exits 127 before it starts: what it started would not be contained),
// writes its output to `log` (opened here, appended to, created 0644) and
// inherits no other file descriptor. Returns its pid; Unavailable naming
// `node` and the file when the log cannot be created, or when fork fails.
StatusOr<pid_t> StartWorker(const std::vector<std::string>& args,
                            const std::vector<std::string>& env,
                            const std::vector<std::string>& procs_files, const std::string& log,
                            const std::string& node);

}  // namespace ballast::cli
