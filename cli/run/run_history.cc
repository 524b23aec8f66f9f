#include "cli/run/run_history.h"

#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <map>

#include "cli/cli_common.h"
#include "coordinator/recorded_speeds.h"

namespace ballast::cli {

StatusOr<fuzzy::HistoryFile> LoadHistory(const std::string& path) {
  std::error_code error;
  if (!std::filesystem::exists(path, error)) return fuzzy::HistoryFile{};
  if (std::filesystem::file_size(path, error) > fuzzy::kMaxHistoryBytes) {
    return Status::Invalid(
        fmt::format("{}: larger than {} bytes: not a history file", path, fuzzy::kMaxHistoryBytes));
  }
  BALLAST_ASSIGN_OR_RETURN(std::string text, ReadFile(path));
  return fuzzy::ParseHistoryFile(text, path);
}

Status SaveHistory(const std::string& path, const fuzzy::HistoryFile& file) {
  const std::string temporary = fmt::format("{}.{}.tmp", path, getpid());
  BALLAST_RETURN_IF_ERROR(WriteFile(temporary, fuzzy::FormatHistoryFile(file)));
  std::error_code error;
  std::filesystem::rename(temporary, path, error);
  if (error) {
    std::filesystem::remove(temporary, error);
    return Status::Unavailable(fmt::format("cannot write {}: {}", path, error.message()));
  }
  return Status::Ok();
}

std::vector<fuzzy::NodePrior> RunPriors(const fuzzy::WeightResult& weights,
                                        const fuzzy::HistoryFile& file, const std::string& kind,
                                        int64_t now, const fuzzy::HistoryPriorOptions& options) {
  std::map<std::string, double> fuzzy_weights;
  for (const fuzzy::NodeWeight& node : weights.nodes) fuzzy_weights[node.name] = node.weight;
  std::vector<fuzzy::NodeHistory> history;
  if (auto it = file.workloads.find(kind); it != file.workloads.end()) {
    history = fuzzy::HistoryAt(it->second, now);
  }
  std::map<std::string, fuzzy::NodePrior> by_node;
  for (fuzzy::NodePrior& prior : fuzzy::BlendHistoryPrior(fuzzy_weights, history, options)) {
    by_node.emplace(prior.node, std::move(prior));
  }
  std::vector<fuzzy::NodePrior> priors;
  for (const fuzzy::NodeWeight& node : weights.nodes) priors.push_back(by_node.at(node.name));
  return priors;
}

namespace {

// The history of `kind` in `file`, aged to `now`.
std::vector<fuzzy::NodeHistory> Kept(const fuzzy::HistoryFile& file, const std::string& kind,
                                     int64_t now) {
  auto it = file.workloads.find(kind);
  return it == file.workloads.end() ? std::vector<fuzzy::NodeHistory>{}
                                    : fuzzy::HistoryAt(it->second, now);
}

// A worker's computing seconds on merged items, verification's left out.
double RunBusy(const LocalRunOutcome& outcome, size_t i) {
  const auto& checks = outcome.view.verification;
  const double check_busy = i < checks.worker_busy_s.size() ? checks.worker_busy_s[i] : 0;
  return outcome.view.workers[i].MergedBusySeconds() - check_busy;
}

}  // namespace

std::vector<health::NodeDeviation> JudgeRun(const fuzzy::HistoryFile& file, const std::string& kind,
                                            const LocalRunOutcome& outcome, int64_t now) {
  std::vector<health::JobMeasurement> measured;
  const auto& view = outcome.view;
  const std::vector<double> variances = coordinator::MeasurementVariances(view);
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const double busy = RunBusy(outcome, i);
    const double shared =
        view.sharing_sampled_s > 0 ? view.workers[i].shared_s / view.sharing_sampled_s : 0;
    measured.push_back({view.workers[i].name, fuzzy::MeasuredSpeed(view.workers[i].cost, busy),
                        busy, shared, variances[i]});
  }
  return health::JudgeDeviations(Kept(file, kind, now), measured, {});
}

fuzzy::HistoryFile Learn(const fuzzy::HistoryFile& file, const std::string& kind,
                         const LocalRunOutcome& outcome, int64_t now,
                         const fuzzy::HistoryPriorOptions& options,
                         const std::vector<health::NodeDeviation>& deviations) {
  std::vector<fuzzy::NodeHistory> measured;
  const auto& view = outcome.view;
  for (size_t i = 0; i < view.workers.size(); ++i) {
    const auto& worker = view.workers[i];
    const double busy = RunBusy(outcome, i);
    const double speed = fuzzy::MeasuredSpeed(worker.cost, busy);
    const double samples = fuzzy::JobSamples(static_cast<double>(worker.reports), busy, options);
    if (speed > 0 && samples > 0) measured.push_back({worker.name, speed, samples, 0});
  }
  fuzzy::HistoryFile out = file;
  out.workloads[kind] =
      fuzzy::RecordsAt(health::EnterJob(Kept(file, kind, now), measured, deviations, options), now);
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
