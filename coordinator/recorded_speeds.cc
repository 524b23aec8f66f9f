#include "coordinator/recorded_speeds.h"

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

std::vector<health::NodeMeasurementNoise> MeasurementNoise(const JobView& view) {
  std::vector<std::vector<health::SpeedSample>> samples;
  samples.reserve(view.workers.size());
  for (const WorkerView& worker : view.workers) samples.push_back(worker.speed_samples);
  return health::MeasurementNoise(samples);
}

std::vector<health::JobMeasurement> JobMeasurements(const JobView& view) {
  std::vector<health::JobMeasurement> measured;
  const std::vector<health::NodeMeasurementNoise> noise = MeasurementNoise(view);
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const WorkerView& worker = view.workers[i];
    const double shared = view.sharing_sampled_s > 0 ? worker.shared_s / view.sharing_sampled_s : 0;
    measured.push_back({worker.name, MeasuredSpeed(worker), worker.MergedBusySeconds(), shared,
                        noise[i].log_variance, noise[i].speed_factor, noise[i].size_variance});
  }
  return measured;
}

std::map<std::string, double> EnteredSpeeds(const RecordedSpeeds& recorded, const JobView& view,
                                            const std::vector<fuzzy::NodeHistory>& baseline,
                                            const health::DeviationOptions& options) {
  if (baseline.empty() || recorded.speeds.empty()) return recorded.speeds;
  return health::WinsorizeSpeeds(recorded.speeds,
                                 health::JudgeDeviations(baseline, JobMeasurements(view), options));
}

}  // namespace ballast::coordinator
