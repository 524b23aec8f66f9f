// N at once: small jobs created back to back (phases.h).
#include <fmt/format.h>
#include <malloc.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <tuple>
#include <vector>

#include "bench/operator_bench/phases.h"
#include "core/common/utf8.h"

namespace ballast::operator_bench {
namespace {

// What the operator's pod and job caches hold at the peak: this program
// watches the same objects and keeps them whole (managedFields included),
// the operator without managedFields. Their size as JSON text, and the
// heap the pods take as nlohmann::json both ways.
void PrintCacheSize(const kube::Informer& pods_informer, const kube::Informer& jobs_informer) {
  double text = 0, managed = 0;
  const auto jobs = jobs_informer.List();
  const auto pods = pods_informer.List();
  for (const auto* list : {&pods, &jobs}) {
    for (const auto& object : *list) {
      text += static_cast<double>(object->dump().size());
      managed += static_cast<double>(
          DumpJson(object->at("metadata").value("managedFields", json())).size());
    }
  }
  auto heap_of_pods = [&](bool trimmed) {
    const size_t before = mallinfo2().uordblks;
    std::vector<json> copies;
    for (const auto& pod : pods) {
      copies.push_back(*pod);
      if (trimmed) kube::DropManagedFields(copies.back());
    }
    return static_cast<double>(mallinfo2().uordblks - before);
  };
  const double whole = heap_of_pods(false);
  const double trimmed = heap_of_pods(true);
  std::cout << fmt::format(
      "  the caches then: {} pods and {} jobs, {:.1f} MB as JSON text ({:.0f} % of it "
      "managedFields); the pods take {:.1f} MB of heap whole, {:.1f} MB as the operator keeps "
      "them\n",
      pods.size(), jobs.size(), text / 1e6, text > 0 ? managed / text * 100 : 0.0, whole / 1e6,
      trimmed / 1e6);
}

std::string P50Max(const std::vector<double>& values) {
  return fmt::format("{} / {}", Fixed(Percentile(values, 0.5), 0),
                     Fixed(Percentile(values, 1.0), 0));
}

class AtOncePhase {
 public:
  AtOncePhase(Context& context, int nodes)
      : context_(context), flags_(context.flags()), nodes_(nodes) {}

  void Run(Results* results) {
    std::cout << fmt::format(
        "== {} jobs at once (primes < {}, {} worker pods each, created back to back; load {}) "
        "==\n",
        flags_.concurrent, flags_.small_limit, nodes_, LoadAverage());
    const auto before = context_.SettledMetrics();
    const double rss_before = ProcStatusMb(flags_.operator_pid, "VmRSS:");
    const double cpu_before = CpuSeconds(flags_.operator_pid);
    Sampler sampler(context_);
    const auto start = Clock::now();
    CreateJobs();
    const double create_ms = Ms(Clock::now() - start);
    const bool all = context_.seen().WaitFinished(names_, std::chrono::seconds(600));
    const auto end = Gather(start);
    results->wall_s = Ms(end - start) / 1000;
    // Until the finished jobs' last passes (their workers exiting) are done.
    const auto after = context_.SettledMetrics();
    sampler.Stop(after);
    const double cpu = CpuSeconds(flags_.operator_pid) - cpu_before;
    results->peak_rss = ProcStatusMb(flags_.operator_pid, "VmHWM:");
    results->reconcile_p99_ms = sampler.worst_p99 * 1000;
    std::cout << fmt::format(
        "  {} of {} Succeeded{}, the last {:.1f} s after the first Create (the creates took {:.0f} "
        "ms)\n",
        succeeded_, names_.size(), all ? "" : " (gave up after 600 s)", results->wall_s, create_ms);
    std::cout << fmt::format(
        "  operator peak RSS   {:6.1f} MB   (target <= 60 MB; VmHWM; VmRSS {:.1f} MB idle at the "
        "start, {:.1f} MB before these jobs, {:.1f} MB the highest sampled)\n",
        results->peak_rss, context_.rss_idle(), rss_before, sampler.peak_rss);
    PrintReconcile(before, after, sampler, results);
    PrintRequests(before, after, cpu, sampler, results);
    PrintCacheSize(context_.pods(), context_.jobs());
    context_.DeleteJobs(names_);
    std::cout << std::endl;
  }

