#include "cli/run/run_history.h"

#include <fmt/format.h>
#include <unistd.h>

#include <filesystem>
#include <map>

#include "cli/cli_common.h"
#include "coordinator/recorded_speeds.h"
#include "core/history/history_file.h"

namespace ballast::cli {

StatusOr<history::SpeedStore> LoadHistory(const std::string& path) {
  auto text = ReadFile(path, history::kMaxHistoryFileBytes);
  if (text.status().code() == StatusCode::kNotFound) return history::SpeedStore{};
  if (!text.ok()) return text.status();
  return history::ReadHistoryFile(*text, path, history::StoreLimits{});
}

Status SaveHistory(const std::string& path, const history::SpeedStore& store,
                   history::LeftOut* left_out) {
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  const Status written =
      WriteFile(temporary, history::StoreToText(store, history::StoreLimits{}, left_out) + "\n");
  if (!written.ok()) {
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, written.message()));
  }
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, error.message()));
  }
  return Status::Ok();
}

fuzzy::HistoryPriorOptions RunPriorOptions() {
  fuzzy::HistoryPriorOptions options;
  options.full_trust_samples = history::kFullTrustJobs;
  return options;
}

std::vector<fuzzy::NodePrior> RunPriors(const fuzzy::WeightResult& weights,
                                        const history::SpeedStore& store,
                                        const history::HistoryKey& key, double now,
                                        const fuzzy::HistoryPriorOptions& options) {
  std::map<std::string, double> fuzzy_weights;
  std::vector<std::string> names;
  for (const fuzzy::NodeWeight& node : weights.nodes) {
    fuzzy_weights[node.name] = node.weight;
    names.push_back(node.name);
  }
  const auto known = history::LookupHistory(store, key, names, now);
  std::map<std::string, fuzzy::NodePrior> by_node;
  for (fuzzy::NodePrior& prior : fuzzy::BlendHistoryPrior(fuzzy_weights, known, options)) {
    by_node.emplace(prior.node, std::move(prior));
  }
  std::vector<fuzzy::NodePrior> priors;
  for (const std::string& name : names) priors.push_back(by_node.at(name));
  return priors;
}

namespace {

// The run's view as history measures it: each worker's busy seconds without
// those it spent recomputing others' ranges for verification (which earn it
// no declared cost).
coordinator::JobView MeasuredView(const LocalRunOutcome& outcome) {
  coordinator::JobView view = outcome.view;
  const auto& checks = view.verification.worker_busy_s;
  for (size_t i = 0; i < view.workers.size() && i < checks.size(); ++i) {
    view.workers[i].dropped_busy_s += checks[i];
  }
  return view;
}

// The store's history of `key` for the run's nodes at `now`.
std::vector<fuzzy::NodeHistory> Baseline(const history::SpeedStore& store,
                                         const history::HistoryKey& key,
                                         const coordinator::JobView& view, double now) {
  std::vector<std::string> names;
  for (const auto& worker : view.workers) names.push_back(worker.name);
  return history::LookupHistory(store, key, names, now);
}

}  // namespace

std::vector<health::NodeDeviation> JudgeRun(const history::SpeedStore& store,
                                            const history::HistoryKey& key,
                                            const LocalRunOutcome& outcome, double now) {
  const coordinator::JobView view = MeasuredView(outcome);
  return health::JudgeDeviations(Baseline(store, key, view, now),
                                 coordinator::JobMeasurements(view), {});
}

history::SpeedStore Learn(const history::SpeedStore& store, const history::HistoryKey& key,
                          const LocalRunOutcome& outcome, double now,
                          const std::vector<health::NodeDeviation>& deviations) {
  const coordinator::RecordedSpeeds recorded = coordinator::SpeedsToRecord(MeasuredView(outcome));
  history::SpeedStore out = store;
  history::RecordJob(out, key, health::WinsorizeSpeeds(recorded.speeds, deviations), now,
                     history::StoreLimits{});
  return out;
}

std::string DescribePrior(const fuzzy::NodePrior& prior) {
  if (prior.source == fuzzy::PriorSource::kProfile)
    return fmt::format("profile {:.4g}", prior.value);
  return fmt::format("{} {:.4g} (Z {:.2f}, {:.3g} samples, {:.0f} s old)",
                     fuzzy::PriorSourceName(prior.source), prior.value, prior.credibility,
                     prior.samples, prior.age_seconds);
}

}  // namespace ballast::cli
