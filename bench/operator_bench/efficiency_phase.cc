// efficiency: one primes job per policy on seed 000's boards (phases.h).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <chrono>
#include <iostream>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench/operator_bench/phases.h"
#include "core/common/stats.h"
#include "core/common/utf8.h"
#include "operator/api/weighted_job.h"

namespace ballast::operator_bench {
namespace {

class EfficiencyPhase {
 public:
  explicit EfficiencyPhase(Context& context) : context_(context), flags_(context.flags()) {}

  void Run(Results* results) {
    std::string pool = flags_.pool;
    const int nodes = pool.empty() ? 0 : context_.EligibleNodes(pool);
    std::string where = fmt::format("nodeSelector {}: {} ({} nodes)", kPoolLabel, pool, nodes);
    if (nodes == 0) {
      where = fmt::format("every node (no node is labelled {}={} yet, so no nodeSelector)",
                          kPoolLabel, pool);
      pool.clear();
    }
    std::cout << fmt::format(
        "== end-to-end efficiency: primes < {} on {}; pod start included; {} runs per policy, "
        "interleaved; load {} ==\n",
        flags_.limit, where, flags_.repeat, LoadAverage());
    std::stringstream list(flags_.policies);
    for (std::string p; std::getline(list, p, ',');) policies_.push_back(p);
    for (int r = 0; r < flags_.repeat; ++r) {
      for (const auto& policy : policies_)
        RunOne(fmt::format("eff-{}-{}", policy, r), policy, pool);
    }
    PrintTable(results);
    PrintPriors();
    std::cout << std::endl;
  }

 private:
  // One job of `policy`, alone on the nodes; its status kept when it Succeeded.
  void RunOne(const std::string& name, const std::string& policy, const std::string& pool) {
    WaitNoWorkersRunning();
    if (!context_.client()
             .Create(kJobs.In(flags_.ns), PrimesJob(name, flags_.limit, policy, pool))
             .ok()) {
      std::cerr << "create " << name << " failed\n";
      return;
    }
    if (!context_.seen().WaitFinished({name}, std::chrono::seconds(300))) {
      std::cerr << name << ": not finished within 300 s\n";
    } else {
      const json status = context_.Job(name)->value("status", json::object());
      // By the one reader of a WeightedJob's status.
      StatusOr<api::WeightedJobStatus> read = api::StatusFromJson(status);
      if (read.ok() && read->Is(api::JobPhase::kSucceeded)) {
        runs_[policy].push_back(std::move(*read));
      } else {
        std::cerr << name << ": " << (read.ok() ? "not Succeeded" : read.status().message()) << " "
                  << DumpJson(status) << "\n";
      }
    }
    context_.DeleteJobs({name});
  }

  // The efficiency jobs need the CPU to themselves: wait (at most 60 s) until
  // no worker pod of an earlier job runs.
  void WaitNoWorkersRunning() const {
    const auto deadline = Clock::now() + std::chrono::seconds(60);
    while (Clock::now() < deadline) {
      bool running = false;
      for (const auto& pod : context_.pods().List()) {
        const std::string phase = pod->value("/status/phase"_json_pointer, "");
        running |= phase == "Running" || phase == "Pending";
      }
      if (!running) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(200));
    }
  }

  // A line per policy: the medians of its runs, and each run's efficiency.
  void PrintTable(Results* results) {
    std::cout << "  policy     efficiency   makespan s   ideal s   makespan / ideal   "
                 "job's estimate   efficiency of each run\n";
    std::set<std::string> references;
    for (const auto& policy : policies_) {
      std::vector<double> eff, makespan, ideal, estimated;
      std::string each;
      for (const api::WeightedJobStatus& status : runs_[policy]) {
        eff.push_back(status.efficiency.value_or(NAN));
        makespan.push_back(status.makespan_seconds.value_or(NAN));
        ideal.push_back(status.ideal_seconds.value_or(NAN));
        estimated.push_back(status.estimated_efficiency.value_or(NAN));
        references.insert(status.efficiency_reference.value_or("?") + ", " +
                          status.limit_bound.value_or("?") + "-bound");
        each += fmt::format("{}{:.3f}", each.empty() ? "" : " ", eff.back());
      }
      results->efficiency.emplace_back(policy, Median(eff));
      std::cout << fmt::format("  {:<10} {:>10} {:>12} {:>9} {:>18} {:>16}   {}\n", policy,
                               Fixed(Median(eff), 3), Fixed(Median(makespan), 2),
                               Fixed(Median(ideal), 2), Fixed(Median(makespan) / Median(ideal), 2),
                               Fixed(Median(estimated), 3), each);
    }
    std::cout << fmt::format(
        "  (medians; efficiency against status.efficiencyReference: {}; the job's estimate "
        "is against the speeds it learned in the run)\n",
        fmt::join(references, "; "));
  }

  // Where a policy's efficiency moved, its priors say why: what the first
  // run started from per node (the history of earlier jobs, or the
  // profile), and how far that was from the speed it measured.
  void PrintPriors() {
    std::cout << "  priors of each policy's first run: node source value (samples) error\n";
    for (const auto& policy : policies_) {
      if (runs_[policy].empty()) continue;
      std::string line;
      const auto& rows = runs_[policy].front().nodes;
      for (const api::NodeRow& row : rows.value_or(std::vector<api::NodeRow>{})) {
        const api::NodePriorRow prior = row.prior.value_or(api::NodePriorRow{"-", NAN, NAN, 0});
        line += fmt::format("  {} {} {} ({}) {}", row.name, prior.source, Fixed(prior.value, 3),
                            Fixed(prior.samples, 0), Fixed(row.prior_error.value_or(NAN), 3));
      }
      std::cout << fmt::format("  {:<10}{}\n", policy, line);
    }
  }

  Context& context_;
  const Flags& flags_;
  std::vector<std::string> policies_;  // in --policies' order
  // policy -> the statuses of its runs
  std::map<std::string, std::vector<api::WeightedJobStatus>> runs_;
};

}  // namespace

void Efficiency(Context& context, Results* results) { EfficiencyPhase(context).Run(results); }

}  // namespace ballast::operator_bench
