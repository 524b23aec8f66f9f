// ballast bench JOB.yaml [--cluster CLUSTER.yaml] --policies LIST --repeat N [-o table|json]
#include <fmt/format.h>
#include <spdlog/spdlog.h>

#include <algorithm>

#include "cli/cli_common.h"
#include "cli/commands.h"
#include "cli/run/local_runner.h"
#include "cli/run/run_history.h"
#include "cli/run/run_report.h"
#include "cli/scenario_loader.h"
#include "core/common/stats.h"
#include "core/common/utf8.h"
#include "core/fuzzy/learning_target.h"

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
  bool history = false;  // chain each policy's runs through a history
  int sequences = 1;     // with history: the chain of --repeat runs, this many times
};

// One run of a policy with --history: its figures and where its priors came from.
struct HistoryRun {
  int sequence = 0;  // 0-based; each sequence starts from the fuzzy weights
  double makespan = 0;
  double efficiency = 0;
  uint64_t messages = 0;
  uint64_t moved = 0;
  double split_error = 0;
  std::string sources;
};

std::string SourceCounts(const std::vector<fuzzy::NodePrior>& priors) {
  std::map<std::string, int> counts;
  for (const fuzzy::NodePrior& prior : priors) ++counts[fuzzy::PriorSourceName(prior.source)];
  std::vector<std::string> parts;
  for (const auto& [name, count] : counts) parts.push_back(fmt::format("{} {}", name, count));
  return fmt::format("{}", fmt::join(parts, " / "));
}

// Every run of a policy with --history, for -o json.
nlohmann::json HistoryJson(const std::vector<HistoryRun>& runs) {
  nlohmann::json out = nlohmann::json::array();
  for (const HistoryRun& run : runs) {
    out.push_back({{"sequence", run.sequence + 1},
                   {"makespan_s", run.makespan},
                   {"efficiency", run.efficiency},
                   {"messages", run.messages},
                   {"moved_items", run.moved},
                   {"split_error", run.split_error},
                   {"priors", run.sources}});
  }
  return out;
}

void PrintHistoryRow(const std::string& policy, const std::string& run_name,
                     const HistoryRun& run) {
  fmt::print("{:<12} {:>3} {:>5} {:>10.2f} {:>11.3f} {:>9} {:>8} {:>10.1f}%  {}\n", policy,
             run.sequence + 1, run_name, run.makespan, run.efficiency, run.messages, run.moved,
             100 * run.split_error, run.sources);
}

// The runs of each policy with --history, a row each, and after each
// sequence the run on the exact speeds.
void PrintHistoryRunRows(const std::vector<std::string>& policies,
                         const std::vector<std::vector<HistoryRun>>& runs,
                         const std::vector<std::vector<HistoryRun>>& exact_runs) {
  fmt::print("\n{:<12} {:>3} {:>5} {:>10} {:>11} {:>9} {:>8} {:>11}  {}\n", "POLICY", "SEQ", "RUN",
             "MAKESPAN_S", "EFFICIENCY", "MESSAGES", "MOVED", "SPLIT_ERROR", "PRIORS");
  for (size_t p = 0; p < policies.size(); ++p) {
    int previous = -1, run_in_sequence = 0;
    for (size_t r = 0; r < runs[p].size(); ++r) {
      const HistoryRun& run = runs[p][r];
      run_in_sequence = run.sequence == previous ? run_in_sequence + 1 : 1;
      previous = run.sequence;
      PrintHistoryRow(policies[p], std::to_string(run_in_sequence), run);
      const bool last_of_sequence = r + 1 == runs[p].size() || runs[p][r + 1].sequence != previous;
      for (const HistoryRun& exact : exact_runs[p]) {
        if (last_of_sequence && exact.sequence == previous)
          PrintHistoryRow(policies[p], "exact", exact);
      }
    }
  }
}

