// The discrete-event simulator: drives a real balance::Policy in virtual time
// against simulated workers whose true speeds, links and failures the policy
// never sees, and measures what it achieves against the physical limit.
//
// A simulated worker behaves as the real one does: it asks, receives a lease
// (and its input data over its link), computes items in order at its true
// speed (changing when the scenario says), reports progress at the cadence
// the lease asks for, applies a shrunk end at the first reply that carries
// it, and dies at failAt, losing what it had not reported. A node with
// joinAt joins the running job then (Policy::OnWorkerJoined); one with
// leaveAt is drained then: its worker hands in what it finished and the
// coordinator takes the rest of its lease back at once.
//
// Thread-safety: Simulate is a pure function; calls may run in parallel.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "core/balance/efficiency.h"
#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/sim/scenario.h"

namespace ballast::sim {

// A stretch of one worker's time, for Gantt charts.
struct Segment {
  enum class Kind { kBusy, kTransfer, kIdle };
  double start = 0;
  double end = 0;
  Kind kind = Kind::kIdle;
};

struct WorkerResult {
  std::string name;
  double prior_speed = 0;  // what the policy was told (the fuzzy weight)
  double true_speed = 0;   // the node's initial true speed
  uint64_t items = 0;      // items it reported finished (a duplicate counts)
  uint64_t leases = 0;
  // Reports that carried computing time (progress and lease ends): each is
  // one measurement of its speed, a history sample (docs/history.md).
  uint64_t reports = 0;
  double cost = 0;  // declared cost of the items it reported (an item of mean cost is 1)
  double busy_s = 0;
  double idle_s = 0;  // not computing, until the makespan (transfer included)
  bool failed = false;
  bool left = false;              // drained mid-job (NodeSpec::leave_at)
  std::vector<Segment> timeline;  // filled when SimOptions::timeline
};

struct SimResult {
  std::string policy;  // the spec's display label
  double makespan_s = 0;
  double ideal_s = 0;
  // Which bound ideal_s is: the work over the nodes' speeds, or the largest
  // item on the fastest node (balance::PhysicalLimit).
  balance::LimitBound ideal_bound = balance::LimitBound::kWork;
  double efficiency = 0;
  uint64_t messages = 0;  // every report, reply and signal
  uint64_t moved_items = 0;
  uint64_t steals = 0;
  uint64_t rebalances = 0;
  uint64_t duplicate_items = 0;
  // The start cost per item the policy learned and split by at the end
  // (PolicyStats::start_cost), in mean declared items; 0 for none.
  double start_cost = 0;
  uint64_t events = 0;  // simulator events processed
  // Failing items (Workload::failing_items) reported failed, and whether the
  // job fails for them at the end under the default failure policy
  // (job::FailsAtTheEnd, maxFailedItems unset: every other item computed).
  uint64_t failed_items = 0;
  bool job_failed = false;
  // The ideal static packing of the items by their true costs onto the
  // nodes there from the start (LptMakespan, packing.h); 0 when not computed
  // (more than ScenarioBounds::kMaxItemCosts items).
  double packing_s = 0;
  std::vector<WorkerResult> workers;
};

struct SimOptions {
  bool timeline = false;
  uint64_t max_events = 200'000'000;
};

// Runs `policy` on the scenario with the given priors (one per node, in node
// order). Returns Invalid when the spec is wrong or the workload's item costs
// are not one positive finite number per item, Terminal when the policy
// stalls (every worker dead or waiting with work unfinished) or the event
// budget runs out.
StatusOr<SimResult> Simulate(const Scenario& scenario,
                             const std::vector<balance::WorkerPrior>& priors,
                             const balance::PolicySpec& policy, const SimOptions& options = {});

// The physical limit: the earliest time at which nodes of the scenario's true
// speeds (changes, failures, joins and drains integrated: the capacity the
// job actually had) could finish `work_seconds` of
// speed-1 work. A node whose link delivers fewer items per second than it
// could compute is capped at its link's item rate times `max_item_seconds`
// (the costliest item: still a lower bound whichever items it gets; 0 means
// the mean item).
double IdealMakespan(const Scenario& scenario, double work_seconds, double max_item_seconds = 0);

}  // namespace ballast::sim
