// churn: jobs made and deleted in waves, the operator's RSS sampled (phases.h).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdlib>
#include <iostream>
#include <set>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "bench/operator_bench/phases.h"

namespace ballast::operator_bench {
namespace {

// What the operator holds at one point of the churn phase.
struct ChurnSample {
  int jobs = 0;  // created, finished and deleted so far
  double seconds = 0, rss_mb = NAN, anon_mb = NAN, file_mb = NAN, threads = NAN, tracked = NAN,
         hosted = NAN;
  size_t series = 0, deleted_series = 0, pods_left = 0;
};

// The growth over the first half of the jobs beside the last half, and the
// last half's slope (least squares): whether the RSS levels off. It does
// when the last half grew by at most a quarter of the first half's growth,
// or by at most 1 MB.
void PrintLevelling(const std::vector<ChurnSample>& samples) {
  if (samples.size() < 3) return;
  const int half_jobs = samples.back().jobs / 2;
  size_t mid = 0;
  for (size_t i = 0; i < samples.size(); ++i) {
    if (std::abs(samples[i].jobs - half_jobs) < std::abs(samples[mid].jobs - half_jobs)) mid = i;
  }
  const ChurnSample& first = samples.front();
  const ChurnSample& middle = samples[mid];
  const ChurnSample& last = samples.back();
  const double first_growth = middle.rss_mb - first.rss_mb;
  const double last_growth = last.rss_mb - middle.rss_mb;
  double sx = 0, sy = 0, sxx = 0, sxy = 0, count = 0;
  for (size_t i = mid; i < samples.size(); ++i) {
    const double x = samples[i].jobs / 100.0;
    sx += x;
    sy += samples[i].rss_mb;
    sxx += x * x;
    sxy += x * samples[i].rss_mb;
    ++count;
  }
  const double slope = (count * sxy - sx * sy) / (count * sxx - sx * sx);
  const bool levels = last_growth <= std::max(1.0, first_growth / 4);
  std::cout << fmt::format(
      "  VmRSS {:.1f} -> {:.1f} MB over jobs 0 -> {} ({:+.1f} MB), {:.1f} -> {:.1f} MB over jobs "
      "{} -> {} ({:+.1f} MB; {:+.2f} MB per 100 jobs, least squares): {}\n",
      first.rss_mb, middle.rss_mb, middle.jobs, first_growth, middle.rss_mb, last.rss_mb,
      middle.jobs, last.jobs, last_growth, slope,
      levels ? "levels off (the last half grew by at most a quarter of the first's, or 1 MB)"
             : "STILL GROWING (the last half grew by more than a quarter of the first's and "
               "1 MB)");
  std::cout << fmt::format(
      "  of it anonymous {:+.1f} MB and {:+.1f} MB, file pages {:+.1f} MB and {:+.1f} MB\n",
      middle.anon_mb - first.anon_mb, last.anon_mb - middle.anon_mb, middle.file_mb - first.file_mb,
      last.file_mb - middle.file_mb);
}

class ChurnPhase {
 public:
  ChurnPhase(Context& context, int nodes)
      : context_(context), flags_(context.flags()), nodes_(nodes) {}

  // Returns 0 when every job Succeeded.
  int Run() {
    const int n = flags_.churn;
    const int wave = std::max(1, flags_.churn_wave);
    const int every = std::max(wave, flags_.churn_every);
    std::cout << fmt::format(
        "== {} jobs in waves of {} (primes < {}, {} worker pods each; each wave created, "
        "finished, deleted, its pods gone; load {}) ==\n"
        "  the operator after every {} jobs, its passes settled: VmRSS (of it anonymous: heap, "
        "stacks; and file pages: the program's and libraries' code as it runs), threads, jobs the "
        "reconciler tracks, jobs at the coordinator, /metrics series (of them of deleted "
        "jobs), pods of deleted jobs left in the cache, seconds since the first Create\n"
        "  {:>6} {:>9} {:>7} {:>7} {:>8} {:>8} {:>12} {:>7} {:>14} {:>10} {:>7}\n",
        n, wave, flags_.small_limit, nodes_, LoadAverage(), every, "jobs", "VmRSS MB", "anon",
        "file", "threads", "tracked", "coordinator", "series", "deleted jobs'", "pods left", "s");
    const auto start = Clock::now();
    std::vector<ChurnSample> samples = {TakeSample(0, start)};
    int done = 0, succeeded = 0;
    while (done < n) {
      std::vector<std::string> names;
      for (int i = 0; i < wave && done + i < n; ++i) {
        names.push_back(fmt::format("churn-{}", done + i));
      }
      succeeded += RunWave(names);
      const int before = done;
      done += static_cast<int>(names.size());
      if (done / every != before / every || done == n) samples.push_back(TakeSample(done, start));
    }
    PrintLevelling(samples);
    std::cout << fmt::format("  {} of {} Succeeded; load {} at the end\n", succeeded, n,
                             LoadAverage());
    return succeeded == n ? 0 : 1;
  }

