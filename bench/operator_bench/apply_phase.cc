// apply -> pods: jobs applied one at a time (phases.h).
#include <fmt/format.h>

#include <algorithm>
#include <iostream>
#include <string>
#include <vector>

#include "bench/operator_bench/phases.h"
#include "core/common/stats.h"

namespace ballast::operator_bench {
namespace {

class ApplyPhase {
 public:
  ApplyPhase(Context& context, int nodes)
      : context_(context), flags_(context.flags()), nodes_(nodes) {}

  // Runs the phase; returns the p50 of apply -> all pods in ms.
  double Run() {
    std::cout << fmt::format(
        "== apply -> all {} worker pods created ({} jobs applied one at a time, primes < {}; "
        "load {}) ==\n",
        nodes_, flags_.sequential, flags_.small_limit, LoadAverage());
    const auto before = Scrape(flags_.metrics_url);
    const double cpu_before = CpuSeconds(flags_.operator_pid);
    for (int i = 0; i < flags_.sequential; ++i) ApplyOne(i);
    const auto after = context_.SettledMetrics();
    const double cpu = CpuSeconds(flags_.operator_pid) - cpu_before;
    const double p50 = Percentile(total_, 0.5);
    std::cout << fmt::format("  p50 {:6.1f} ms   (target <= 300 ms)\n", p50);
    std::cout << fmt::format("  p90 {:6.1f} ms\n  max {:6.1f} ms   ({} jobs measured)\n",
                             Percentile(total_, 0.9), Percentile(total_, 1.0), total_.size());
    PrintWhereItGoes();
    PrintOperator(before, after, cpu);
    context_.DeleteJobs(names_);
    std::cout << std::endl;
    return p50;
  }

 private:
  // Job `i`: a probe of the API server, then the job applied, timed and
  // waited for until it has finished.
  void ApplyOne(int i) {
    context_.Probe(&cm_rtt_, &cm_watch_);
    Observer& seen = context_.seen();
    const std::string name = fmt::format("apply-{}", i);
    const auto start = Clock::now();
    if (!context_.CreatePrimesJob(name, flags_.small_limit, "adaptive", "")) return;
    const auto applied = Clock::now();
    names_.push_back(name);
    const auto last = seen.AllPods(name, nodes_, std::chrono::seconds(30));
    if (!last) {
      std::cerr << name << ": not every pod seen within 30 s\n";
      return;
    }
    const auto secret = seen.Secret(name, Clock::duration::zero());
    const auto first = seen.FirstPod(name);
    total_.push_back(Ms(*last - applied));
    create_rtt_.push_back(Ms(applied - start));
    if (secret) to_secret_.push_back(Ms(*secret - applied));
    if (secret && first) to_first_.push_back(Ms(*first - *secret));
    if (first) to_last_.push_back(Ms(*last - *first));
    // One at a time: the next job is applied once this one has finished.
    if (!seen.WaitFinished({name}, std::chrono::seconds(120))) {
      std::cerr << name << ": not finished within 120 s\n";
    }
  }

  void PrintWhereItGoes() const {
    std::cout << "  where it goes (medians; every step seen from outside, on watches):\n";
    std::cout << fmt::format("    the job's Create call itself               {:6.1f} ms\n",
                             Median(create_rtt_));
    std::cout << fmt::format(
        "    Create returned -> the job's token Secret  {:6.1f} ms   (the job's watch event to "
        "the operator, its queue, the Secret's create, our watch)\n",
        Median(to_secret_));
    std::cout << fmt::format(
        "    token Secret -> the first pod              {:6.1f} ms   (weighing the nodes, "
        "registering the job, a pod create)\n",
        Median(to_first_));
    std::cout << fmt::format("    first pod -> the last ({} pods)             {:6.1f} ms\n", nodes_,
                             Median(to_last_));
    std::cout << fmt::format(
        "    the API server's floor: a ConfigMap's create round trip {:.1f} ms; our watch has it "
        "{:.1f} ms after the create began\n",
        Median(cm_rtt_), Median(cm_watch_));
  }

  // The operator's reconcile passes and CPU per job, between two scrapes.
  void PrintOperator(const Metrics& before, const Metrics& after, double cpu) const {
    const double reconciles = Metric(after, "ballast_operator_reconcile_seconds_count") -
                              Metric(before, "ballast_operator_reconcile_seconds_count");
    const double seconds = Metric(after, "ballast_operator_reconcile_seconds_sum") -
                           Metric(before, "ballast_operator_reconcile_seconds_sum");
    const double jobs = std::max<size_t>(1, names_.size());
    std::cout << fmt::format(
        "    the operator, per job: {:.1f} reconcile passes of {:.1f} ms on average ({} ms of it "
        "the thread's CPU), {:.0f} ms of process CPU\n",
        reconciles / jobs, reconciles > 0 ? seconds / reconciles * 1000 : NAN,
        Fixed(MeanBetween(before, after, kReconcileCpuSeconds) * 1000, 1), cpu / jobs * 1000);
  }

  Context& context_;
  const Flags& flags_;
  const int nodes_;
  std::vector<std::string> names_;  // created
  // ms: apply -> all pods, the Create's round trip, the steps between, the probes
  std::vector<double> total_, create_rtt_, to_secret_, to_first_, to_last_, cm_rtt_, cm_watch_;
};

}  // namespace

void ApplyToPods(Context& context, int nodes, Results* results) {
  results->apply_p50 = ApplyPhase(context, nodes).Run();
}

}  // namespace ballast::operator_bench