// The targets of issue 15 (fuzzy::JudgeLearning) for each policy's runs with
// --history: the later runs' median moved items and messages at most half
// the first runs' median, their median efficiency not lower. Beside them the
// runs on the exact speeds (what perfect history would give) and the later
// runs' shift in efficiency with its 95 % interval.
void PrintHistoryRuns(const std::vector<std::string>& policies,
                      const std::vector<std::vector<HistoryRun>>& runs,
                      const std::vector<std::vector<HistoryRun>>& exact_runs, int sequences) {
  PrintHistoryRunRows(policies, runs, exact_runs);
  fmt::print(
      "\n{:<12} {:>16} {:>16} {:>18}   target: moved and messages <= 1/2, efficiency >= "
      "first{}\n",
      "POLICY", "MOVED 1st/later", "MESSAGES", "EFFICIENCY",
      sequences > 1
          ? fmt::format(" (medians: first runs of {} sequences, their later runs)", sequences)
          : "");
  for (size_t p = 0; p < policies.size(); ++p) {
    std::vector<std::vector<fuzzy::RunFigures>> by_sequence(static_cast<size_t>(sequences));
    for (const HistoryRun& run : runs[p]) {
      by_sequence[static_cast<size_t>(run.sequence)].push_back(
          {static_cast<double>(run.moved), static_cast<double>(run.messages), run.efficiency});
    }
    const fuzzy::LearningVerdict verdict = fuzzy::JudgeLearning(by_sequence);
    if (verdict.first_runs == 0) continue;
    fmt::print("{:<12} {:>7g} / {:<7g} {:>7g} / {:<7g} {:>8.3f} / {:<7.3f}   {}\n", policies[p],
               verdict.first.moved, verdict.later.moved, verdict.first.messages,
               verdict.later.messages, verdict.first.efficiency, verdict.later.efficiency,
               verdict.met() ? "met" : "NOT MET");
    const fuzzy::Shift& shift = verdict.efficiency_shift;
    fmt::print(
        "{:<12} later runs' efficiency against the first runs': {:+.4f}, 95 % interval "
        "[{:+.4f}, {:+.4f}] ({} first runs, {} later)\n",
        "", shift.estimate, shift.low, shift.high, verdict.first_runs, verdict.later_runs);
    std::vector<double> exact_efficiency, exact_messages, exact_moved;
    for (const HistoryRun& run : exact_runs[p]) {
      exact_efficiency.push_back(run.efficiency);
      exact_messages.push_back(static_cast<double>(run.messages));
      exact_moved.push_back(static_cast<double>(run.moved));
    }
    if (!exact_efficiency.empty()) {
      fmt::print(
          "{:<12} on the exact speeds (perfect history, {} runs): efficiency {:.3f}, "
          "messages {:g}, moved {:g}\n",
          "", exact_efficiency.size(), Median(exact_efficiency), Median(exact_messages),
          Median(exact_moved));
    }
  }
}

// Everything a policy's runs gave, round by round.
struct PolicyRuns {
  balance::PolicySpec spec;
  std::vector<double> makespans;
  std::vector<double> ideals;
  std::vector<double> efficiencies;
  // (makespan, (messages, moved items)) of every run: the median run's counts
  std::vector<std::pair<double, std::pair<uint64_t, uint64_t>>> counts;
  std::vector<std::string> results;
  // --history: what the sequence learned so far, its runs, and one run on the
  // exact speeds per sequence
  history::SpeedStore history;
  std::vector<HistoryRun> history_runs;
  std::vector<HistoryRun> exact_runs;

  // The median run's messages and moved items.
  std::pair<uint64_t, uint64_t> MedianCounts() const {
    auto sorted = counts;
    std::sort(sorted.begin(), sorted.end());
    return sorted[sorted.size() / 2].second;
  }
};

// One bench: the job and its nodes, and the runs of every policy.
class BenchRun {
 public:
  BenchRun(const BenchFlags& flags, LoadedJob loaded, fuzzy::WeightResult weights)
      : flags_(flags),
        loaded_(std::move(loaded)),
        weights_(std::move(weights)),
        sequences_(flags.history ? flags.sequences : 1) {
    for (const auto& node : loaded_.cluster.nodes) cores_ += node.speed;
  }