 private:
  // The jobs created back to back, each with the time its Create returned.
  void CreateJobs() {
    for (int i = 0; i < flags_.concurrent; ++i) {
      const std::string name = fmt::format("many-{}", i);
      if (!context_.CreatePrimesJob(name, flags_.small_limit, "adaptive", "")) continue;
      names_.push_back(name);
      applied_.push_back(Clock::now());
    }
  }

  // Counts the jobs that Succeeded and collects each job's steps as the
  // watches saw them; returns when the last job was seen finished (`start`
  // when none was).
  Clock::time_point Gather(Clock::time_point start) {
    Observer& seen = context_.seen();
    Clock::time_point end = start;
    for (size_t i = 0; i < names_.size(); ++i) {
      if (auto at = seen.Finished(names_[i])) end = std::max(end, *at);
      auto job = context_.Job(names_[i]);
      if (job && job->value("/status/phase"_json_pointer, "") == "Succeeded") ++succeeded_;
      const auto secret = seen.Secret(names_[i], Clock::duration::zero());
      const auto first = seen.FirstPod(names_[i]);
      const auto last = seen.AllPods(names_[i], nodes_, Clock::duration::zero());
      if (last) to_pods_.push_back(Ms(*last - applied_[i]));
      if (secret) to_secret_.push_back(Ms(*secret - applied_[i]));
      if (secret && first) to_first_.push_back(Ms(*first - *secret));
      if (first && last) to_last_.push_back(Ms(*last - *first));
    }
    return end;
  }

  void PrintReconcile(const Metrics& before, const Metrics& after, const Sampler& sampler,
                      const Results* results) const {
    const double count = Metric(after, "ballast_operator_reconcile_seconds_count") -
                         Metric(before, "ballast_operator_reconcile_seconds_count");
    std::cout << fmt::format(
        "  reconcile p99       {:6.1f} ms   (target <= 100 ms; the summary's worst 60 s window; "
        "at the end p50 {} ms, p90 {} ms; {:.0f} passes, {:.1f} per job, mean {:.1f} ms)\n",
        results->reconcile_p99_ms, Fixed(Quantile(after, "0.5") * 1000, 1),
        Fixed(Quantile(after, "0.9") * 1000, 1), count, count / Jobs(),
        MeanBetween(before, after, kReconcileSeconds) * 1000);
    std::cout << fmt::format(
        "    of it the reconciling thread's CPU: p99 {} ms (worst window), mean {} ms; the rest is "
        "waiting for the API server and for a core\n",
        Fixed(sampler.worst_cpu_p99 * 1000, 1),
        Fixed(MeanBetween(before, after, kReconcileCpuSeconds) * 1000, 1));
  }

  void PrintRequests(const Metrics& before, const Metrics& after, double cpu,
                     const Sampler& sampler, Results* results) const {
    const double jobs = Jobs();
    std::string by_verb;
    std::tie(results->requests_per_job, by_verb) = RequestsPerJob(before, after, jobs);
    std::cout << fmt::format(
        "  API requests / job  {:6.2f}      ({}; {:.0f} in all, from apply to Succeeded and the "
        "workers' exit)\n",
        results->requests_per_job, by_verb, results->requests_per_job * jobs);
    std::cout << fmt::format("  the operator's CPU  {:6.0f} ms / job\n", cpu / jobs * 1000);
    std::cout << fmt::format(
        "  meanwhile, p50 / max in ms: apply -> all pods {} (Create returned -> token Secret {}, "
        "-> first pod {}, -> last pod {}); the API server's create round trip {} (p90 {})\n",
        P50Max(to_pods_), P50Max(to_secret_), P50Max(to_first_), P50Max(to_last_),
        P50Max(sampler.api_rtt), Fixed(Percentile(sampler.api_rtt, 0.9), 0));
  }

  // The jobs created, at least 1: what per-job figures divide by.
  double Jobs() const { return static_cast<double>(std::max<size_t>(1, names_.size())); }

  Context& context_;
  const Flags& flags_;
  const int nodes_;
  std::vector<std::string> names_;          // created
  std::vector<Clock::time_point> applied_;  // when each one's Create returned
  int succeeded_ = 0;
  // ms: apply -> all pods, -> token Secret, Secret -> first pod, first -> last pod
  std::vector<double> to_pods_, to_secret_, to_first_, to_last_;
};

}  // namespace

void Concurrent(Context& context, int nodes, Results* results) {
  AtOncePhase(context, nodes).Run(results);
}

}  // namespace ballast::operator_bench
