// wide: one adaptive job on N light nodes (phases.h).
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cmath>
#include <iostream>
#include <optional>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "bench/operator_bench/phases.h"
#include "core/common/metric_labels.h"
#include "core/common/utf8.h"
#include "core/workload/result.h"
#include "operator/api/weighted_job.h"

namespace ballast::operator_bench {
namespace {

constexpr char kWideJob[] = "wide";
// Seconds from the apply until half, 90 %, 99 % and all of the workers had
// reported are printed; a worker whose pod starts after the work ran out may
// never report, so the largest count is printed too.
constexpr std::array<double, 4> kShares = {0.5, 0.9, 0.99, 1.0};

// Nodes of job `name` in `ns` whose worker has reported to the coordinator,
// from the operator's /metrics (ballast_node_reports_total{weightedjob,
// job_namespace,workload,node}).
int NodesReporting(const Metrics& metrics, const std::string& ns, const std::string& name) {
  const std::string prefix = "ballast_node_reports_total{";
  const std::string job = fmt::format("{}=\"{}\"", kWeightedJobLabel, name);
  const std::string in = fmt::format("{}=\"{}\"", kJobNamespaceLabel, ns);
  int count = 0;
  for (auto it = metrics.lower_bound(prefix); it != metrics.end(); ++it) {
    if (it->first.rfind(prefix, 0) != 0) break;
    if (it->first.find(job) != std::string::npos && it->first.find(in) != std::string::npos &&
        it->second > 0) {
      ++count;
    }
  }
  return count;
}

// Primes below `limit`, by a sieve: what the job's result must say.
uint64_t PrimesBelow(uint64_t limit) {
  std::vector<bool> composite(limit, false);
  uint64_t count = 0;
  for (uint64_t n = 2; n < limit; ++n) {
    if (composite[n]) continue;
    ++count;
    for (uint64_t m = n * n; m < limit; m += n) composite[m] = true;
  }
  return count;
}

class WidePhase {
 public:
  explicit WidePhase(Context& context)
      : context_(context), flags_(context.flags()), n_(context.flags().wide) {}

  int Run() {
    if (!WaitForNodes()) return 1;
    std::cout << fmt::format(
                     "== one job on {} nodes (adaptive, primes < {} by trial division; load {}) "
                     "==\n",
                     n_, flags_.wide_limit, LoadAverage())
              << std::flush;
    const auto before = context_.SettledMetrics();
    Sampler sampler(context_);
    const auto start = Clock::now();
    if (!context_.CreatePrimesJob(kWideJob, flags_.wide_limit, "adaptive", "wide")) return 1;
    const auto applied = Clock::now();
    Watch(applied);
    const auto finished = context_.seen().Finished(kWideJob);
    const auto pods =
        context_.seen().AllPods(kWideJob, static_cast<size_t>(n_), Clock::duration::zero());
    const auto job = context_.Job(kWideJob);
    const json status = job ? job->value("status", json::object()) : json::object();
    status_bytes_ = std::max(status_bytes_, DumpJson(status).size());
    const auto after = context_.SettledMetrics();
    sampler.Stop(after);
    const double peak_rss = ProcStatusMb(flags_.operator_pid, "VmHWM:");
    PrintOutcome(status, finished.has_value(), Ms(applied - start));
    const double to_pods = pods ? Ms(*pods - applied) / 1000 : NAN;
    const double wall_s = finished ? Ms(*finished - applied) / 1000 : NAN;
    PrintTimes(to_pods, wall_s);
    PrintOperator(before, after, sampler, peak_rss);
    context_.DeleteJobs({kWideJob});
    return finished ? 0 : 1;
  }

 private:
  // Waits (at most 10 minutes) until the N wide nodes are Ready; false
  // (said on stderr) when they are not.
  bool WaitForNodes() {
    const auto ready_by = Clock::now() + std::chrono::minutes(10);
    int ready = 0;
    while ((ready = context_.EligibleNodes("wide")) < n_ && Clock::now() < ready_by) {
      std::this_thread::sleep_for(std::chrono::seconds(2));
    }
    if (ready < n_) {
      std::cerr << fmt::format("operator_bench: {} of {} wide nodes Ready after 10 min\n", ready,
                               n_);
      return false;
    }
    return true;
  }

