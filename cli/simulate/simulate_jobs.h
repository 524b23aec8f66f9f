// The multi-job side of `ballast simulate`: a scenario with `jobs:` runs its
// jobs in sequence under each policy, with history (each job's measured
// speeds the next one's prior, sim/multi_job.h) and without (every job from
// the fuzzy weights), and prints per job the moved items, messages,
// efficiency and the first lease split's error against the true speeds.
//
// Thread-safety: runs on the calling thread; prints to stdout and stderr.
#pragma once

#include <string>
#include <vector>

#include "cli/scenario_loader.h"
#include "core/balance/policy_options.h"
#include "core/common/status.h"
#include "core/sim/multi_job.h"

namespace ballast::cli {

// How a scenario's items cost and how its policies are told: "linear cost",
// "item costs, split by cost", "uniform cost, split by count".
std::string CostLabel(const sim::Workload& workload);

// Every policy's two series (with history first), in `specs` order, their
// runs sharing `budget` when given (sim::EventBudget). Returns the first
// simulation's error.
StatusOr<std::vector<sim::JobSeries>> SimulateSeries(const LoadedScenario& loaded,
                                                     const std::vector<balance::PolicySpec>& specs,
                                                     bool show_progress,
                                                     sim::EventBudget* budget = nullptr);

// The series as a table (one block per policy and history setting) or JSON.
void PrintSeriesTable(const LoadedScenario& loaded, const std::vector<sim::JobSeries>& series);
void PrintSeriesJson(const LoadedScenario& loaded, const std::vector<sim::JobSeries>& series);

}  // namespace ballast::cli