 private:
  // Pods in the cache of the churn jobs (their names start with "churn-").
  size_t PodsLeft() const {
    size_t left = 0;
    for (const auto& pod : context_.pods().List()) {
      left += pod->at("metadata").at("labels").value(kJobLabel, "").rfind("churn-", 0) == 0;
    }
    return left;
  }

  // The operator once its passes have settled, printed as a row of the table.
  ChurnSample TakeSample(int jobs, Clock::time_point start) {
    const auto metrics = context_.SettledMetrics();
    ChurnSample sample;
    sample.jobs = jobs;
    sample.seconds = Ms(Clock::now() - start) / 1000;
    sample.rss_mb = ProcStatusMb(flags_.operator_pid, "VmRSS:");
    sample.anon_mb = ProcStatusMb(flags_.operator_pid, "RssAnon:");
    sample.file_mb = ProcStatusMb(flags_.operator_pid, "RssFile:");
    sample.threads = ProcStatus(flags_.operator_pid, "Threads:");
    sample.tracked = Metric(metrics, "ballast_operator_jobs");
    sample.hosted = Metric(metrics, "ballast_coordinator_jobs");
    sample.series = metrics.size();
    for (const auto& [key, value] : metrics) {
      sample.deleted_series += key.find("weightedjob=\"churn-") != std::string::npos;
    }
    sample.pods_left = PodsLeft();
    std::cout << fmt::format(
                     "  {:>6} {:>9.1f} {:>7.1f} {:>7.1f} {:>8.0f} {:>8.0f} {:>12.0f} {:>7} {:>14} "
                     "{:>10} {:>7.0f}\n",
                     sample.jobs, sample.rss_mb, sample.anon_mb, sample.file_mb, sample.threads,
                     sample.tracked, sample.hosted, sample.series, sample.deleted_series,
                     sample.pods_left, sample.seconds)
              << std::flush;
    std::this_thread::sleep_for(std::chrono::duration<double>(flags_.churn_pause_s));
    return sample;
  }

  // Whether every cached pod of the jobs `wave` has finished (Succeeded or
  // Failed), and whether none is left.
  std::pair<bool, bool> WavePods(const std::set<std::string>& wave) const {
    bool finished = true, none = true;
    for (const auto& pod : context_.pods().List()) {
      if (!wave.count(pod->at("metadata").at("labels").value(kJobLabel, ""))) continue;
      none = false;
      const std::string phase = pod->value("/status/phase"_json_pointer, "");
      finished &= phase == "Succeeded" || phase == "Failed";
    }
    return {finished, none};
  }

  // Creates `names`, waits until each is finished (at most 300 s) and its
  // worker pods too (at most 30 s), deletes them, and waits (at most 30 s)
  // until their pods are gone. Returns how many Succeeded. The pods' exit is
  // awaited because the node agent can leave a pod deleted while its final
  // status is on its way Terminating for good (see Context::DeleteJobs), and
  // this phase would pile those up in the operator's pod cache.
  int RunWave(const std::vector<std::string>& names) {
    std::vector<std::string> created;
    for (const auto& name : names) {
      if (context_.CreatePrimesJob(name, flags_.small_limit, "adaptive", "")) {
        created.push_back(name);
      }
    }
    if (!context_.seen().WaitFinished(created, std::chrono::seconds(300))) {
      std::cerr << "operator_bench: a job of " << created.front() << ".. not finished in 300 s\n";
    }
    const std::set<std::string> wave(created.begin(), created.end());
    const auto exited_by = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < exited_by && !WavePods(wave).first) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    int succeeded = 0;
    for (const auto& name : created) {
      auto job = context_.Job(name);
      succeeded += job && job->value("/status/phase"_json_pointer, "") == "Succeeded";
      (void)context_.client().Delete(kJobs.In(flags_.ns).Named(name));
    }
    const auto gone_by = Clock::now() + std::chrono::seconds(30);
    while (Clock::now() < gone_by && !WavePods(wave).second) {
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    return succeeded;
  }

  Context& context_;
  const Flags& flags_;
  const int nodes_;
};

}  // namespace

int Churn(Context& context, int nodes) { return ChurnPhase(context, nodes).Run(); }

}  // namespace ballast::operator_bench
