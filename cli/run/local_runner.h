// RunLocal: runs a job on this machine the way a cluster would — an embedded
// coordinator on a loopback port and one ballast-worker process per emulated
// node, each slowed to its node's speed (a cgroup CPU quota, or the worker's
// own duty cycle where cgroups are not available). A worker that dies is
// declared lost at once (its work goes to the others) and restarted up to the
// job's backoffLimit, as a pod would be. A node with joinAt joins the running
// job then (the coordinator adds its worker, which starts); one with leaveAt
// is drained then (its worker gets SIGTERM and hands its lease back), each
// within a tenth of a second.
//
// Nothing outlives the run. Where cgroup v2 allows it (root, Linux 5.14),
// every worker runs in its node's group of the run's cgroups and every exec
// command in a group of its own below it (run_containment.h): whatever a
// command leaves running is killed when it ends, what a dead worker left is
// killed before it is restarted, everything is killed with cgroup.kill when
// the run ends, and a guard process kills and removes it all when the run is
// killed, with SIGKILL too (run_guard.h). Elsewhere each worker leads a
// session of its own, whose leftovers are killed when it dies, and each
// command a process group; a process that starts a session of its own
// escapes them. While RunLocal runs, this process is the child subreaper
// of what it starts (run_orphans.h): what left the run's cgroups (a command
// run as root can) or sessions is still its descendant, and is killed at the
// run's end; the outcome says how much there was, what remains and which
// cgroups stayed, and why (LocalRunOutcome::containment). No step of the
// end waits more than two seconds for what cannot be killed. Each worker
// also gets SIGTERM from the kernel when the thread that called RunLocal
// ends. Cgroups are named after this process (run_cleanup.h); a run removes
// those of earlier runs whose process and guard are gone, and the log
// folders earlier runs made for themselves past the last ten (run_logs.h).
// Signals are the caller's: `ballast run` stops the run through on_progress
// (stop_signals.h).
//
// Thread-safety: RunLocal may run from any thread, one call at a time per
// process (it reaps child processes: its workers, and children it did not
// start that appear while it runs, which are the run's orphans; children the
// process had before are never touched); that thread must not end while
// RunLocal runs (it does not: RunLocal returns on it).
#pragma once

#include <sys/types.h>

#include <functional>
#include <map>
#include <string>
#include <vector>

#include "cli/run/run_containment.h"
#include "coordinator/job_types.h"
#include "core/balance/efficiency.h"
#include "core/common/status.h"
#include "core/fuzzy/model.h"
#include "core/job/job_spec.h"

