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
//     failed items or pods, the figures; the
//     first progress (the first items done:
//     kubectl ballast top shows the job moving
//     and its speeds from the first report)
//   only progress: the Progress column,        once it moved progress_step
//     completedItems and completedCost, the      points of the job's items or
//     result merged so far, each node's items,   cost (--progress-step, 25) and
//     cost, speeds and steals, the learned       status_interval passed; else
//     cost model, the checkpoint                 progress_interval after the
//                                                last write (--progress-interval,
//                                                60 s)
//
// So a job writes its progress about 100 / progress_step - 1 times for its
// steps (a short job's Progress column still moves: 25, 50, 75 %) and
// otherwise once every progress_interval (a long job: a row a minute).
//
// The checkpoint travels with every write, so these also bound what an
// operator that dies without warning makes a job redo: the work finished
// since the last write, which is less than progress_interval of the job's
// work, and less than progress_step of its items and cost or
// status_interval of its work, whichever is more; and the pass that writes
// it comes up to one pass (status_interval) later. With the ranges in
// flight then, as before:
//
//   redo <= min(progress_interval, max(status_interval, time of progress_step))
//           + status_interval
//
// at the defaults at most a minute and 2 s of the job's work, and for a job
// shorter than four minutes a quarter of it and 2 s. A stopping operator
// writes every running job's status first, and redoes nothing.
//
// Thread-safety: pure functions.
#pragma once

#include <chrono>

#include "operator/api/weighted_job.h"

namespace ballast::controller {

struct StatusPacing {
  // The least time between two writes of a change that is not a transition.
  std::chrono::milliseconds status_interval{2000};
  // Progress alone is written once it moved this many percentage points of
  // the job's cost since the last write (and status_interval passed).
  double progress_step = 25;
  // The most time between a write and the next of progress alone, and so
  // the most a running job's written progress and checkpoint lag behind the
  // job (and one pass).
  std::chrono::milliseconds progress_interval{60000};
};

enum class StatusChange {
  kNone,      // the same status
  kProgress,  // only the fields that move as the work goes (above)
  kVisible,   // something else a reader sees
};

// What changed between `written` (the status last handed to the writer) and
// `now`.
StatusChange ClassifyStatusChange(const api::WeightedJobStatus& written,
                                  const api::WeightedJobStatus& now);

// How far the job's progress moved from `written` to `now`, in percentage
// points of the job: the more of its items (the Progress column) and its
// cost (completedCost, of `items`: kubectl ballast top's bar); 0 when `now`
// does not say how many items the job has.
double ProgressMoved(const api::WeightedJobStatus& written, const api::WeightedJobStatus& now);

// Whether a change of kind `change` is written `since_last_write` after the
// last write, progress having moved `progress_moved` percentage points
// (ProgressMoved) since; `transition` (the phase moved, or the status must
// go out now) writes any change at once. kNone is never written.
bool StatusWriteDue(StatusChange change, std::chrono::milliseconds since_last_write,
                    double progress_moved, bool transition, const StatusPacing& pacing);

}  // namespace ballast::controller