  // Round by round, every policy once per round: a machine whose speed
  // drifts during the bench (a shared one) then weighs on every policy alike.
  Status RunAll(const std::vector<balance::PolicySpec>& specs) {
    for (const auto& spec : specs) {
      policies_.emplace_back();
      policies_.back().spec = spec;
    }
    fmt::print(stderr, "bench {}: {} items, {} nodes ({:.3g} cores), {} policies x {} runs{}\n",
               loaded_.job.name, loaded_.job.workload.items, loaded_.cluster.nodes.size(), cores_,
               specs.size(), flags_.repeat,
               sequences_ > 1 ? fmt::format(" x {} sequences", sequences_) : "");
    for (int r = 0; r < flags_.repeat * sequences_; ++r) {
      if (r % flags_.repeat == 0) {
        // A sequence starts from the fuzzy weights.
        for (auto& policy : policies_) policy.history = {};
      }
      // With --history each sequence ends with one run on the exact speeds.
      const bool sequence_ends = flags_.history && r % flags_.repeat == flags_.repeat - 1;
      for (int pass = 0; pass < (sequence_ends ? 2 : 1); ++pass) {
        for (auto& policy : policies_) BALLAST_RETURN_IF_ERROR(RunOnce(policy, r, pass == 1));
      }
    }
    return Status::Ok();
  }

  // Every run of every policy must give the same result.
  bool ResultsAgree() const {
    for (const auto& policy : policies_) {
      for (const auto& result : policy.results) {
        if (result != Reference()) return false;
      }
    }
    return true;
  }

  void PrintJson() const {
    nlohmann::json out = {{"job", loaded_.job.name},           {"repeat", flags_.repeat},
                          {"sequences", sequences_},           {"cores", cores_},
                          {"results_agree", ResultsAgree()},   {"result", Reference()},
                          {"results", nlohmann::json::array()}};
    for (const PolicyRuns& policy : policies_) {
      const auto [messages, moved] = policy.MedianCounts();
      out["results"].push_back({{"policy", policy.spec.display()},
                                {"makespan_s", Median(policy.makespans)},
                                {"ideal_s", Median(policy.ideals)},
                                {"efficiency", Median(policy.efficiencies)},
                                {"makespans_s", policy.makespans},
                                {"messages", messages},
                                {"moved_items", moved}});
      if (flags_.history) {
        out["results"].back()["history_runs"] = HistoryJson(policy.history_runs);
        out["results"].back()["exact_speed_runs"] = HistoryJson(policy.exact_runs);
      }
    }
    fmt::print("{}\n", DumpJson(out, 2));
  }

  void PrintTable() const {
    fmt::print("\n{:<12} {:>12} {:>10} {:>11} {:>10} {:>8}   (medians of {} runs)\n", "POLICY",
               "MAKESPAN_S", "IDEAL_S", "EFFICIENCY", "MESSAGES", "MOVED",
               flags_.repeat * sequences_);
    for (const PolicyRuns& policy : policies_) {
      const auto [messages, moved] = policy.MedianCounts();
      fmt::print("{:<12} {:>12.2f} {:>10.2f} {:>11.3f} {:>10} {:>8}\n", policy.spec.display(),
                 Median(policy.makespans), Median(policy.ideals), Median(policy.efficiencies),
                 messages, moved);
    }
    fmt::print(
        "\nideal = measured single-core work / {:.3g} emulated cores (the physical limit); "
        "efficiency = ideal / makespan, each run's (docs/efficiency.md)\n",
        cores_);
    fmt::print("result: {} ({})\n", Reference(),
               ResultsAgree() ? "identical in every run" : "RUNS DISAGREE");
    if (!flags_.history) return;
    std::vector<std::string> names;
    std::vector<std::vector<HistoryRun>> runs, exact_runs;
    for (const PolicyRuns& policy : policies_) {
      names.push_back(policy.spec.display());
      runs.push_back(policy.history_runs);
      exact_runs.push_back(policy.exact_runs);
    }
    PrintHistoryRuns(names, runs, exact_runs, sequences_);
  }

 private:
  const std::string& Reference() const { return policies_.front().results.front(); }

  // The priors of an --history run: the speeds learned so far, or with
  // `exact` the emulated nodes' own speeds at full credibility: what perfect
  // history would give, the reference the learning is measured against.
  std::vector<fuzzy::NodePrior> Priors(const PolicyRuns& policy, bool exact) const {
    std::vector<fuzzy::NodePrior> priors =
        RunPriors(weights_, policy.history, loaded_.history_key, 0);
    if (exact) {
      for (size_t i = 0; i < priors.size(); ++i) {
        priors[i].value = loaded_.cluster.nodes[i].speed;
        priors[i].credibility = 1;
        priors[i].source = fuzzy::PriorSource::kHistory;
      }
    }
    return priors;
  }

