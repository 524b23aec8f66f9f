// ballast simulate SCENARIO [-o table|json] [--gantt FILE.svg] [--policies LIST]
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/health_report.h"
#include "cli/scenario_loader.h"
#include "cli/simulate/gantt_svg.h"
#include "cli/simulate/simulate_jobs.h"
#include "core/common/utf8.h"
#include "core/sim/simulator.h"

namespace ballast::cli {
namespace {

struct SimulateOptions {
  std::string scenario;
  std::string output = "table";
  std::string gantt;
  std::vector<std::string> policies;
};

// The same scenario, its policies told the other way of the costs.
sim::Scenario OtherSplit(const sim::Scenario& scenario) {
  sim::Scenario other = scenario;
  other.workload.split =
      scenario.workload.split == sim::Split::kCost ? sim::Split::kCount : sim::Split::kCost;
  return other;
}

// Split by cost beside split by count, each policy's two runs on one line
// with the physical limit (the same for both: the true costs do not change).
void PrintSplitTable(const sim::Scenario& scenario, const std::vector<sim::SimResult>& results,
                     const std::vector<sim::SimResult>& other) {
  const bool by_cost = scenario.workload.split == sim::Split::kCost;
  const std::vector<sim::SimResult>& cost = by_cost ? results : other;
  const std::vector<sim::SimResult>& count = by_cost ? other : results;
  fmt::print("\nsplit by cost beside split by count (the same true item costs)\n");
  fmt::print("{:<18} {:>12} {:>12} {:>12} {:>10} {:>10} {:>11}\n", "policy", "by_cost_s",
             "by_count_s", "ideal_s", "eff_cost", "eff_count", "count/cost");
  for (size_t i = 0; i < cost.size() && i < count.size(); ++i) {
    fmt::print("{:<18} {:>12.3f} {:>12.3f} {:>12.3f} {:>10.3f} {:>10.3f} {:>11.3f}\n",
               cost[i].policy, cost[i].makespan_s, count[i].makespan_s, cost[i].ideal_s,
               cost[i].efficiency, count[i].efficiency, count[i].makespan_s / cost[i].makespan_s);
  }
  fmt::print(
      "\nby cost: the policies are told each item's cost and split by cumulative cost; by count: "
      "they are told none and split by item count (docs/simulator.md)\n");
}

// True when the policies are told the scenario's item costs: then
// `simulate` also deals them largest first and as listed, whatever each
// policy's own order, to show what the deal buys.
bool DealsByCost(const sim::Scenario& scenario) {
  return scenario.workload.item_costs && scenario.workload.split == sim::Split::kCost;
}

// The same scenario, its items dealt in `order`.
sim::Scenario DealtIn(const sim::Scenario& scenario, balance::ItemOrder order) {
  sim::Scenario dealt = scenario;
  dealt.workload.order = order;
  return dealt;
}

// Dealt largest first beside as listed, each policy's two runs on one line,
// with the order the policy deals in by default.
void PrintOrderTable(const std::vector<sim::SimResult>& largest,
                     const std::vector<sim::SimResult>& listed,
                     const std::vector<balance::PolicySpec>& specs) {
  fmt::print("\ndealt largest first beside as listed (the same items and true costs)\n");
  fmt::print("{:<18} {:>12} {:>12} {:>12} {:>10} {:>10} {:>12}  {}\n", "policy", "largest_s",
             "listed_s", "ideal_s", "eff_large", "eff_listed", "listed/large", "default");
  for (size_t i = 0; i < largest.size() && i < listed.size() && i < specs.size(); ++i) {
    fmt::print("{:<18} {:>12.3f} {:>12.3f} {:>12.3f} {:>10.3f} {:>10.3f} {:>12.3f}  {}\n",
               largest[i].policy, largest[i].makespan_s, listed[i].makespan_s, largest[i].ideal_s,
               largest[i].efficiency, listed[i].efficiency,
               listed[i].makespan_s / largest[i].makespan_s,
               balance::ItemOrderName(balance::PolicyItemOrder(specs[i])));
  }
  fmt::print(
      "\nlargest first: the items with the largest declared costs are dealt first and the small "
      "ones left for the tail; as listed: in the list's order; default: the order each policy "
      "deals in unless the job says (itemsFrom.order, docs/workloads.md)\n");
}

void PrintTable(const LoadedScenario& loaded, const std::vector<sim::SimResult>& results) {
  const sim::Scenario& s = loaded.scenario;
  fmt::print("scenario {}: {} nodes, {} items ({}), profile {}\n",
             s.name.empty() ? "(unnamed)" : s.name, s.nodes.size(), s.workload.items,
             CostLabel(s.workload), loaded.profile.name);
  if (s.nodes.size() <= 16) {
    for (size_t i = 0; i < s.nodes.size(); ++i) {
      fmt::print("  {:<16} weight {:>6.3g}  true speed {:.3g}\n", s.nodes[i].name,
                 loaded.priors[i].speed, s.nodes[i].speed);
    }
  }
  fmt::print("\n{:<18} {:>12} {:>12} {:>10} {:>10} {:>10} {:>7} {:>10} {:>10} {:>10}\n", "policy",
             "makespan_s", "ideal_s", "efficiency", "messages", "moved", "steals", "duplicate",
             "energy_J", "J/item");
  bool energy_estimate = false, energy_incomplete = false;
  for (const sim::SimResult& r : results) {
    const health::JobEnergy energy = sim::JobEnergy(s, r);
    energy_estimate = energy_estimate || energy.estimate;
    energy_incomplete = energy_incomplete || !energy.complete;
    fmt::print(
        "{:<18} {:>12.3f} {:>12.3f} {:>10.3f} {:>10} {:>10} {:>7} {:>10} {:>10.1f} {:>10.4g}\n",
        r.policy, r.makespan_s, r.ideal_s, r.efficiency, r.messages, r.moved_items, r.steals,
        r.duplicate_items, energy.joules, energy.joules_per_item);
  }
  fmt::print(
      "\nenergy_J: estimated from each board's idle and load power over the makespan{}{} "
      "(docs/history.md, \"Energy per job\")\n",
      energy_estimate ? "; some figures are estimates" : "",
      energy_incomplete ? "; nodes without power figures left out" : "");
  for (const sim::SimResult& r : results) {
    if (r.start_cost > 0) {
      fmt::print("{} split by a learned start cost of {:.3g} mean items per item\n", r.policy,
                 r.start_cost);
    }
  }
  if (!results.empty() && results[0].ideal_bound == balance::LimitBound::kLargestItem) {
    fmt::print(
        "\nideal_s is the largest item on the fastest node: it cannot be split, and takes longer "
        "than the whole work spread over every node\n");
  }
  if (!results.empty() && results[0].packing_s > 0) {
    fmt::print(
        "\nideal packing {:.3f} s: the items by true cost, largest first, each to the node that "
        "finishes it first (efficiency {:.3f}; no policy knows the true costs)\n",
        results[0].packing_s, balance::Efficiency(results[0].ideal_s, results[0].packing_s));
  }
  if (!results.empty() && results[0].failed_items > 0) {
    fmt::print(
        "{} item(s) failed every attempt: every other item was computed, and the job fails at the "
        "end naming them (failurePolicy.maxFailedItems unset)\n",
        results[0].failed_items);
  }
}

nlohmann::json ResultsJson(const sim::Scenario& scenario,
                           const std::vector<sim::SimResult>& results) {
  nlohmann::json out = nlohmann::json::array();
  for (const sim::SimResult& r : results) {
    nlohmann::json workers = nlohmann::json::array();
    for (const sim::WorkerResult& w : r.workers) {
      workers.push_back({{"name", w.name},
                         {"weight", w.prior_speed},
                         {"speed", w.true_speed},
                         {"items", w.items},
                         {"leases", w.leases},
                         {"busy_s", w.busy_s},
                         {"idle_s", w.idle_s},
                         {"failed", w.failed},
                         {"left", w.left}});
    }
    out.push_back({{"policy", r.policy},
                   {"makespan_s", r.makespan_s},
                   {"ideal_s", r.ideal_s},
                   {"ideal_bound", balance::LimitBoundName(r.ideal_bound)},
                   {"efficiency", r.efficiency},
                   {"messages", r.messages},
                   {"moved_items", r.moved_items},
                   {"steals", r.steals},
                   {"rebalances", r.rebalances},
                   {"duplicate_items", r.duplicate_items},
                   {"start_cost", r.start_cost},
                   {"packing_s", r.packing_s},
                   {"failed_items", r.failed_items},
                   {"job_failed", r.job_failed},
                   {"energy", EnergyJson(sim::JobEnergy(scenario, r))},
                   {"workers", workers}});
  }
  return out;
}

// {"scenario", "split", "results"} and, for a scenario with item costs,
// "other_split": {"split", "results"} (the same runs, the policies told the
// other way).
nlohmann::json ToJson(const LoadedScenario& loaded, const std::vector<sim::SimResult>& results,
                      const std::vector<sim::SimResult>& other,
                      const std::vector<sim::SimResult>& largest,
                      const std::vector<sim::SimResult>& listed) {
  const sim::Scenario& scenario = loaded.scenario;
  nlohmann::json out = {{"scenario", scenario.name},
                        {"split", sim::SplitName(scenario.workload.split)},
                        {"results", ResultsJson(scenario, results)}};
  if (scenario.workload.item_costs) {
    out["other_split"] = {{"split", sim::SplitName(OtherSplit(scenario).workload.split)},
                          {"results", ResultsJson(scenario, other)}};
  }
  if (!listed.empty()) {
    out["largest_first"] = {{"results", ResultsJson(scenario, largest)}};
    out["as_listed"] = {{"results", ResultsJson(scenario, listed)}};
  }
  return out;
}

// Every spec on `scenario`, in order; the first error stops it.
StatusOr<std::vector<sim::SimResult>> SimulateEach(const sim::Scenario& scenario,
                                                   const LoadedScenario& loaded,
                                                   const std::vector<balance::PolicySpec>& specs,
                                                   const sim::SimOptions& sim_options,
                                                   bool show_progress) {
  std::vector<sim::SimResult> results;
  for (const balance::PolicySpec& spec : specs) {
    const auto start = std::chrono::steady_clock::now();
    if (show_progress) {
      const std::string split =
          scenario.workload.item_costs
              ? fmt::format(" (split by {})", sim::SplitName(scenario.workload.split))
              : "";
      fmt::print(stderr, "simulating {}{} ...", spec.display(), split);
    }
    auto result = sim::Simulate(scenario, loaded.priors, spec, sim_options);
    const double took =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (show_progress) fmt::print(stderr, " {:.2f} s\n", took);
    if (!result.ok()) return result.status();
    results.push_back(std::move(*result));
  }
  return results;
}

// The policies to compare: the flag's, else the scenario's.
StatusOr<std::vector<balance::PolicySpec>> PoliciesToRun(const SimulateOptions& options,
                                                         const LoadedScenario& loaded) {
  if (options.policies.empty()) return loaded.scenario.policies;
  std::vector<balance::PolicySpec> specs;
  for (const std::string& name : options.policies) {
    BALLAST_ASSIGN_OR_RETURN(balance::PolicySpec spec, PolicyByName(name));
    specs.push_back(std::move(spec));
  }
  return specs;
}

// Every policy's run of one job, and beside it the same runs split the
// other way (with item costs: what the costs buy) and dealt largest first
// and as listed (told the costs).
struct JobRuns {
  std::vector<sim::SimResult> results;
  std::vector<sim::SimResult> other;
  std::vector<sim::SimResult> largest;
  std::vector<sim::SimResult> listed;
};

StatusOr<JobRuns> SimulateJob(const SimulateOptions& options, const LoadedScenario& loaded,
                              const std::vector<balance::PolicySpec>& specs, bool show_progress,
                              sim::EventBudget* budget) {
  JobRuns runs;
  sim::SimOptions sim_options;
  sim_options.timeline = !options.gantt.empty();
  sim_options.budget = budget;
  sim::SimOptions beside;  // the runs compared with them: no timeline
  beside.budget = budget;
  BALLAST_ASSIGN_OR_RETURN(
      runs.results, SimulateEach(loaded.scenario, loaded, specs, sim_options, show_progress));
  if (loaded.scenario.workload.item_costs) {
    BALLAST_ASSIGN_OR_RETURN(runs.other, SimulateEach(OtherSplit(loaded.scenario), loaded, specs,
                                                      beside, show_progress));
  }
  if (DealsByCost(loaded.scenario)) {
    BALLAST_ASSIGN_OR_RETURN(
        runs.largest, SimulateEach(DealtIn(loaded.scenario, balance::ItemOrder::kLargestFirst),
                                   loaded, specs, beside, show_progress));
    BALLAST_ASSIGN_OR_RETURN(
        runs.listed, SimulateEach(DealtIn(loaded.scenario, balance::ItemOrder::kListed), loaded,
                                  specs, beside, show_progress));
  }
  return runs;
}

// The most item costs with jitter the runs of one command build together:
// each run draws its own (costJitter), at most 5e7 of them (scenario.h),
// and 1,000 jobs of them took hours before anything was printed.
constexpr double kMaxJitteredCosts = 2e9;

// The runs `ballast simulate` makes of the scenario with `specs`: each
// policy once per job and history setting in a series; once, and once more
// per split and order compared, for one job. Invalid, naming the product,
// when their jittered item costs together pass kMaxJitteredCosts.
Status CheckRunsFit(const sim::Scenario& scenario, size_t specs) {
  const sim::Workload& workload = scenario.workload;
  const double runs =
      !scenario.jobs.empty()
          ? static_cast<double>(specs) * 2 * static_cast<double>(scenario.jobs.size())
          : static_cast<double>(specs) *
                (1 + (workload.item_costs ? 1 : 0) + (DealsByCost(scenario) ? 2 : 0));
  if (workload.cost_jitter <= 0) return Status::Ok();
  const double costs = runs * static_cast<double>(workload.items);
  if (costs <= kMaxJitteredCosts) return Status::Ok();
  return Status::Invalid(fmt::format(
      "workload.costJitter: {:.0f} runs ({} policies{}) each drawing {} jittered item costs "
      "make {:.3g} in all, more than {:.0g} (hours of simulating); fewer items, jobs or "
      "policies, or no costJitter",
      runs, specs,
      scenario.jobs.empty() ? ""
                            : fmt::format(" x 2 history settings x {} jobs", scenario.jobs.size()),
      workload.items, costs, kMaxJitteredCosts));
}

// A scenario of a series of jobs: no Gantt chart, one table.
int RunSeries(const SimulateOptions& options, const LoadedScenario& loaded,
              const std::vector<balance::PolicySpec>& specs, bool show_progress) {
  if (!options.gantt.empty()) {
    return ReportError(Status::Invalid("--gantt: not for a scenario with jobs"));
  }
  sim::EventBudget budget;
  auto series = SimulateSeries(loaded, specs, show_progress, &budget);
  if (!series.ok()) return ReportError(series.status());
  if (options.output == "json") {
    PrintSeriesJson(loaded, *series);
  } else {
    PrintSeriesTable(loaded, *series);
  }
  return kExitOk;
}

int RunSimulate(const SimulateOptions& options) {
  auto loaded = LoadScenario(options.scenario);
  if (!loaded.ok()) return ReportError(loaded.status());
  for (const std::string& warning : loaded->scenario.warnings) {
    fmt::print(stderr, "warning: {}\n", warning);
  }
  for (const std::string& warning : loaded->weights.warnings) {
    fmt::print(stderr, "warning: {}\n", warning);
  }
  auto specs = PoliciesToRun(options, *loaded);
  if (!specs.ok()) return ReportError(specs.status());
  if (Status fits = CheckRunsFit(loaded->scenario, specs->size()); !fits.ok()) {
    return ReportError(fits);
  }
  const bool show_progress = isatty(STDERR_FILENO) || options.output == "table";
  if (!loaded->scenario.jobs.empty()) return RunSeries(options, *loaded, *specs, show_progress);
  sim::EventBudget budget;
  auto runs = SimulateJob(options, *loaded, *specs, show_progress, &budget);
  if (!runs.ok()) return ReportError(runs.status());
  if (options.output == "json") {
    fmt::print(
        "{}\n",
        DumpJson(ToJson(*loaded, runs->results, runs->other, runs->largest, runs->listed), 2));
  } else {
    PrintTable(*loaded, runs->results);
    if (!runs->other.empty()) PrintSplitTable(loaded->scenario, runs->results, runs->other);
    if (!runs->listed.empty()) PrintOrderTable(runs->largest, runs->listed, *specs);
  }
  if (!options.gantt.empty()) {
    const std::string title = fmt::format("ballast simulate {}", loaded->scenario.name);
    if (auto written = WriteFile(options.gantt, RenderGantt(title, runs->results)); !written.ok()) {
      return ReportError(written);
    }
    if (options.output != "json") fmt::print("\nGantt chart written to {}\n", options.gantt);
  }
  return kExitOk;
}

}  // namespace

void RegisterSimulate(CLI::App& app, int* exit_code) {
  auto options = std::make_shared<SimulateOptions>();
  CLI::App* command = app.add_subcommand(
      "simulate",
      "Run a scenario in virtual time under each policy and compare them with the physical limit.\n"
      "The same policy objects decide here as in `ballast run` and in the operator.\n\n"
      "Example:\n  ballast simulate examples/scenarios/seed000-primes.yaml --gantt gantt.svg");
  command->add_option("scenario", options->scenario, "Scenario YAML (see docs/simulator.md)")
      ->required()
      ->check(CLI::ExistingFile);
  command->add_option("-o,--output", options->output, "Output format")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  command->add_option("--gantt", options->gantt, "Also write a Gantt chart of every worker (SVG)");
  command
      ->add_option("--policies", options->policies,
                   "Compare these policies instead of the scenario's (comma-separated)")
      ->delimiter(',');
  command->callback([options, exit_code] { *exit_code = RunSimulate(*options); });
}

}  // namespace ballast::cli
