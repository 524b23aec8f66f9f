// RecordedSpeeds: of the speeds a job measured, those that count as history —
// what the operator records in its store when the job succeeds, and what the
// coordinator exports for Prometheus's history as
// ballast_node_recorded_speed_cost_units_per_second (job_metrics.h). One rule
// for both (docs/history.md, "What a finished job does not record"):
//   - a node measured over less than history::kMinRecordedBusySeconds of
//     computing is left out (brief): its speed tells of the scheduler's time
//     slices more than of the node;
//   - a node that another job's workers shared for more than
//     history::kMaxSharedFraction of the sampled run is left out (shared):
//     its speed is the other job's doing as much as its own;
//   - with fewer than two nodes left, nothing is recorded: one node's speed
//     relative to itself says nothing.
//
// Thread-safety: a pure function of its argument.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "coordinator/job_session.h"

namespace ballast::coordinator {

struct RecordedSpeeds {
  std::map<std::string, double> speeds;  // node -> cost units per busy second
  std::vector<std::string> shared;       // measured, left out as shared
  std::vector<std::string> brief;        // measured, left out as brief
};

// The nodes of `view` with a measured speed (MeasuredSpeed > 0), sorted into
// those recorded and those left out by the rules above. Usable at any time:
// while the job runs it says what would be recorded if it ended now.
RecordedSpeeds SpeedsToRecord(const JobView& view);

}  // namespace ballast::coordinator
