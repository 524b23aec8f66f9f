// ballast bench JOB.yaml [--cluster CLUSTER.yaml] --policies LIST --repeat N [-o table|json]
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cli_common.h"
#include "commands.h"
#include "common/stats.h"
#include "local_runner.h"
#include "run_report.h"
#include "scenario_loader.h"

namespace ballast::cli {
namespace {

struct BenchFlags {
  std::string job;
  std::string cluster;
  std::vector<std::string> policies = {"equal",     "weighted", "selfsched", "guided",
                                       "factoring", "mms",      "adaptive"};
  int repeat = 3;
  std::string output = "table";
  std::string worker = DefaultWorkerBinary();
  bool no_cgroups = false;
};

struct PolicyFigures {
  std::string policy;
  std::vector<double> makespans;
  std::vector<double> ideals;
  std::vector<double> efficiencies;
  uint64_t messages = 0;  // of the median run
  uint64_t moved = 0;
  std::vector<std::string> results;
};

int Bench(const BenchFlags& flags) {
  spdlog::set_level(spdlog::level::warn);
  auto loaded = LoadJob(flags.job, flags.cluster);
  if (!loaded.ok()) return ReportError(loaded.status());
  std::vector<balance::PolicySpec> specs;
  for (const std::string& name : flags.policies) {
    auto spec = PolicyByName(name);
    if (!spec.ok()) return ReportError(spec.status());
    specs.push_back(*spec);
  }
  double cores = 0;
  for (const auto& node : loaded->cluster.nodes) cores += node.speed;
  fmt::print(stderr, "bench {}: {} items, {} nodes ({:.3g} cores), {} policies x {} runs\n",
             loaded->job.name, loaded->job.workload.items, loaded->cluster.nodes.size(), cores,
             specs.size(), flags.repeat);

  // Round by round, every policy once per round: a machine whose speed
  // drifts during the bench (a shared one) then weighs on every policy alike.
  std::vector<PolicyFigures> figures;
  std::vector<std::vector<std::pair<double, std::pair<uint64_t, uint64_t>>>> runs(specs.size());
  for (const auto& spec : specs) {
    figures.emplace_back();
    figures.back().policy = spec.display();
  }
  for (int r = 0; r < flags.repeat; ++r) {
    for (size_t p = 0; p < specs.size(); ++p) {
      job::JobSpec job = loaded->job;
      job.policy = specs[p];
      LocalRunOptions options{
          job, loaded->cluster, loaded->profile, flags.worker, !flags.no_cgroups, "", nullptr};
      auto outcome = RunLocal(options);
      if (!outcome.ok()) return ReportError(outcome.status());
      fmt::print(stderr, "  {:<10} run {}: makespan {:.2f} s, efficiency {:.3f}\n",
                 specs[p].display(), r + 1, outcome->makespan_s, outcome->efficiency);
      PolicyFigures& f = figures[p];
      f.makespans.push_back(outcome->makespan_s);
      f.ideals.push_back(outcome->ideal_s);
      f.efficiencies.push_back(outcome->efficiency);
      f.results.push_back(outcome->view.result.Summary());
      runs[p].push_back(
          {outcome->makespan_s, {outcome->view.messages, outcome->view.policy.moved_items}});
    }
  }
  for (size_t p = 0; p < specs.size(); ++p) {
    std::sort(runs[p].begin(), runs[p].end());
    figures[p].messages = runs[p][runs[p].size() / 2].second.first;
    figures[p].moved = runs[p][runs[p].size() / 2].second.second;
  }

  // Every run of every policy must give the same result.
  const std::string& reference = figures.front().results.front();
  bool agree = true;
  for (const auto& f : figures) {
    for (const auto& result : f.results) agree = agree && result == reference;
  }
  if (flags.output == "json") {
    nlohmann::json out = {{"job", loaded->job.name}, {"repeat", flags.repeat},
                          {"cores", cores},          {"results_agree", agree},
                          {"result", reference},     {"results", nlohmann::json::array()}};
    for (const auto& f : figures) {
      out["results"].push_back({{"policy", f.policy},
                                {"makespan_s", Median(f.makespans)},
                                {"ideal_s", Median(f.ideals)},
                                {"efficiency", Median(f.efficiencies)},
                                {"makespans_s", f.makespans},
                                {"messages", f.messages},
                                {"moved_items", f.moved}});
    }
    fmt::print("{}\n", out.dump(2));
  } else {
    fmt::print("\n{:<12} {:>12} {:>10} {:>11} {:>10} {:>8}   (medians of {} runs)\n", "POLICY",
               "MAKESPAN_S", "IDEAL_S", "EFFICIENCY", "MESSAGES", "MOVED", flags.repeat);
    for (const auto& f : figures) {
      fmt::print("{:<12} {:>12.2f} {:>10.2f} {:>11.3f} {:>10} {:>8}\n", f.policy,
                 Median(f.makespans), Median(f.ideals), Median(f.efficiencies), f.messages,
                 f.moved);
    }
    fmt::print(
        "\nideal = measured single-core work / {:.3g} emulated cores (the physical limit); "
        "efficiency = ideal / makespan, each run's (docs/efficiency.md)\n",
        cores);
    fmt::print("result: {} ({})\n", reference, agree ? "identical in every run" : "RUNS DISAGREE");
  }
  return agree ? kExitOk : kExitFailure;
}

}  // namespace

void RegisterBench(CLI::App& app, int* exit_code) {
  auto flags = std::make_shared<BenchFlags>();
  CLI::App* bench = app.add_subcommand(
      "bench",
      "Run the same job under each policy on real worker processes, N rounds of one run per\n"
      "policy, and print the median makespan, the physical limit, efficiency, messages and\n"
      "moved items side by side. Exits 1 if any two runs disagree on the result.\n"
      "  ballast bench examples/jobs/primes-300000.yaml --policies equal,mms,adaptive "
      "--repeat 3");
  bench->add_option("job", flags->job, "job file")->required()->check(CLI::ExistingFile);
  bench->add_option("--cluster", flags->cluster, "emulated nodes (default: seed 000's)")
      ->check(CLI::ExistingFile);
  bench->add_option("--policies", flags->policies, "policies to compare (comma-separated)")
      ->delimiter(',')
      ->capture_default_str();
  bench->add_option("--repeat", flags->repeat, "runs per policy")
      ->check(CLI::Range(1, 100))
      ->capture_default_str();
  bench->add_option("-o,--output", flags->output, "table or json")
      ->check(CLI::IsMember({"table", "json"}))
      ->capture_default_str();
  bench->add_option("--worker", flags->worker, "the ballast-worker binary")->capture_default_str();
  bench->add_flag("--no-cgroups", flags->no_cgroups, "emulate speeds with a duty cycle");
  bench->callback([flags, exit_code] { *exit_code = Bench(*flags); });
}

}  // namespace ballast::cli
