// `kubectl ballast report JOB`: the HTML report of a finished WeightedJob,
// from what the object keeps once the job is over — status.nodes (each
// node's weight, estimated and measured speed, items, steals, prior, its
// speed over its own baseline, its estimated energy and energy per item),
// the makespan, the physical limit and the efficiency, the job's estimated
// energy (status.energy), the result — drawn with the Gantt renderer of
// `ballast run --report` (gantt_svg.h).
//
// What it cannot show: the status keeps per-node totals, not the timeline of
// leases that `ballast run --report` draws. Each node's busy time is its
// items over its estimated speed (items per busy second), drawn as one busy
// bar from the start of the makespan, the rest of the makespan idle. A job of
// more than 100 nodes keeps only the 100 furthest from their predicted
// speed (status.nodeSummary says how many there were).
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "core/common/status.h"

namespace ballast::cli {

// The self-contained HTML page of `job` (a WeightedJob as the API server
// returns it). Terminal naming the phase when the job is not Succeeded or
// Failed; Invalid naming the field when the object is not a WeightedJob or
// its status has a field of the wrong type.
StatusOr<std::string> RenderJobReport(const nlohmann::json& job);

}  // namespace ballast::cli
