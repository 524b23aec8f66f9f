#include "coordinator/recorded_speeds.h"

#include "coordinator/job_metrics.h"
#include "core/history/history_source.h"

namespace ballast::coordinator {

RecordedSpeeds SpeedsToRecord(const JobView& view) {
  RecordedSpeeds recorded;
  for (const WorkerView& worker : view.workers) {
    const double speed = MeasuredSpeed(worker);
    if (speed <= 0) continue;
    if (worker.MergedBusySeconds() < history::kMinRecordedBusySeconds) {
      recorded.brief.push_back(worker.name);
    } else if (worker.shared_s > history::kMaxSharedFraction * view.sharing_sampled_s) {
      recorded.shared.push_back(worker.name);
    } else {
      recorded.speeds[worker.name] = speed;
    }
  }
  if (recorded.speeds.size() < 2) recorded.speeds.clear();
  return recorded;
}

}  // namespace ballast::coordinator
