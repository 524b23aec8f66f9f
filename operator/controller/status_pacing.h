// When a running WeightedJob's status is written. Every status write is a
// new revision of the whole object in the cluster's datastore (on k3s,
// SQLite through kine on an SD card: the object and its previous value, a
// row each), so a running job writes only when what a reader sees changes:
//
//   what changed since the last write          written
//   the phase (a transition), WorkersRefused   at once
//   anything else a reader sees: a condition,  after status_interval since the
//     the workers, a node's row joining or       last write (--status-interval,
//     leaving or its pod, the excluded nodes,    2 s)
//     failed items or pods, the figures
//   only progress: the Progress column,        after progress_interval since the
//     completedItems and completedCost, the      last write (--progress-interval,
//     result merged so far, each node's items,   15 s)
//     cost, speeds and steals, the learned
//     cost model, the checkpoint
//
// The checkpoint travels with every write, so progress_interval is also the
// bound on what an operator that dies without warning makes a job redo: the
// items finished since the last write, at most progress_interval and one
// pass (status_interval) old (and the ranges in flight then, as before). A stopping operator writes
// every running job's status first, and redoes nothing.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>

#include "operator/api/weighted_job.h"

namespace ballast::controller {

struct StatusPacing {
  // The least time between two writes of a change that is not a transition.
  std::chrono::milliseconds status_interval{2000};
  // The least time between two writes of progress alone, and so the most a
  // running job's written progress and checkpoint lag behind the job.
  std::chrono::milliseconds progress_interval{15000};
};

enum class StatusChange {
  kNone,      // the same status
  kProgress,  // only the fields that move as the work goes (above)
  kVisible,   // something else a reader sees
};

// What changed between `written` (the status last handed to the writer) and
// `now`.
StatusChange ClassifyStatusChange(const WeightedJobStatus& written, const WeightedJobStatus& now);

// Whether a change of kind `change` is written `since_last_write` after the
// last write; `transition` (the phase moved, or the status must go out now)
// writes any change at once. kNone is never written.
bool StatusWriteDue(StatusChange change, std::chrono::milliseconds since_last_write,
                    bool transition, const StatusPacing& pacing);

}  // namespace ballast::controller
