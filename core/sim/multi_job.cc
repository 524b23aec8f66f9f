#include "core/sim/multi_job.h"

#include <fmt/format.h>

#include <map>

namespace ballast::sim {
namespace {

// The priors of the next job in node order: the blend of the fuzzy weights
// and what the history holds (the fuzzy weights alone without history).
std::vector<fuzzy::NodePrior> Priors(const Scenario& scenario, const std::vector<double>& weights,
                                     const std::vector<fuzzy::NodeHistory>& history) {
  std::map<std::string, double> fuzzy;
  for (size_t i = 0; i < scenario.nodes.size(); ++i) fuzzy[scenario.nodes[i].name] = weights[i];
  std::map<std::string, fuzzy::NodePrior> by_node;
  for (fuzzy::NodePrior& prior : BlendHistoryPrior(fuzzy, history, scenario.history.prior)) {
    by_node.emplace(prior.node, std::move(prior));
  }
  std::vector<fuzzy::NodePrior> priors;
  for (const EmulatedNode& node : scenario.nodes) priors.push_back(by_node.at(node.name));
  return priors;
}

// Each node's deviation from the history before the job, in node order.
std::vector<health::NodeDeviation> Judge(const Scenario& scenario, const JobRun& run,
                                         const std::vector<fuzzy::NodeHistory>& history) {
  std::vector<std::vector<health::SpeedSample>> samples;
  for (const WorkerResult& w : run.result.workers) samples.push_back(w.speed_samples);
  const std::vector<health::NodeMeasurementNoise> noise = health::MeasurementNoise(samples);
  std::vector<health::JobMeasurement> measured;
  for (size_t i = 0; i < run.result.workers.size(); ++i) {
    const WorkerResult& w = run.result.workers[i];
    measured.push_back({w.name, run.measured_speeds[i], w.busy_s, 0, noise[i].log_variance,
                        noise[i].speed_factor, noise[i].size_variance});
  }
  health::DeviationOptions options;
  options.max_age_seconds = scenario.history.prior.max_age_seconds;
  return health::JudgeDeviations(history, measured, options);
}

// The history after `run`: every record aged by its makespan, then the
// job's measured speeds entered (age 0: measured at its end; a Slow node
// down-weighted, health::EnterJob).
std::vector<fuzzy::NodeHistory> Learn(const Scenario& scenario, const JobRun& run,
                                      std::vector<fuzzy::NodeHistory> history) {
  for (fuzzy::NodeHistory& h : history) h.age_seconds += run.result.makespan_s;
  std::vector<fuzzy::NodeHistory> measured;
  for (size_t i = 0; i < run.result.workers.size(); ++i) {
    const WorkerResult& w = run.result.workers[i];
    if (run.measured_speeds[i] <= 0) continue;
    const double samples =
        fuzzy::JobSamples(static_cast<double>(w.reports), w.busy_s, scenario.history.prior);
    measured.push_back({w.name, run.measured_speeds[i], samples, 0});
  }
  return health::EnterJob(history, measured, run.deviations, scenario.history.prior);
}

}  // namespace

health::JobEnergy JobEnergy(const Scenario& scenario, const SimResult& result) {
  std::vector<health::NodeUsage> usage;
  for (size_t i = 0; i < result.workers.size() && i < scenario.nodes.size(); ++i) {
    const WorkerResult& w = result.workers[i];
    usage.push_back({w.name, health::NodePower(scenario.nodes[i].labels), w.busy_s, w.items});
  }
  return health::EstimateJobEnergy(usage, result.makespan_s);
}

StatusOr<JobSeries> SimulateJobs(const Scenario& scenario, const std::vector<double>& fuzzy_weights,
                                 const balance::PolicySpec& policy, bool history,
                                 const SimOptions& options) {
  if (fuzzy_weights.size() != scenario.nodes.size()) {
    return Status::Invalid(
        fmt::format("{} weights for {} nodes", fuzzy_weights.size(), scenario.nodes.size()));
  }
  std::vector<JobStep> steps = scenario.jobs;
  if (steps.empty()) steps.push_back({scenario.name, {}, {}});
  JobSeries series{policy.display(), history, {}};
  Scenario job = scenario;  // its nodes' speeds drift from job to job
  std::vector<fuzzy::NodeHistory> known;
  for (size_t k = 0; k < steps.size(); ++k) {
    for (size_t i = 0; i < job.nodes.size(); ++i) {
      EmulatedNode& node = job.nodes[i];
      auto drift = steps[k].speeds.find(node.name);
      if (drift != steps[k].speeds.end()) node.speed = drift->second;
      auto within = steps[k].changes.find(node.name);
      node.changes = within != steps[k].changes.end() ? within->second : scenario.nodes[i].changes;
    }
    JobRun run;
    run.name = steps[k].name.empty() ? fmt::format("job {}", k + 1) : steps[k].name;
    run.priors = Priors(job, fuzzy_weights, history ? known : std::vector<fuzzy::NodeHistory>{});
    std::vector<balance::WorkerPrior> workers;
    std::vector<double> prior_values;
    for (size_t i = 0; i < job.nodes.size(); ++i) {
      workers.push_back({job.nodes[i].name, run.priors[i].value, run.priors[i].credibility});
      prior_values.push_back(run.priors[i].value);
      run.true_speeds.push_back(job.nodes[i].speed);
    }
    run.split_error = fuzzy::SplitError(prior_values, run.true_speeds);
    auto result = Simulate(job, workers, policy, options);
    if (!result.ok()) {
      return Status(result.status().code(),
                    fmt::format("{}: {}", run.name, result.status().message()));
    }
    run.result = std::move(*result);
    for (const WorkerResult& w : run.result.workers) {
      run.measured_speeds.push_back(fuzzy::MeasuredSpeed(w.cost, w.busy_s));
    }
    run.energy = JobEnergy(job, run.result);
    if (history) {
      run.deviations = Judge(job, run, known);
      known = Learn(job, run, std::move(known));
      for (fuzzy::NodeHistory& h : known) h.age_seconds += scenario.history.gap_seconds;
    }
    series.jobs.push_back(std::move(run));
  }
  return series;
}

}  // namespace ballast::sim
