#include "cli/simulate/simulate_jobs.h"

#include <fmt/format.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/health_report.h"
#include "core/common/utf8.h"

namespace ballast::cli {
namespace {

std::vector<double> Weights(const LoadedScenario& loaded) {
  std::vector<double> weights;
  for (const balance::WorkerPrior& prior : loaded.priors) weights.push_back(prior.speed);
  return weights;
}

// "history 4 / blended 1 / profile 2": how many nodes' priors came from where.
std::string Sources(const std::vector<fuzzy::NodePrior>& priors) {
  int counts[3] = {0, 0, 0};
  for (const fuzzy::NodePrior& prior : priors) ++counts[static_cast<int>(prior.source)];
  std::vector<std::string> parts;
  for (auto source :
       {fuzzy::PriorSource::kHistory, fuzzy::PriorSource::kBlended, fuzzy::PriorSource::kProfile}) {
    const int count = counts[static_cast<int>(source)];
    if (count > 0) parts.push_back(fmt::format("{} {}", fuzzy::PriorSourceName(source), count));
  }
  return fmt::format("{}", fmt::join(parts, " / "));
}

}  // namespace

StatusOr<std::vector<sim::JobSeries>> SimulateSeries(const LoadedScenario& loaded,
                                                     const std::vector<balance::PolicySpec>& specs,
                                                     bool show_progress, sim::EventBudget* budget) {
  std::vector<sim::JobSeries> all;
  sim::SimOptions options;
  options.budget = budget;
  for (const balance::PolicySpec& spec : specs) {
    for (bool history : {true, false}) {
      const auto start = std::chrono::steady_clock::now();
      if (show_progress) {
        fmt::print(stderr, "simulating {} {} history ...", spec.display(),
                   history ? "with" : "without");
      }
      auto series = sim::SimulateJobs(loaded.scenario, Weights(loaded), spec, history, options);
      const double took =
          std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
      if (show_progress) fmt::print(stderr, " {:.2f} s\n", took);
      if (!series.ok()) return series.status();
      all.push_back(std::move(*series));
    }
  }
  return all;
}

std::string CostLabel(const sim::Workload& workload) {
  std::string costs = workload.item_costs
                          ? std::string("item costs")
                          : fmt::format("{} cost", balance::CostShapeName(workload.cost));
  if (workload.true_costs) costs += " declared, true costs listed";
  if (!workload.item_costs && workload.split == sim::Split::kCost) return costs;
  return fmt::format("{}, split by {}", costs, sim::SplitName(workload.split));
}

void PrintSeriesTable(const LoadedScenario& loaded, const std::vector<sim::JobSeries>& series) {
  const sim::Scenario& s = loaded.scenario;
  fmt::print("scenario {}: {} nodes, {} items ({}), profile {}, {} jobs\n",
             s.name.empty() ? "(unnamed)" : s.name, s.nodes.size(), s.workload.items,
             CostLabel(s.workload), loaded.profile.name, std::max<size_t>(1, s.jobs.size()));
  for (const sim::JobSeries& one : series) {
    fmt::print("\n{} {} history\n", one.policy, one.history ? "with" : "without");
    fmt::print("{:<14} {:>11} {:>10} {:>10} {:>9} {:>8} {:>11} {:>10}  {}\n", "job", "makespan_s",
               "efficiency", "messages", "moved", "steals", "split_error", "energy_J", "priors");
    for (const sim::JobRun& run : one.jobs) {
      fmt::print("{:<14} {:>11.3f} {:>10.4f} {:>10} {:>9} {:>8} {:>10.1f}% {:>10.1f}  {}\n",
                 run.name, run.result.makespan_s, run.result.efficiency, run.result.messages,
                 run.result.moved_items, run.result.steals, 100 * run.split_error,
                 run.energy.joules, Sources(run.priors));
      const health::DeviationOptions options;
      for (const health::NodeDeviation& d : run.deviations) {
        if (d.verdict == health::Verdict::kSlow) {
          fmt::print("  {}\n", health::DescribeDeviation(d, options));
        }
      }
    }
  }
  fmt::print(
      "\nsplit_error: the largest relative error of a node's first-lease share (its prior over "
      "the sum) against its true speed's share (docs/history.md)\n"
      "energy_J: estimated from each board's idle and load power (docs/history.md, \"Energy per "
      "job\"); a node below its own baseline is named under its job\n");
}

void PrintSeriesJson(const LoadedScenario& loaded, const std::vector<sim::JobSeries>& series) {
  nlohmann::json out = {{"scenario", loaded.scenario.name}, {"series", nlohmann::json::array()}};
  for (const sim::JobSeries& one : series) {
    nlohmann::json jobs = nlohmann::json::array();
    for (const sim::JobRun& run : one.jobs) {
      nlohmann::json nodes = nlohmann::json::array();
      for (size_t i = 0; i < run.priors.size(); ++i) {
        const fuzzy::NodePrior& prior = run.priors[i];
        nodes.push_back({{"name", prior.node},
                         {"prior", prior.value},
                         {"source", fuzzy::PriorSourceName(prior.source)},
                         {"samples", prior.samples},
                         {"age_s", prior.age_seconds},
                         {"speed", run.true_speeds[i]},
                         {"measured_speed", run.measured_speeds[i]},
                         {"items", run.result.workers[i].items},
                         {"leases", run.result.workers[i].leases},
                         {"reports", run.result.workers[i].reports},
                         {"busy_s", run.result.workers[i].busy_s}});
        if (i < run.deviations.size()) nodes.back()["deviation"] = DeviationJson(run.deviations[i]);
      }
      jobs.push_back({{"name", run.name},
                      {"makespan_s", run.result.makespan_s},
                      {"ideal_s", run.result.ideal_s},
                      {"ideal_bound", balance::LimitBoundName(run.result.ideal_bound)},
                      {"efficiency", run.result.efficiency},
                      {"messages", run.result.messages},
                      {"moved_items", run.result.moved_items},
                      {"steals", run.result.steals},
                      {"rebalances", run.result.rebalances},
                      {"split_error", run.split_error},
                      {"energy", EnergyJson(run.energy)},
                      {"slow", SlowNodes(run.deviations)},
                      {"nodes", nodes}});
    }
    out["series"].push_back({{"policy", one.policy}, {"history", one.history}, {"jobs", jobs}});
  }
  fmt::print("{}\n", DumpJson(out, 2));
}

}  // namespace ballast::cli
