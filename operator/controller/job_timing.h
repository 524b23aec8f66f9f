// JobTiming: where the time of a finished WeightedJob went. End to end is
// from `kubectl apply` (metadata.creationTimestamp) to the last result
// merged; compute is from the first report of any worker to the last
// result. What came between is split at the moments the API server, the
// kubelet and the operator record, each part named after what ended it:
//
//   moment                                            part that ends there
//   metadata.creationTimestamp                        (start)
//   an operator took the job in (Accepted)            operatorSeconds
//   its session started: nodes eligible (startTime)   waitingForNodesSeconds
//   the first reporter's pod: PodScheduled            podSchedulingSeconds
//   ... PodReadyToStartContainers (sandbox made)      podStartSeconds
//   ... its last init container's finishedAt          initContainersSeconds (the
//                                                       worker's bundle, the user's own)
//   ... its worker container's startedAt              containerStartSeconds (its image
//                                                       pulled when it had to be, made)
//   the first report                                  workerStartSeconds
//
// Each moment is clamped into [the previous one, the first report], so the
// parts add up to endToEndSeconds - computeSeconds exactly; a moment that is
// unknown (an operator restarted mid-job, a pod gone) leaves its part out and
// the time counts in the next known part. Kubernetes records whole seconds,
// so the parts the pod's moments bound are good to about a second.
//
// Thread-safety: pure functions.
#pragma once

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace ballast::controller {

// The moments of one job, in unix seconds.
struct TimingMoments {
  std::optional<double> created;
  std::optional<double> accepted;
  double started = 0;
  std::optional<double> scheduled;
  std::optional<double> sandbox_ready;
  std::optional<double> init_finished;  // the pod's last init container ended
  std::optional<double> container_started;
  std::optional<double> first_report;
  double finished = 0;
  std::string first_node;  // the node whose worker reported first
  // The session resumed from a checkpoint: its compute is only the last
  // session's, so the time before it is not split.
  bool resumed = false;
};

// One part of the time before the first report.
struct TimingPart {
  std::string key;   // the status field: "containerStartSeconds"
  std::string what;  // for people: "container start"
  double seconds = 0;
  bool operator==(const TimingPart&) const = default;
};

struct JobTiming {
  double end_to_end_s = 0;
  std::optional<double> compute_s;           // set when a worker reported
  std::optional<double> compute_efficiency;  // ideal / compute_s, when both > 0
  std::string first_node;
  std::vector<TimingPart> before_first_report;  // in the order of the table above
  bool operator==(const JobTiming&) const = default;
};

// The timing of a job with `moments` whose ideal time (status.idealSeconds)
// is `ideal_s`. Never fails: an unknown moment leaves its part out.
JobTiming ComputeTiming(const TimingMoments& moments, double ideal_s);

// status.timing: {endToEndSeconds, computeSeconds, computeEfficiency,
// firstReportNode, beforeFirstReport: {<part key>: seconds, ...}}, seconds
// to three decimals.
nlohmann::json TimingToJson(const JobTiming& timing);

// For people, short (the NOTE column of `kubectl get wj -o wide`; the parts
// are in status.timing, which describe shows): "31.2 s end to end, 2.8 s
// computing; before it mostly container start 25.0 s" — the longest part
// before the first report, when it is at least 0.05 s.
std::string TimingSummary(const JobTiming& timing);

}  // namespace ballast::controller
