// ballast_policy_bench: what one balancing decision costs — one call of
// Policy::OnReport (and the TakeSignals a driver makes after it) — for every
// policy, in steady state, at 100, 1,000 and 10,000 workers.
//
// Target (the issue): a decision costs <= 5 us at 1,000 workers. Every row
// prints the measured time per decision ("Time", and the counter
// per_decision) beside the counter target_us = 5. It prints figures; it never
// fails on speed.
//
// Two regimes, each a benchmark per policy:
//   progress/<policy>  a computing worker reports progress mid-lease: a
//                      completed range and an advancing position (adaptive
//                      rebalances here). One report per iteration.
//   idle/<policy>      a worker reports its lease finished and asks for work:
//                      a chunk from the pool (selfsched, guided, factoring,
//                      mms after its barrier), a pool hand-out or a tail steal
//                      (adaptive; the pool is empty in steady state, so it
//                      steals). equal and weighted never hand out from the pool
//                      unless a worker is lost; their one decision for an idle
//                      worker is its reserved share, which is what they time.
//
// The job has 10^9 uniform items so that it never finishes. Workers come in
// three speed classes (Pi 3B, 4B, 5: 0.1, 0.5, 1.0) and report every second
// of compute in round-robin; the policy is told speeds wrong by up to ±30 %
// (seeded), so adaptive has something to rebalance. The state is built by
// driving the policy outside the timed loop (Start, first leases, one
// progress report per worker) and kept across Google Benchmark's repeated
// calls; timing pauses only to renew a lease that ran out or to rebuild an
// exhausted regime (pool empty, nothing worth stealing; for equal and
// weighted after every P hand-outs) — counters renewals and rebuilds. A
// warm-up slower than kSetupBudgetSeconds is reported as an error row that
// says how far it got, instead of stalling the run.
//
//   build-release/ballast_policy_bench [--benchmark_filter=adaptive]
#include <benchmark/benchmark.h>
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/balance/policy.h"
#include "core/balance/policy_options.h"

namespace ballast::balance {
namespace {

constexpr uint64_t kItems = 1'000'000'000;
constexpr double kReportSeconds = 1.0;  // seconds of compute between progress reports
constexpr double kTargetUs = 5;
constexpr uint64_t kSeed = 20261120;
constexpr double kPriorError = 0.3;                  // priors are wrong by up to ±30 %
constexpr double kSpeedClasses[] = {0.1, 0.5, 1.0};  // Pi 3B, Pi 4B, Pi 5
constexpr double kItemsPerSecondAtSpeed1 = 10;       // so a report finishes 1, 5 or 10 items
// Building a steady state may take at most this long (it is untimed, but a
// policy whose warm-up is too slow would stall the whole run).
constexpr double kSetupBudgetSeconds = 30;

using Clock = std::chrono::steady_clock;

double Seconds(Clock::duration d) { return std::chrono::duration<double>(d).count(); }

// What the benchmark driver knows of one simulated worker.
struct SimWorker {
  uint64_t per_report = 1;  // items finished per progress report
  Range lease;              // empty when it has none
  uint64_t position = 0;    // first unfinished item of the lease
};

// Drives one policy the way the simulator does, but with the cheapest possible
// bookkeeping of its own so that the timed figure is the policy's.
class Driver {
 public:
  Driver(const std::string& policy_name, size_t workers) : workers_(workers) {
    auto spec = PolicyFromJson(policy_name, "policy");
    if (!spec.ok()) {
      fmt::print(stderr, "{}\n", spec.status().message());
      std::abort();
    }
    policy_ = MakePolicy(*spec);
    // Only adaptive cuts the lease of a worker other than the one reporting
    // (a tail steal); then the driver finds the victim by its lease end.
    track_victims_ = policy_name == "adaptive";
    std::mt19937_64 random(kSeed);
    std::uniform_real_distribution<double> noise(1 - kPriorError, 1 + kPriorError);
    JobInfo job;
    job.items = kItems;
    job.cost = CostShape::kUniform;
    for (size_t i = 0; i < workers; ++i) {
      const double speed = kSpeedClasses[i % 3];
      workers_[i].per_report =
          static_cast<uint64_t>(std::llround(speed * kItemsPerSecondAtSpeed1 * kReportSeconds));
      job.workers.push_back({fmt::format("node-{}", i), speed * noise(random)});
    }
    policy_->Start(job, now_);
    report_.completed.reserve(1);
  }

