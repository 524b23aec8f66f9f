// How `ballast simulate` and `ballast run` report node health
// (core/health): each node's deviation from its own baseline and each job's
// estimated energy, the same way in both commands, as text and as JSON
// (docs/history.md, docs/simulator.md, docs/local-mode.md).
//
// Thread-safety: pure functions over values.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "cli/run/local_runner.h"
#include "core/health/deviation.h"
#include "core/health/energy.h"
#include "core/job/job_spec.h"

namespace ballast::cli {

// {"verdict": "slow", "reason": "", "fast": false, "ratio": 0.52, "measured":
// ..., "baseline": ..., "spread": ..., "slow_below": 0.75, "busy_s": ...,
// "history_samples": ..., "references": 3}.
nlohmann::json DeviationJson(const health::NodeDeviation& deviation);

// {"joules": ..., "wh": ..., "joules_per_item": ..., "items": ...,
// "span_s": ..., "complete": true, "estimate": false, "nodes": [{"name",
// "known", "estimate", "idle_w", "load_w", "busy_s", "idle_s", "joules",
// "items"}, ...]}.
nlohmann::json EnergyJson(const health::JobEnergy& energy);

// The energy of a local run: each worker's node's power from its labels in
// `cluster` (health::NodePower: the boards the emulated nodes stand for),
// its computing seconds (work done twice included: it drew power) over the
// run's makespan, the items it delivered.
health::JobEnergy RunEnergy(const job::ClusterSpec& cluster, const LocalRunOutcome& outcome);

// The Slow nodes, "pi4b-b 0.52, pi3b-a 0.61", or "-" when none.
std::string SlowNodes(const std::vector<health::NodeDeviation>& deviations);

// Prints the run's energy and, when there are any, the deviations:
//   energy: 412.5 J (0.1146 Wh), 0.0825 J per item, estimate
//   node health, against each node's own baseline (--history):
//     pi4b-1 ran at 0.52 of its baseline (...): slow
void PrintRunHealth(const health::JobEnergy& energy,
                    const std::vector<health::NodeDeviation>& deviations);

}  // namespace ballast::cli