namespace ballast::cli {

struct LocalRunOptions {
  job::JobSpec job;
  job::ClusterSpec cluster;
  fuzzy::Profile profile;
  std::string worker_binary;  // path of ballast-worker
  bool cgroups = true;        // contain the run in cgroups; CPU quotas before the duty cycle
  // Workers' logs; empty: a new folder in the temporary directory (run_logs.h).
  std::string log_dir;
  // Called about every 100 ms with the job's state and the live workers' pids
  // by node; return false to stop the job: the workers are stopped and the
  // outcome so far returned, with `stopped` set.
  std::function<bool(const coordinator::JobView&, const std::map<std::string, pid_t>&)> on_progress;
  // Prometheus: 0 off; else the coordinator listens on 127.0.0.1:metrics_port
  // (its /metrics there) and the i-th node's worker serves /metrics on
  // 127.0.0.1:metrics_port + 1 + i (docs/metrics.md).
  uint16_t metrics_port = 0;
  // Seconds the coordinator stays up once the job is finished and its workers
  // have exited, so that a scrape sees the job's last values.
  double linger_s = 0;
  // Priors that replace the fuzzy weights of the nodes they name, with their
  // credibility (history as the prior, `run --history`); nodes not named
  // keep their fuzzy weight.
  std::vector<balance::WorkerPrior> priors = {};
};

struct NodeOutcome {
  std::string name;
  double score = 0;           // fuzzy score
  double weight = 0;          // fuzzy weight, the policy's prior
  double speed = 0;           // emulated cores
  double measured_speed = 0;  // cores, from its reported busy time and the work it did
  uint64_t items = 0;
  double busy_s = 0;
  double idle_s = 0;  // makespan minus busy
  uint64_t leases = 0;
  uint64_t reports = 0;
  uint64_t cuts = 0;  // times its lease was shrunk for another worker
  uint32_t restarts = 0;
  std::string log_file;  // its worker's log in LocalRunOutcome::log_dir (NodeLogFileName)
  // For a node with joinAt: when it joined, in seconds from the job's start
  // (-1: the job ended first). For one drained (leaveAt): when.
  std::optional<double> joined_s;
  std::optional<double> left_s;
};

struct LocalRunOutcome {
  coordinator::JobView view;
  fuzzy::WeightResult weights;
  std::vector<NodeOutcome> nodes;
  double makespan_s = 0;  // from registration to the last result merged
  // Measured single-core work: the CPU seconds the workers used on the job's
  // items (verification's recomputations, view.verification.cpu_s, excluded).
  double work_s = 0;
  double total_speed = 0;  // the sum of the emulated cores of the nodes that were in the job
  // The physical limit and the headline figure, by balance::IdealSeconds and
  // balance::Efficiency (docs/efficiency.md).
  // IdealSeconds(work_s, total_speed), or with nodes that joined or were
  // drained, IdealSecondsOver the time each node was in the job.
  double ideal_s = 0;
  // Which bound ideal_s is (balance::PhysicalLimit): the work over the
  // nodes' cores, or the largest item (its share of the work by declared
  // cost) on the node that runs one fastest (its cores over the commands it
  // runs at once).
  balance::LimitBound ideal_bound = balance::LimitBound::kWork;
  double efficiency = 0;     // Efficiency(ideal_s, makespan_s), at most 1
  std::string speed_method;  // how the speeds were emulated
  std::string log_dir;       // the workers' logs, one file per node (NodeOutcome::log_file)
  bool stopped = false;      // on_progress stopped the job before its end: view holds what was done
  // The job failed past failurePolicy.maxFailedItems before its end
  // (job::JudgeFailedItems said kFailNow, as the operator's verdict does):
  // it was stopped there, the rest not computed; view holds what was done.
  bool failed_items_stopped = false;
  double elapsed_s = 0;  // from adding the job to its end or its stop
  // The ideal was longer than the makespan (balance::EfficiencyCapped): the
  // workers' CPU seconds say more than the nodes' speeds allow.
  bool efficiency_capped = false;
  // How the run's processes were contained, and what its end left running.
  ContainmentReport containment;
};

// Runs the job to its end, until on_progress stops it, or until more items
// failed than the job's failurePolicy.maxFailedItems tolerates. Returns the
// outcome (`stopped` set in the second case, `failed_items_stopped` in the
// third); Invalid for an empty cluster or
// bad profile; Unavailable when the coordinator cannot listen, the worker
// binary cannot start or a node's log cannot be created (naming the file);
// Terminal when every worker failed past its restarts, the deadline passed,
// or the job's verification found two workers' results of a range differ
// (the message names the range and both workers).
StatusOr<LocalRunOutcome> RunLocal(const LocalRunOptions& options);

// The fuzzy weights of the cluster's nodes under the profile (what RunLocal
// gives the policy as priors). Invalid for an empty cluster.
StatusOr<fuzzy::WeightResult> ClusterWeights(const fuzzy::Profile& profile,
                                             const job::ClusterSpec& cluster);

// The seed-000 cluster (two Pi 4B at half a core, a Pi 3B at a tenth) that
// `ballast run` uses without --cluster.
StatusOr<job::ClusterSpec> DefaultCluster();

// The file name of node `node`'s worker log in the run's log folder:
// "<node>.log", or, for a name too long for that (a DNS-1123 subdomain of
// 252 or 253 characters), its first characters and a hash of the whole
// name (common/names.h BoundedFileName). The run's output says which file
// holds which node.
std::string NodeLogFileName(const std::string& node);

// The path of ballast-worker beside the running program.
std::string DefaultWorkerBinary();

}  // namespace ballast::cli