  size_t size() const { return workers_.size(); }
  const Policy& policy() const { return *policy_; }

  // The next worker in round-robin order.
  WorkerId Next() {
    const WorkerId id = next_;
    next_ = next_ + 1 == workers_.size() ? 0 : next_ + 1;
    return id;
  }

  // True when the worker can report progress without finishing its lease.
  bool CanProgress(WorkerId id) const {
    const SimWorker& w = workers_[id];
    return !w.lease.empty() && w.position + w.per_report < w.lease.end;
  }

  // A progress report mid-lease; requires CanProgress(id).
  Reply::Kind Progress(WorkerId id) {
    SimWorker& w = workers_[id];
    report_.worker = id;
    report_.now = Tick();
    report_.completed.assign(1, Range{w.position, w.position + w.per_report});
    report_.calc_seconds = kReportSeconds;
    report_.position = w.position + w.per_report;
    report_.idle = false;
    w.position = report_.position;
    return Send(id);
  }

  // The worker finishes what is left of its lease (if any) and asks for work.
  Reply::Kind Idle(WorkerId id) {
    SimWorker& w = workers_[id];
    report_.worker = id;
    report_.now = Tick();
    report_.completed.clear();
    report_.calc_seconds = 0;
    if (!w.lease.empty() && w.position < w.lease.end) {
      report_.completed.push_back({w.position, w.lease.end});
      report_.calc_seconds = static_cast<double>(w.lease.end - w.position) /
                             static_cast<double>(w.per_report) * kReportSeconds;
    }
    report_.position = w.lease.end;
    report_.idle = true;
    w.position = w.lease.end;
    return Send(id);
  }

  // Gives every worker its first lease.
  void FirstLeases() {
    for (WorkerId id = 0; id < workers_.size(); ++id) Idle(id);
  }

  // One progress report from every worker that can make one (adaptive then
  // has a measured speed for each). Returns false, with `error` saying how far
  // it got, when it takes longer than `budget_s`.
  bool ProgressRound(double budget_s, std::string* error) {
    const auto start = Clock::now();
    size_t reported = 0;
    for (WorkerId id = 0; id < workers_.size(); ++id) {
      if (!CanProgress(id)) continue;
      const auto before = Clock::now();
      Progress(id);
      ++reported;
      const auto after = Clock::now();
      if (Seconds(after - start) > budget_s && id + 1 < workers_.size()) {
        *error = fmt::format(
            "setup over its {:.0f} s budget: the first progress round (one report per worker, to "
            "reach steady state) covered {} of {} workers in {:.1f} s; the last report took "
            "{:.1f} ms",
            budget_s, reported, workers_.size(), Seconds(after - start),
            1e3 * Seconds(after - before));
        return false;
      }
    }
    return true;
  }

 private:
  double Tick() {
    now_ += kReportSeconds / static_cast<double>(workers_.size());
    return now_;
  }

  Reply::Kind Send(WorkerId id) {
    const Reply reply = policy_->OnReport(report_);
    signals_ = policy_->TakeSignals();  // a driver delivers them; here they are dropped
    Apply(id, reply);
    return reply.kind;
  }

  void Apply(WorkerId id, const Reply& reply) {
    SimWorker& w = workers_[id];
    switch (reply.kind) {
      case Reply::Kind::kLease:
        if (track_victims_) ShrinkVictim(id, reply.lease);
        SetLease(id, reply.lease);
        w.position = reply.lease.begin;
        break;
      case Reply::Kind::kContinue:
        if (reply.lease.end < w.lease.end) SetLease(id, {w.lease.begin, reply.lease.end});
        break;
      case Reply::Kind::kWait:
      case Reply::Kind::kDone:
        SetLease(id, {});
        break;
    }
  }