  // Every second until the job has finished (at most 20 minutes): the
  // workers reporting, until all have, and the status's size.
  void Watch(Clock::time_point applied) {
    const auto deadline = applied + std::chrono::minutes(20);
    while (!context_.seen().Finished(kWideJob) && Clock::now() < deadline) {
      if (!to_reporting_.back()) {
        reporting_ =
            std::max(reporting_, NodesReporting(Scrape(flags_.metrics_url), flags_.ns, kWideJob));
        for (size_t i = 0; i < kShares.size(); ++i) {
          if (!to_reporting_[i] && reporting_ >= std::ceil(kShares[i] * n_)) {
            to_reporting_[i] = Ms(Clock::now() - applied) / 1000;
          }
        }
      }
      if (auto job = context_.Job(kWideJob)) {
        const json status = job->value("status", json::object());
        status_bytes_ = std::max(status_bytes_, DumpJson(status).size());
        rows_ = std::max(rows_, status.value("nodes", json::array()).size());
        if (status.contains("nodeSummary")) summary_ = status["nodeSummary"];
      }
      std::this_thread::sleep_for(std::chrono::seconds(1));
    }
  }

  void PrintOutcome(const json& status_json, bool finished, double create_ms) const {
    // By the one reader of a WeightedJob's status, and of a primes result.
    const StatusOr<api::WeightedJobStatus> read = api::StatusFromJson(status_json);
    const api::WeightedJobStatus status = read.ok() ? *read : api::WeightedJobStatus{};
    std::optional<uint64_t> count;
    if (status.result) {
      const auto result =
          workload::Result::FromJson(workload::WorkloadKind::kPrimes, *status.result);
      if (result.ok()) count = result->primes().count;
    }
    const uint64_t expected = PrimesBelow(flags_.wide_limit);
    std::cout << fmt::format(
        "  {} ({}), {} of {} items; result {} primes ({}: {} below {}); Create took {:.0f} ms\n",
        !read.ok()     ? read.status().message()
        : status.phase ? api::JobPhaseName(*status.phase)
                       : "no phase",
        finished ? "finished" : "gave up after 20 min", status.completed_items.value_or(0),
        status.items.value_or(0), count ? std::to_string(*count) : "none",
        count == expected ? "exact" : "WRONG", expected, flags_.wide_limit, create_ms);
  }

  // Seconds from the apply to every pod seen, to each share of the workers
  // reporting, and to Succeeded.
  void PrintTimes(double to_pods, double wall_s) const {
    std::string reported;
    for (size_t i = 0; i < kShares.size(); ++i) {
      reported += fmt::format("{}{:g} % {} s", i == 0 ? "" : ", ", kShares[i] * 100,
                              Fixed(to_reporting_[i].value_or(NAN), 1));
    }
    std::cout << fmt::format(
        "  apply -> all {} worker pods seen {} s; -> workers reporting: {} ({} of {} at most); "
        "-> Succeeded {} s\n",
        n_, Fixed(to_pods, 1), reported, reporting_, n_, Fixed(wall_s, 1));
    std::cout << fmt::format(
        "  status: at most {:.1f} KiB as written (target <= 256 KiB; etcd's limit 1.5 MiB), {} "
        "rows "
        "of status.nodes; nodeSummary {}\n",
        static_cast<double>(status_bytes_) / 1024, rows_, DumpJson(summary_));
  }

  void PrintOperator(const Metrics& before, const Metrics& after, const Sampler& sampler,
                     double peak_rss) const {
    std::cout << fmt::format(
        "  operator peak RSS {:.1f} MB (VmHWM; {:.1f} MB idle at the start, {:.1f} MB the highest "
        "sampled); reconcile p99 {:.1f} ms (the summary's worst 60 s window; p50 {} ms at the "
        "end)\n",
        peak_rss, context_.rss_idle(), sampler.peak_rss, sampler.worst_p99 * 1000,
        Fixed(Quantile(after, "0.5") * 1000, 1));
    std::string by_verb;
    double requests = 0;
    std::tie(requests, by_verb) = RequestsPerJob(before, after, 1);
    std::cout << fmt::format(
        "  API requests {:.0f} ({}); the API server's create round trip meanwhile p50 {} ms, p90 "
        "{} "
        "ms\n",
        requests, by_verb, Fixed(Percentile(sampler.api_rtt, 0.5), 0),
        Fixed(Percentile(sampler.api_rtt, 0.9), 0));
  }

  Context& context_;
  const Flags& flags_;
  const int n_;
  std::array<std::optional<double>, kShares.size()> to_reporting_;  // s, by kShares
  int reporting_ = 0;                   // the most workers seen reporting
  size_t status_bytes_ = 0, rows_ = 0;  // the status's largest size, and of status.nodes
  json summary_;                        // status.nodeSummary as last seen
};

}  // namespace

int Wide(Context& context) { return WidePhase(context).Run(); }

}  // namespace ballast::operator_bench
