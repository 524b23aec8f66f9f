// Multi-job scenarios: the scenario's jobs run one after another on the same
// nodes in virtual time, each with its true speeds (which may drift between
// jobs), and — with history on — each job's measured speeds become the next
// job's prior through fuzzy::BlendHistoryPrior, the function the operator and
// `ballast run --history` use (docs/history.md). With history off every job
// starts from the fuzzy weights: the baseline the learning is measured
// against.
//
// Thread-safety: SimulateJobs is a pure function; calls may run in parallel.
#pragma once

#include <string>
#include <vector>

#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/health/deviation.h"
#include "core/health/energy.h"
#include "core/sim/scenario.h"
#include "core/sim/simulator.h"

namespace ballast::sim {

// One job of the sequence.
struct JobRun {
  std::string name;
  SimResult result;
  std::vector<fuzzy::NodePrior> priors;  // what the policy was told, in node order
  std::vector<double> true_speeds;       // the nodes' true speeds at the job's start
  // The first lease split's error against the true speeds: the largest
  // relative error of a node's share (fuzzy::SplitError of the priors).
  double split_error = 0;
  // Each node's measured speed at the end (fuzzy::MeasuredSpeed: declared
  // cost over busy seconds; 0 when it computed nothing), in node order.
  std::vector<double> measured_speeds;
  // With history: each node's deviation from its own baseline, the history
  // before this job (health::JudgeDeviations, default options), in node
  // order. Empty without history.
  std::vector<health::NodeDeviation> deviations;
  // The job's estimated energy (JobEnergy below).
  health::JobEnergy energy;
};

// The energy of one simulated job: each node's power from its labels
// (health::NodePower), its busy seconds over the makespan.
health::JobEnergy JobEnergy(const Scenario& scenario, const SimResult& result);

struct JobSeries {
  std::string policy;  // the spec's display label
  bool history = false;
  std::vector<JobRun> jobs;
};

// The scenario's jobs in sequence (one job, the scenario itself, when it has
// none) under `policy`. `fuzzy_weights`: one per node, in node order. Each
// job's history samples are fuzzy::JobSamples of the reports each node sent
// and its busy seconds; each job is judged against the history before it
// (health::JudgeDeviations) and enters it as health::EnterJob says (a Slow
// node winsorized); between jobs the
// records age by the job's makespan plus history.gap_seconds. Returns
// Invalid when the weights do not match the nodes or the policy spec is
// wrong, and Simulate's error of the first job that fails (its name in the
// message).
StatusOr<JobSeries> SimulateJobs(const Scenario& scenario, const std::vector<double>& fuzzy_weights,
                                 const balance::PolicySpec& policy, bool history,
                                 const SimOptions& options = {});

}  // namespace ballast::sim