  // Run `r` of a policy (with `exact`: the sequence's run on the exact speeds).
  Status RunOnce(PolicyRuns& policy, int r, bool exact) {
    const int sequence = r / flags_.repeat;
    job::JobSpec job = loaded_.job;
    job.policy = policy.spec;
    LocalRunOptions options{
        job, loaded_.cluster, loaded_.profile, flags_.worker, !flags_.no_cgroups, "", nullptr};
    std::vector<fuzzy::NodePrior> priors;
    if (flags_.history) {
      priors = Priors(policy, exact);
      for (const fuzzy::NodePrior& prior : priors) {
        options.priors.push_back({prior.node, prior.value, prior.credibility});
      }
    }
    BALLAST_ASSIGN_OR_RETURN(const LocalRunOutcome outcome, RunLocal(options));
    policy.results.push_back(outcome.view.result.Summary());
    if (flags_.history) {
      const HistoryRun run = HistoryRunOf(sequence, outcome, priors, exact);
      if (exact) {
        policy.exact_runs.push_back(run);
        fmt::print(stderr, "  {:<10} sequence {} on the exact speeds: efficiency {:.3f}\n",
                   policy.spec.display(), sequence + 1, outcome.efficiency);
        return Status::Ok();  // a reference, not one of the policy's runs
      }
      policy.history = Learn(policy.history, loaded_.history_key, outcome, 0);
      policy.history_runs.push_back(run);
    }
    fmt::print(stderr, "  {:<10} {}run {}: makespan {:.2f} s, efficiency {:.3f}\n",
               policy.spec.display(),
               sequences_ > 1 ? fmt::format("sequence {} ", sequence + 1) : "",
               r % flags_.repeat + 1, outcome.makespan_s, outcome.efficiency);
    policy.makespans.push_back(outcome.makespan_s);
    policy.ideals.push_back(outcome.ideal_s);
    policy.efficiencies.push_back(outcome.efficiency);
    policy.counts.push_back(
        {outcome.makespan_s, {outcome.view.messages, outcome.view.policy.moved_items}});
    return Status::Ok();
  }

  HistoryRun HistoryRunOf(int sequence, const LocalRunOutcome& outcome,
                          const std::vector<fuzzy::NodePrior>& priors, bool exact) const {
    std::vector<double> values, speeds;
    for (size_t i = 0; i < priors.size(); ++i) {
      values.push_back(priors[i].value);
      speeds.push_back(loaded_.cluster.nodes[i].speed);
    }
    return {sequence,
            outcome.makespan_s,
            outcome.efficiency,
            outcome.view.messages,
            outcome.view.policy.moved_items,
            fuzzy::SplitError(values, speeds),
            exact ? "exact speeds" : SourceCounts(priors)};
  }

  const BenchFlags& flags_;
  const LoadedJob loaded_;
  const fuzzy::WeightResult weights_;
  const int sequences_;
  double cores_ = 0;
  std::vector<PolicyRuns> policies_;
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
  // --history: each policy's runs learn from its earlier runs (in memory; the
  // clock stands still, so nothing goes stale).
  auto weights = ClusterWeights(loaded->profile, loaded->cluster);
  if (!weights.ok()) return ReportError(weights.status());
  BenchRun bench(flags, std::move(*loaded), std::move(*weights));
  if (const Status ran = bench.RunAll(specs); !ran.ok()) return ReportError(ran);
  if (flags.output == "json") {
    bench.PrintJson();
  } else {
    bench.PrintTable();
  }
  return bench.ResultsAgree() ? kExitOk : kExitFailure;
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
  CLI::Option* history = bench->add_flag(
      "--history", flags->history,
      "each policy's runs learn from its earlier ones: run 1 starts from the fuzzy "
      "weights, the next from the speeds measured so far (docs/history.md); prints "
      "every run and the later runs against the first; each sequence ends with a run on the "
      "emulated nodes' exact speeds, the reference");
  bench
      ->add_option("--sequences", flags->sequences,
                   "with --history: run the sequence of --repeat runs this many times, each from "
                   "the fuzzy weights, and judge the later runs against the median of the first "
                   "runs (one first run is a single noisy sample)")
      ->check(CLI::Range(1, 50))
      ->needs(history)
      ->capture_default_str();
  bench->callback([flags, exit_code] { *exit_code = Bench(*flags); });
}

}  // namespace ballast::cli