  void SetLease(WorkerId id, Range lease) {
    SimWorker& w = workers_[id];
    if (track_victims_) {
      if (!w.lease.empty()) by_end_.erase(w.lease.end);
      if (!lease.empty()) by_end_[lease.end] = id;
    }
    w.lease = lease;
  }

  // A stolen range is the far end of the victim's lease: the victim learns
  // its new end (here at once; the policy tells it with its next reply).
  void ShrinkVictim(WorkerId thief, Range stolen) {
    auto it = by_end_.find(stolen.end);
    if (it == by_end_.end() || it->second == thief) return;
    const WorkerId victim = it->second;
    by_end_.erase(it);
    workers_[victim].lease.end = stolen.begin;
    if (!workers_[victim].lease.empty()) by_end_[stolen.begin] = victim;
  }

  std::unique_ptr<Policy> policy_;
  std::vector<SimWorker> workers_;
  Report report_;
  std::vector<WorkerId> signals_;
  std::unordered_map<uint64_t, WorkerId> by_end_;  // lease end -> worker (adaptive)
  bool track_victims_ = false;
  double now_ = 0;
  WorkerId next_ = 0;
};

void SetDecisionCounters(benchmark::State& state, uint64_t decisions) {
  state.SetItemsProcessed(static_cast<int64_t>(decisions));
  state.counters["per_decision"] = benchmark::Counter(
      static_cast<double>(decisions), benchmark::Counter::kIsRate | benchmark::Counter::kInvert);
  state.counters["target_us"] = kTargetUs;
}

enum class Regime { kProgress, kIdle };

// Static policies decide once per idle worker: its reserved share.
bool DecidesOnlyReserve(const std::string& policy) {
  return policy == "equal" || policy == "weighted";
}

// Builds the steady state of `regime`; nullptr, with `error` set, when that
// takes longer than the setup budget.
std::unique_ptr<Driver> Build(const std::string& policy, size_t workers, Regime regime,
                              std::string* error) {
  auto driver = std::make_unique<Driver>(policy, workers);
  if (regime == Regime::kIdle && DecidesOnlyReserve(policy)) return driver;
  driver->FirstLeases();
  if (!driver->ProgressRound(kSetupBudgetSeconds, error)) return nullptr;
  if (regime == Regime::kIdle && policy == "mms") {
    // Reach the master-slave phase: the first worker to finish its share
    // stops everyone; each stops at its next report; then chunks are handed
    // out from the pool.
    driver->Idle(0);
    for (WorkerId id = 1; id < workers; ++id) {
      if (driver->CanProgress(id)) driver->Progress(id);
    }
  }
  return driver;
}

// Google Benchmark calls a benchmark function several times (to size the
// iteration count); the state it built is kept between calls, so a slow
// warm-up is paid once. A failed build is remembered too.
struct CacheEntry {
  std::unique_ptr<Driver> driver;
  std::string error;
  uint64_t decisions = 0;  // idle decisions since the state was built
};

CacheEntry& Cached(const std::string& policy, size_t workers, Regime regime) {
  static std::map<std::string, CacheEntry> cache;
  const std::string key =
      fmt::format("{}/{}/{}", regime == Regime::kProgress ? "progress" : "idle", policy, workers);
  auto [it, fresh] = cache.try_emplace(key);
  if (fresh) it->second.driver = Build(policy, workers, regime, &it->second.error);
  return it->second;
}

// Progress reports mid-lease, round-robin over all workers.
void BM_Progress(benchmark::State& state, const std::string& policy) {
  const auto workers = static_cast<size_t>(state.range(0));
  CacheEntry& entry = Cached(policy, workers, Regime::kProgress);
  uint64_t renewals = 0;
  uint64_t rebuilds = 0;
  uint64_t rebalances = 0;  // by the drivers replaced during this run
  const uint64_t rebalances_before = entry.driver ? entry.driver->policy().stats().rebalances : 0;
  for (auto _ : state) {
    if (!entry.driver) {
      state.SkipWithError(entry.error.c_str());
      break;
    }
    Driver* driver = entry.driver.get();
    WorkerId id = driver->Next();
    if (!driver->CanProgress(id)) {
      // The worker's lease ran out (or was cut to nothing): it asks for a new
      // one, untimed. When no worker can get one, the state is rebuilt.
      state.PauseTiming();
      for (size_t tries = 0; driver && !driver->CanProgress(id); ++tries) {
        if (tries > 2 * workers) {
          rebalances += driver->policy().stats().rebalances;
          entry.driver = Build(policy, workers, Regime::kProgress, &entry.error);
          driver = entry.driver.get();
          ++rebuilds;
          tries = 0;
          continue;
        }
        ++renewals;
        if (driver->Idle(id) != Reply::Kind::kLease || !driver->CanProgress(id)) {
          id = driver->Next();
        }
      }
      state.ResumeTiming();
      if (!driver) continue;  // the skip is reported at the next iteration
    }
    benchmark::DoNotOptimize(driver->Progress(id));
  }
  SetDecisionCounters(state, state.iterations());
  state.counters["renewals"] = static_cast<double>(renewals);
  state.counters["rebuilds"] = static_cast<double>(rebuilds);
  if (entry.driver) rebalances += entry.driver->policy().stats().rebalances;
  state.counters["rebalances"] = static_cast<double>(rebalances - rebalances_before);
}

// Idle reports: a worker finishes its lease and gets the next one.
void BM_Idle(benchmark::State& state, const std::string& policy) {
  const auto workers = static_cast<size_t>(state.range(0));
  const bool reserve_only = DecidesOnlyReserve(policy);
  CacheEntry& entry = Cached(policy, workers, Regime::kIdle);
  uint64_t rebuilds = 0;
  uint64_t leases = 0;
  uint64_t steals = 0;
  const uint64_t steals_before = entry.driver ? entry.driver->policy().stats().steals : 0;
  for (auto _ : state) {
    if (!entry.driver) {
      state.SkipWithError(entry.error.c_str());
      break;
    }
    const Reply::Kind kind = entry.driver->Idle(entry.driver->Next());
    ++entry.decisions;
    if (kind == Reply::Kind::kLease) ++leases;
    if (kind != Reply::Kind::kLease || (reserve_only && entry.decisions == workers)) {
      // The regime is exhausted (nothing left in the pool or worth stealing;
      // for equal and weighted: every reserved share handed out): rebuild,
      // untimed.
      state.PauseTiming();
      steals += entry.driver->policy().stats().steals;
      entry.driver = Build(policy, workers, Regime::kIdle, &entry.error);
      entry.decisions = 0;
      ++rebuilds;
      state.ResumeTiming();
    }
  }
  if (entry.driver) steals += entry.driver->policy().stats().steals;
  SetDecisionCounters(state, state.iterations());
  state.counters["leases"] = static_cast<double>(leases);
  state.counters["steals"] = static_cast<double>(steals - steals_before);
  state.counters["rebuilds"] = static_cast<double>(rebuilds);
}

using BenchmarkFunction = void (*)(benchmark::State&, const std::string&);

void Register() {
  const std::pair<std::string, BenchmarkFunction> regimes[] = {{"progress/", BM_Progress},
                                                               {"idle/", BM_Idle}};
  for (const auto& [regime, function] : regimes) {
    for (const std::string& policy : PolicyNames()) {
      benchmark::RegisterBenchmark((regime + policy).c_str(), function, policy)
          ->ArgName("workers")
          ->Arg(100)
          ->Arg(1000)
          ->Arg(10000)
          ->Unit(benchmark::kMicrosecond);
    }
  }
}

}  // namespace
}  // namespace ballast::balance

int main(int argc, char** argv) {
  fmt::print(
      "Policy decision cost: one OnReport (+ TakeSignals) in steady state; job of {} items.\n"
      "Target: <= {} us per decision at 1,000 workers (per_decision beside target_us).\n"
      "Priors wrong by up to ±{:.0f} % (seed {}).\n\n",
      ballast::balance::kItems, ballast::balance::kTargetUs, 100 * ballast::balance::kPriorError,
      ballast::balance::kSeed);
  benchmark::Initialize(&argc, argv);
  if (benchmark::ReportUnrecognizedArguments(argc, argv)) return 1;
  ballast::balance::Register();
  benchmark::RunSpecifiedBenchmarks();
  benchmark::Shutdown();
  return 0;
}
