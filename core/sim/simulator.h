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
// Its parts: the clock (event_queue.h); the worker model (sim_worker.h: the
// lease, its computing and reporting, items run at once under a quota;
// input_link.h: the inputs crossing the node's link; failing_items.h); the
// accounting of the outcome and the bounds it is measured against
// (sim_outcome.h); the results (sim_result.h). simulator.cc is the
// coordinator's side: the policy, the messages between it and the workers
// with their latency, the nodes' changes and faults as events, and the loop.
//
// Thread-safety: Simulate is a pure function; calls may run in parallel.
#pragma once

#include <cstdint>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/sim/scenario.h"
#include "core/sim/sim_outcome.h"  // IdealMakespan
#include "core/sim/sim_result.h"

namespace ballast::sim {

// The simulator events all the runs of one command take together
// (`ballast simulate`: every policy, split, order and job of a scenario):
// each run is bounded by SimOptions::max_events, but a scenario within
// every bound of its own can ask for thousands of runs (1,000 jobs x 7
// policies x 2 history settings), hours of them. Not thread-safe: the runs
// sharing one are run one after another.
struct EventBudget {
  static constexpr uint64_t kDefaultMax = 1'000'000'000;
  uint64_t max = kDefaultMax;
  uint64_t spent = 0;
};

struct SimOptions {
  bool timeline = false;
  uint64_t max_events = 200'000'000;
  // Shared by the runs of one command; none: each run has max_events alone.
  EventBudget* budget = nullptr;
};

// Runs `policy` on the scenario with the given priors (one per node, in node
// order). Returns Invalid when the spec is wrong or the workload's item costs
// are not one positive finite number per item, Terminal when the policy
// stalls (every worker dead or waiting with work unfinished) or the event
// budget runs out (the run's max_events, or the shared EventBudget: "the
// scenario's runs together took 1000000000 simulator events, their budget;
// ...").
StatusOr<SimResult> Simulate(const Scenario& scenario,
                             const std::vector<balance::WorkerPrior>& priors,
                             const balance::PolicySpec& policy, const SimOptions& options = {});

}  // namespace ballast::sim
