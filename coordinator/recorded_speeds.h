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

#include "coordinator/job_types.h"
#include "core/fuzzy/history_prior.h"
#include "core/health/deviation.h"
#include "core/health/measurement_noise.h"

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

// What the finished session measured on each node, as health::JudgeDeviations
// judges it: the speed (MeasuredSpeed), the merged busy seconds, the
// fraction of the sampled run the node was shared, the variance its items'
// scatter around their declared costs leaves in that speed and the factor
// that brings it to the job's common item size (MeasurementNoise). In the
// view's order.
std::vector<health::JobMeasurement> JobMeasurements(const JobView& view);

// health::MeasurementNoise of the view's workers' speed samples, in the
// view's order.
std::vector<health::NodeMeasurementNoise> MeasurementNoise(const JobView& view);

// The speeds a history that keeps each job's speeds as samples enters
// (docs/history.md, "A node below its own baseline"): `recorded`'s speeds,
// each node the view measured Slow against `baseline` raised to the edge of
// its band (health::WinsorizeSpeeds), the others as they are. With an empty
// `baseline` (no history), recorded.speeds unchanged. The operator's store
// enters these; the coordinator exports them for Prometheus's history.
std::map<std::string, double> EnteredSpeeds(const RecordedSpeeds& recorded, const JobView& view,
                                            const std::vector<fuzzy::NodeHistory>& baseline,
                                            const health::DeviationOptions& options);

}  // namespace ballast::coordinator
