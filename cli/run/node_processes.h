// NodeProcesses: the worker processes of a `ballast run`'s emulated nodes,
// and what holds them — the run's cgroups where this machine allows them
// (sessions otherwise), each node's CPU quota or its worker's duty cycle, the
// run's guard and its orphans (run_containment.h, cpu_limit.h, run_guard.h,
// run_orphans.h). It starts, reaps and stops the workers, and clears what
// they leave running; what a worker's death means for the job (lost,
// restarted) is the runner's (local_runner.h).
//
// Thread-safety: one thread.
#pragma once

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "cli/run/cpu_limit.h"
#include "cli/run/run_containment.h"
#include "cli/run/run_guard.h"
#include "cli/run/run_orphans.h"
#include "cli/run/worker_launch.h"
#include "core/common/status.h"
#include "core/job/job_spec.h"

namespace ballast::cli {

// One emulated node's worker process.
struct NodeProcess {
  const job::EmulatedNode* node = nullptr;
  std::string log;                  // its log's file name in the run's log folder
  std::unique_ptr<CpuLimit> limit;  // null: the worker's duty cycle
  std::string group;                // its group of the run's cgroups; empty without
  pid_t pid = -1;
  uint32_t restarts = 0;
  std::string last_exit;         // how it last died ("exit code 1"); "" while none did
  bool finished = false;         // exited for good
  bool joined = false;           // its worker is in the job (from the start, or since joinAt)
  bool drained = false;          // its leaveAt came: its worker was stopped, never restarted
  double joined_s = 0;           // when it joined, in seconds from the job's start
  std::optional<double> left_s;  // when it was drained
};

// How a node's worker is held, as the coordinator and its worker need it.
struct NodeHold {
  // The share of time it computes (WorkerPrior::duty); none for a node of
  // whole cores, which computes steadily.
  std::optional<double> duty;
  double cores = 1;  // the cores it may use (JobConfig::worker_cores)
};

// A worker that exited, as waitpid said.
struct WorkerExit {
  NodeProcess* process;
  int wstatus;
};

class NodeProcesses {
 public:
  // `run_id` names the run's groups; without `cgroups` (or where this
  // machine has none) the workers lead sessions of their own.
  NodeProcesses(bool cgroups, const std::string& run_id, std::string log_dir);

  // Adds a node in the cluster's order: its group of the run's cgroups and
  // its speed held.
  StatusOr<NodeHold> Add(const job::EmulatedNode& node);
  // How the nodes' speeds are held, each way named once, and whether the
  // machine has the cores for them.
  std::string SpeedMethod() const;
  // From here on what the workers start stays this process's descendant,
  // wherever it moves itself; a guard removes the run's groups should this
  // process be killed.
  Status Hold();

  // Starts (or restarts) a node's worker from `launch` (the node's fields
  // are filled here) with `environment` (WorkerEnvironment).
  Status Spawn(NodeProcess& process, WorkerLaunch launch,
               const std::vector<std::string>& environment);
  // The workers that exited since the last look; what they left running is
  // cleared.
  std::vector<WorkerExit> Reap();
  // Reaps what the workers' commands left that has exited since.
  void ReapOrphans();
  // Asks a worker to stop (SIGTERM): it hands back its lease.
  static void Stop(const NodeProcess& process);
  // Stops every worker, kills what is left of the run, removes its groups,
  // releases the guard, and says what it found.
  ContainmentReport StopAll();

  std::vector<NodeProcess>& processes() { return processes_; }
  const std::vector<NodeProcess>& processes() const { return processes_; }
  std::map<std::string, pid_t> LivePids() const;
  bool AllExited() const;
  std::string LogPath(const NodeProcess& process) const;

 private:
  // The run's cgroups, or why not.
  void Contain(const std::string& run_id);
  // Holds a node's speed: nothing for a node of whole cores, a cgroup CPU
  // quota where one can be made, the worker's duty cycle otherwise.
  std::optional<double> LimitSpeed(NodeProcess& process);
  void Note(std::string method);
  std::vector<std::string> CpuLimitDirs() const;
  std::set<pid_t> WorkerPids() const;
  size_t ClearLeftovers(const NodeProcess& process);
  size_t StopWorkers();

  bool cgroups_;
  std::string run_id_;
  std::string log_dir_;
  std::vector<std::string> methods_;             // how the speeds are held
  std::unique_ptr<RunContainment> containment_;  // null: sessions only (uncontained_ says why)
  std::string uncontained_;
  std::vector<NodeProcess> processes_;   // after containment_: their quotas go first
  std::unique_ptr<RunOrphans> orphans_;  // this process as the subreaper while the run lasts
  std::unique_ptr<RunGuard> guard_;      // after the others: released last
};

}  // namespace ballast::cli
