// HistorySource: where the operator learns what earlier jobs measured on each
// node — Prometheus (--prometheus-url, net/prometheus_history_source.h) or, without
// it, the store of the speeds its own finished jobs recorded
// (operator/runtime/history_configmap.h). Decide turns the answer into the session's priors
// (operator/controller/decide.h, fuzzy/history_prior.h).
//
// Thread-safety: implementations are safe to call from several reconcile
// workers at once.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "core/common/status.h"
#include "core/fuzzy/history_prior.h"
#include "core/history/history_key.h"

namespace ballast::history {

// What a finished job records, whichever the source: a node's speed is left
// out when another job's workers shared the node for more than
// kMaxSharedFraction of the job's run, or when it was measured over less than
// kMinRecordedBusySeconds of computing (a speed measured over milliseconds
// tells of the scheduler's time slices more than of the node; fuzzy::
// PriorOptions::sample_seconds); and a job with fewer than two nodes left
// records nothing (one node's speed relative to itself says nothing).
// docs/history.md, "What a finished job does not record".
inline constexpr double kMaxSharedFraction = 0.25;
inline constexpr double kMinRecordedBusySeconds = 0.5;

// What a source knew under a key on the nodes asked, or why it knew nothing.
struct HistoryLookup {
  std::vector<fuzzy::NodeHistory> nodes;
  std::string origin;   // where it came from, for messages: "Prometheus at http://..."
  std::string trouble;  // why there is none ("" when the source answered)
};

class HistorySource {
 public:
  virtual ~HistorySource() = default;

  // What is known under `key` (the job's HistoryKey) on `nodes` at `now`
  // (seconds since the epoch). Never fails and never blocks past the
  // source's timeout: when the source cannot answer, the lookup has no nodes
  // and `trouble` says why.
  virtual HistoryLookup Lookup(const HistoryKey& key, const std::vector<std::string>& nodes,
                               double now) = 0;

  // What a job kept under `key` that succeeded measured (node -> cost units per
  // busy second), at `now`. Returns the error of a write that failed, or of
  // a record that could not be queued (a source that writes in the
  // background reports its writes' errors from Flush); a source that
  // records nothing itself (Prometheus scrapes the coordinator) returns Ok.
  virtual Status Record(const HistoryKey& key, const std::map<std::string, double>& speeds,
                        double now) = 0;

  // Waits until every Record made before the call is written (a source that
  // writes in the background); returns the error of the last write that
  // failed since the previous Flush, or Ok. The operator flushes once it
  // stops, while the API client it writes with is still there.
  virtual Status Flush() { return Status::Ok(); }
};

}  // namespace ballast::history
