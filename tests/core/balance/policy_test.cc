// Tests of the balancing policies (core/balance/policy.h and the seven
// policies behind MakePolicy), driven event by event without the simulator.
//
// The Driver below plays workers against a policy as the protocol says: a
// worker asks with an idle Report, computes its lease in order at its own
// speed, sends progress reports at the cadence its lease asks for (or when
// signalled), applies a shrunk end from a kContinue reply, and waits on kWait
// until TakeSignals names it. While it runs, it checks the protocol:
//   - a granted lease is non-empty, lies in [0, N) and holds no item anyone
//     has already reported finished;
//   - a lease that overlaps what another worker still holds starts at or
//     after that worker's reported position, and that worker's next
//     kContinue carries an end no later than the new lease's begin;
//   - a kContinue never extends a lease nor cuts below the reported position;
//   - stats().completed_items and Finished() agree with the items reported.
// It can kill a worker mid-lease (after it reported part of its lease),
// before it ever asks, or declare a live worker lost; drain one (it hands in
// what it finished and is lost at once, as a cordoned node's worker is); and
// add workers mid-job (OnWorkerJoined), which must get ids in join order.
#include "core/balance/policy.h"

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <iostream>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "core/balance/policy_options.h"
#include "tests/support/policy_spec.h"
#include "tests/support/test_seed.h"

namespace ballast::balance {
namespace {

constexpr uint64_t kNoLimit = std::numeric_limits<uint64_t>::max();

std::unique_ptr<Policy> Make(const std::string& name,
                             std::map<std::string, std::string> options = {}) {
  return MakePolicy(testing_support::PolicyNamed(name, options));
}

JobInfo Job(uint64_t items, const std::vector<double>& priors,
            CostShape cost = CostShape::kUniform) {
  JobInfo job;
  job.items = items;
  job.cost = cost;
  for (size_t i = 0; i < priors.size(); ++i) {
    job.workers.push_back({"w" + std::to_string(i), priors[i]});
  }
  return job;
}

// Job() with every worker's prior at credibility `z` (a history prior).
JobInfo CredibleJob(uint64_t items, const std::vector<double>& priors, double z) {
  JobInfo job = Job(items, priors);
  for (WorkerPrior& worker : job.workers) worker.credibility = z;
  return job;
}

std::string KindName(Reply::Kind kind) {
  switch (kind) {
    case Reply::Kind::kContinue:
      return "kContinue";
    case Reply::Kind::kLease:
      return "kLease";
    case Reply::Kind::kWait:
      return "kWait";
    case Reply::Kind::kDone:
      return "kDone";
  }
  return "?";
}

// ---------------------------------------------------------------------------
// The driver.

enum class Fault {
  kNone,
  kDiesMidLease,      // reports part of a lease, computes one more item, dies
  kDiesBeforeAsking,  // never contacts the coordinator
  kLostButAlive,      // declared lost after a progress report, keeps working
  kDrained,           // hands in what it finished mid-lease, is lost at once, stops
};

std::string FaultName(Fault fault) {
  switch (fault) {
    case Fault::kNone:
      return "none";
    case Fault::kDiesMidLease:
      return "dies mid-lease";
    case Fault::kDiesBeforeAsking:
      return "dies before asking";
    case Fault::kLostButAlive:
      return "lost but alive";
    case Fault::kDrained:
      return "drained";
  }
  return "?";
}

struct DriverConfig {
  uint64_t items = 0;
  CostShape cost = CostShape::kUniform;
  std::vector<double> speeds;  // items per second, one per worker
  std::vector<double> priors;  // what the policy is told
  double dt = 0.25;            // seconds per driver tick
  Fault fault = Fault::kNone;
  WorkerId faulty = 0;
  double detection = 2.0;  // seconds from death to OnWorkerLost
  uint64_t max_ticks = 2'000'000;
  bool inputs_move = false;  // JobInfo::inputs_move: adaptive sets work aside
  // JobInfo::inputs_cross_links (always when inputs_move): adaptive's slow start.
  bool inputs_cross_links = true;
  // Reported calc_seconds = the true compute time times this (a worker that
  // lies about its speed, or whose clock is broken).
  double calc_scale = 1.0;
  // JobInfo::item_costs (the driver's workers still compute an item per
  // 1 / speed seconds: the policy's estimates are off, as with real costs).
  ItemCosts item_costs;
  // Workers that join the job mid-way: at `at` seconds, computing `speed`
  // items per second, the policy told `prior`.
  struct Join {
    double at = 0;
    double speed = 1;
    double prior = 1;
  };
  std::vector<Join> joins;
};

struct DriverResult {
  Status started;  // what Start returned; nothing else is set when it refused
  bool finished = false;
  bool fault_fired = false;
  double makespan = 0;
  std::vector<std::string> violations;
  std::vector<uint32_t> reports_per_item;  // times each item was reported finished
  std::vector<std::vector<Range>> leases;  // every lease granted, per worker
  uint64_t set_aside = 0;                  // ranges named in Reply::prefetch
  size_t joined = 0;                       // workers that joined mid-job
  PolicyStats stats;
};

class Driver {
 public:
  Driver(Policy& policy, const DriverConfig& config) : policy_(policy), config_(config) {
    workers_.resize(config.speeds.size());
    for (size_t i = 0; i < workers_.size(); ++i) workers_[i].speed = config.speeds[i];
    result_.reports_per_item.assign(config.items, 0);
    result_.leases.resize(workers_.size());
  }

  DriverResult Run() {
    JobInfo job = Job(config_.items, config_.priors, config_.cost);
    job.inputs_move = config_.inputs_move;
    job.inputs_cross_links = config_.inputs_move || config_.inputs_cross_links;
    job.item_costs = config_.item_costs;
    result_.started = policy_.Start(job, 0);
    if (!result_.started.ok()) return result_;
    if (config_.fault == Fault::kDiesBeforeAsking) {
      Kill(config_.faulty);
      result_.fault_fired = true;
    }
    for (uint64_t tick = 0; !policy_.Finished(); ++tick) {
      if (tick > config_.max_ticks) {
        Violation("did not finish within the tick budget");
        break;
      }
      if (tick > 0) now_ += config_.dt;
      if (lost_at_ && *lost_at_ <= now_ + 1e-12) {
        lost_at_.reset();
        policy_.OnWorkerLost(config_.faulty, now_);
        if (trace_) std::cout << "t=" << now_ << " w" << config_.faulty << " lost\n";
        DeliverSignals();
      }
      if (std::isfinite(policy_.NextTick()) && policy_.NextTick() <= now_) {
        policy_.OnTick(now_);
        DeliverSignals();
      }
      JoinDue();
      // Vary who goes first from tick to tick.
      for (size_t k = 0; k < workers_.size() && !policy_.Finished(); ++k) {
        Step(static_cast<WorkerId>((tick + k) % workers_.size()));
      }
      if (policy_.Finished()) break;
      if (!AnyoneActive() && !lost_at_ && next_join_ == config_.joins.size()) {
        Violation("stalled: every worker is waiting, done or dead with items unfinished");
        break;
      }
      if (result_.violations.size() > 20) break;
    }
    result_.finished = policy_.Finished();
    result_.makespan = now_;
    result_.stats = policy_.stats();
    if (result_.finished) CheckEveryoneIsToldDone();
    return result_;
  }

 private:
  enum class State { kAsking, kComputing, kWaiting, kDone, kDead };

  struct Worker {
    State state = State::kAsking;
    double speed = 1;
    Range lease;            // as the worker knows it
    uint64_t position = 0;  // first item not computed
    double partial = 0;     // fraction of item `position` computed
    uint64_t reported = 0;  // items of the lease before this were reported
    double report_every = 0;
    double since_report = 0;
    bool signal_pending = false;
    uint64_t must_end_by = kNoLimit;  // another worker was granted items from here
  };

  void Violation(const std::string& what) {
    result_.violations.push_back("t=" + std::to_string(now_) + ": " + what);
  }

  bool AnyoneActive() const {
    for (const Worker& w : workers_) {
      if (w.state == State::kAsking || w.state == State::kComputing) return true;
    }
    return false;
  }

  void Kill(WorkerId id) {
    workers_[id].state = State::kDead;
    lost_at_ = now_ + config_.detection;
  }

  // Adds the workers whose join time has come; each asks at once.
  void JoinDue() {
    while (next_join_ < config_.joins.size() && config_.joins[next_join_].at <= now_ + 1e-12) {
      const DriverConfig::Join& join = config_.joins[next_join_++];
      const std::string name = "joined" + std::to_string(next_join_);
      const StatusOr<WorkerId> id = policy_.OnWorkerJoined({name, join.prior}, now_);
      if (!id.ok()) {
        Violation(name + ": refused: " + id.status().ToString());
        continue;
      }
      if (*id != workers_.size()) {
        Violation(name + ": got id " + std::to_string(*id) + ", expected " +
                  std::to_string(workers_.size()));
      }
      workers_.push_back(Worker{});
      workers_.back().speed = join.speed;
      result_.leases.emplace_back();
      ++result_.joined;
      if (trace_) std::cout << "t=" << now_ << " w" << *id << " joined\n";
    }
  }

  void Step(WorkerId id) {
    Worker& w = workers_[id];
    switch (w.state) {
      case State::kAsking:
        Send(id, Report{id, now_, {}, 0, 0, true, {}});
        return;
      case State::kComputing:
        Compute(id);
        return;
      case State::kWaiting:
      case State::kDone:
      case State::kDead:
        return;
    }
  }

  void Compute(WorkerId id) {
    Worker& w = workers_[id];
    double budget = w.speed * config_.dt;
    bool stop_at_boundary = false;
    while (w.position < w.lease.end && budget > 0) {
      const double need = 1.0 - w.partial;
      if (budget + 1e-12 < need) {
        w.partial += budget;
        break;
      }
      budget -= need;
      w.partial = 0;
      ++w.position;
      if (w.signal_pending) {
        stop_at_boundary = true;  // a signalled worker reports at its next boundary
        break;
      }
      if (config_.fault != Fault::kNone && config_.fault != Fault::kDiesBeforeAsking &&
          id == config_.faulty && !result_.fault_fired && w.position > w.lease.begin &&
          w.position + 2 <= w.lease.end) {
        InjectFault(id);
        return;
      }
    }
    w.since_report += config_.dt;
    if (w.position >= w.lease.end) {
      FinishLease(id);
    } else if (stop_at_boundary || (w.signal_pending && w.partial == 0)) {
      w.signal_pending = false;
      Progress(id);
    } else if (w.report_every > 0 && w.since_report >= w.report_every - 1e-12) {
      Progress(id);
    }
  }

  // The faulty worker is at an item boundary inside its lease with at least
  // two items left.
  void InjectFault(WorkerId id) {
    Worker& w = workers_[id];
    result_.fault_fired = true;
    w.since_report += config_.dt;
    Progress(id);  // reports part of its lease
    if (config_.fault == Fault::kDrained) {
      // Its pod is evicted: it handed in what it finished, and the
      // coordinator takes the rest of its lease back at once.
      w.state = State::kDead;
      policy_.OnWorkerLost(id, now_);
      DeliverSignals();
      return;
    }
    if (config_.fault == Fault::kLostButAlive) {
      policy_.OnWorkerLost(id, now_);
      DeliverSignals();
      return;
    }
    // Computes one more item it will never report, then dies.
    if (w.state == State::kComputing && w.position < w.lease.end) ++w.position;
    Kill(id);
  }

  void FinishLease(WorkerId id) {
    Worker& w = workers_[id];
    Report report{id, now_, {}, w.since_report * config_.calc_scale, w.lease.end, true, {}};
    if (w.lease.end > w.reported) report.completed.push_back({w.reported, w.lease.end});
    Send(id, std::move(report));
  }

  void Progress(WorkerId id) {
    Worker& w = workers_[id];
    Report report{id, now_, {}, w.since_report * config_.calc_scale, w.position, false, {}};
    if (w.position > w.reported) report.completed.push_back({w.reported, w.position});
    Send(id, std::move(report));
  }

  void Send(WorkerId id, Report report) {
    Worker& w = workers_[id];
    for (const Range& range : report.completed) {
      for (uint64_t i = range.begin; i < range.end; ++i) {
        if (result_.reports_per_item[i]++ == 0) ++distinct_;
      }
      w.reported = std::max(w.reported, range.end);
    }
    w.since_report = 0;
    const uint64_t backups = policy_.stats().backups;
    const Reply reply = policy_.OnReport(report);
    const bool backup = policy_.stats().backups > backups;
    if (trace_) {
      std::string done;
      for (const Range& range : report.completed) done += range.ToString();
      std::cout << "t=" << now_ << " w" << id << (report.idle ? " idle" : " progress")
                << " pos=" << report.position << " done=" << done << " -> " << KindName(reply.kind)
                << " " << reply.lease.ToString() << " every " << reply.report_every_s << "\n";
    }
    CheckLedger();
    CheckPrefetch(id, reply);
    Apply(id, report, reply, backup);
    DeliverSignals();
  }

  void CheckLedger() {
    if (policy_.stats().completed_items != distinct_) {
      Violation("stats().completed_items = " + std::to_string(policy_.stats().completed_items) +
                " but " + std::to_string(distinct_) + " distinct items were reported");
    }
    if (policy_.Finished() != (distinct_ == config_.items)) {
      Violation("Finished() = " + std::to_string(policy_.Finished()) + " with " +
                std::to_string(distinct_) + " of " + std::to_string(config_.items) +
                " items reported");
    }
  }

  // Work set aside for a worker comes from the pool: nothing in it is finished.
  void CheckPrefetch(WorkerId id, const Reply& reply) {
    for (const Range& range : reply.prefetch) {
      if (range.empty() || range.end > config_.items) {
        Violation("worker " + std::to_string(id) + ": set aside " + range.ToString());
      }
      for (uint64_t i = range.begin; i < std::min(range.end, config_.items); ++i) {
        if (result_.reports_per_item[i] > 0) {
          Violation("worker " + std::to_string(id) + ": set aside " + range.ToString() +
                    " holding finished item " + std::to_string(i));
          break;
        }
      }
      ++result_.set_aside;
    }
  }

  // `backup`: the lease is a copy of the rest of another worker's lease
  // (adaptive's endgame), which that worker keeps.
  void Apply(WorkerId id, const Report& sent, const Reply& reply, bool backup) {
    Worker& w = workers_[id];
    const std::string who = "worker " + std::to_string(id) + ": ";
    switch (reply.kind) {
      case Reply::Kind::kLease:
        CheckGrant(id, reply.lease, backup);
        result_.leases[id].push_back(reply.lease);
        w.lease = reply.lease;
        w.position = reply.lease.begin;
        w.reported = reply.lease.begin;
        w.partial = 0;
        w.report_every = reply.report_every_s;
        w.since_report = 0;
        w.signal_pending = false;
        w.must_end_by = kNoLimit;
        w.state = reply.lease.empty() ? State::kAsking : State::kComputing;
        return;
      case Reply::Kind::kContinue: {
        if (sent.idle) {
          Violation(who + "kContinue in reply to an idle report");
          w.state = State::kAsking;
          return;
        }
        const bool stop_here = reply.lease.empty() && reply.lease.begin == sent.position;
        if (!stop_here && reply.lease.begin != w.lease.begin) {
          Violation(who + "kContinue " + reply.lease.ToString() + " for lease " +
                    w.lease.ToString());
        }
        if (reply.lease.end > w.lease.end) {
          Violation(who + "kContinue extends " + w.lease.ToString() + " to end " +
                    std::to_string(reply.lease.end));
        }
        if (reply.lease.end < sent.position) {
          Violation(who + "kContinue cuts to " + std::to_string(reply.lease.end) +
                    " below the reported position " + std::to_string(sent.position));
        }
        if (reply.lease.end > std::max(w.must_end_by, sent.position)) {
          Violation(who + "kContinue keeps end " + std::to_string(reply.lease.end) +
                    " though items from " + std::to_string(w.must_end_by) +
                    " were leased to another worker");
        }
        // Never give up the item already begun.
        const uint64_t keep = std::min(w.lease.end, w.position + (w.partial > 0 ? 1 : 0));
        w.lease.end = std::max(std::min(reply.lease.end, w.lease.end), keep);
        w.report_every = reply.report_every_s;
        w.must_end_by = kNoLimit;
        return;
      }
      case Reply::Kind::kWait:
        w.state = State::kWaiting;
        w.lease = {};
        w.must_end_by = kNoLimit;
        return;
      case Reply::Kind::kDone:
        w.state = State::kDone;
        w.lease = {};
        return;
    }
  }

  void CheckGrant(WorkerId id, Range lease, bool backup) {
    const std::string who = "worker " + std::to_string(id) + ": lease " + lease.ToString();
    if (lease.empty()) {
      Violation(who + " is empty");
      return;
    }
    if (lease.end > config_.items) {
      Violation(who + " is outside [0, " + std::to_string(config_.items) + ")");
      return;
    }
    for (uint64_t i = lease.begin; i < lease.end; ++i) {
      if (result_.reports_per_item[i] > 0) {
        Violation(who + " holds item " + std::to_string(i) + ", already reported finished");
        break;
      }
    }
    for (WorkerId other = 0; other < workers_.size(); ++other) {
      Worker& o = workers_[other];
      if (other == id || o.state != State::kComputing) continue;
      const uint64_t lo = std::max(lease.begin, o.reported);
      const uint64_t hi = std::min(lease.end, o.lease.end);
      if (std::max(lease.begin, o.lease.begin) >= hi) continue;  // no overlap
      if (lease.begin < o.reported) {
        Violation(who + " overlaps what worker " + std::to_string(other) +
                  " reported of its lease " + o.lease.ToString());
      }
      if (backup) {
        // A copy of the other's rest: it keeps its lease, and the copy
        // reaches no further than that lease does.
        if (lease.end > o.lease.end) {
          Violation(who + " is a backup reaching past worker " + std::to_string(other) +
                    "'s lease " + o.lease.ToString());
        }
        continue;
      }
      if (lo < hi) o.must_end_by = std::min(o.must_end_by, lease.begin);
    }
  }

  void DeliverSignals() {
    for (WorkerId id : policy_.TakeSignals()) {
      if (id >= workers_.size()) {
        Violation("signal for unknown worker " + std::to_string(id));
        continue;
      }
      Worker& w = workers_[id];
      if (w.state == State::kWaiting) {
        w.state = State::kAsking;
      } else if (w.state == State::kComputing) {
        w.signal_pending = true;
      }
    }
  }

  // Once the job is finished, every live worker's next report is answered kDone.
  void CheckEveryoneIsToldDone() {
    for (WorkerId id = 0; id < workers_.size(); ++id) {
      Worker& w = workers_[id];
      if (w.state == State::kDead || w.state == State::kDone) continue;
      const Reply reply = policy_.OnReport(Report{id, now_, {}, 0, w.position, true, {}});
      if (reply.kind != Reply::Kind::kDone) {
        Violation("worker " + std::to_string(id) + " got " + KindName(reply.kind) +
                  " after the job finished");
      }
    }
  }

  Policy& policy_;
  DriverConfig config_;
  std::vector<Worker> workers_;
  double now_ = 0;
  uint64_t distinct_ = 0;
  std::optional<double> lost_at_;
  size_t next_join_ = 0;  // config_.joins not yet joined
  DriverResult result_;
  // BALLAST_TEST_TRACE=1 prints every message.
  bool trace_ = std::getenv("BALLAST_TEST_TRACE") != nullptr;
};

std::string Describe(const DriverResult& result) {
  std::string out;
  for (size_t i = 0; i < result.violations.size() && i < 8; ++i) {
    out += "\n  " + result.violations[i];
  }
  return out;
}

// Every item reported at least once, accounted exactly once.
void ExpectEveryItemAccounted(const DriverResult& result, uint64_t items) {
  EXPECT_TRUE(result.started.ok()) << result.started.ToString();
  EXPECT_TRUE(result.finished);
  EXPECT_TRUE(result.violations.empty()) << Describe(result);
  EXPECT_EQ(result.stats.completed_items, items);
  uint64_t reports = 0;
  uint64_t missing = 0;
  for (uint32_t count : result.reports_per_item) {
    reports += count;
    missing += count == 0 ? 1 : 0;
  }
  EXPECT_EQ(missing, 0u);
  EXPECT_EQ(result.stats.duplicate_items, reports - (items - missing));
}

const std::vector<double> kSpeeds = {2.0, 1.0, 3.5, 0.6, 1.5, 5.0, 0.9, 2.5};

std::vector<double> Prefix(const std::vector<double>& values, size_t count) {
  return {values.begin(), values.begin() + static_cast<std::ptrdiff_t>(count)};
}

// ---------------------------------------------------------------------------
// Every policy, every job shape: each item finished and accounted once.

struct JobCase {
  uint64_t items;
  size_t workers;
  CostShape cost;
  bool true_priors;  // priors equal to the speeds, else all 1
};

std::vector<JobCase> JobCases() {
  std::vector<JobCase> cases;
  for (uint64_t items : {1ull, 2ull, 3ull, 10ull, 97ull, 1000ull}) {
    for (size_t workers : {1u, 2u, 3u, 5u, 8u}) {
      cases.push_back({items, workers, CostShape::kUniform, true});
      cases.push_back({items, workers, CostShape::kLinear, false});
    }
  }
  cases.push_back({500, 4, CostShape::kSqrt, true});
  return cases;
}

TEST(PolicyTest, EveryPolicyHasItsDocumentedNameAndOrder) {
  EXPECT_EQ(PolicyNames(), (std::vector<std::string>{"equal", "weighted", "selfsched", "guided",
                                                     "factoring", "mms", "adaptive"}));
  for (const std::string& name : PolicyNames()) {
    auto policy = Make(name);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->name(), name);
    EXPECT_EQ(testing_support::PolicyNamed(name).name(), name);
  }
}

// Every policy as the drivers make it, and adaptive once more on a job whose
// inputs move (it then sets work aside for prefetch).
struct Variant {
  std::string policy;
  bool inputs_move = false;
  std::string Name() const { return policy + (inputs_move ? " (inputs move)" : ""); }
};

std::vector<Variant> Variants() {
  std::vector<Variant> variants;
  for (const std::string& name : PolicyNames()) variants.push_back({name, false});
  variants.push_back({"adaptive", true});
  return variants;
}

TEST(PolicyTest, EveryItemIsCompletedExactlyOnce) {
  uint64_t set_aside = 0;
  for (const Variant& variant : Variants()) {
    const std::string& name = variant.policy;
    for (const JobCase& c : JobCases()) {
      SCOPED_TRACE(variant.Name() + " N=" + std::to_string(c.items) +
                   " P=" + std::to_string(c.workers) + " cost=" + CostShapeName(c.cost) +
                   (c.true_priors ? " true" : " flat") + " priors");
      auto policy = Make(name);
      ASSERT_NE(policy, nullptr);
      DriverConfig config;
      config.inputs_move = variant.inputs_move;
      config.items = c.items;
      config.cost = c.cost;
      config.speeds = Prefix(kSpeeds, c.workers);
      config.priors = c.true_priors ? config.speeds : std::vector<double>(c.workers, 1.0);
      const DriverResult result = Driver(*policy, config).Run();
      ExpectEveryItemAccounted(result, c.items);
      set_aside += result.set_aside;
      // Without failures nothing is computed twice except what a steal or
      // a rebalance moved.
      if (name != "adaptive") {
        EXPECT_EQ(result.stats.duplicate_items, 0u);
      }
    }
  }
  EXPECT_GT(set_aside, 0u) << "no work was ever set aside: prefetch went untested";
}

struct FaultCase {
  uint64_t items;
  size_t workers;
  WorkerId faulty;
  Fault fault;
};

TEST(PolicyTest, NoItemIsLostWhenAWorkerFails) {
  std::vector<FaultCase> cases;
  for (Fault fault : {Fault::kDiesMidLease, Fault::kDiesBeforeAsking, Fault::kLostButAlive}) {
    for (auto [items, workers] : {std::pair<uint64_t, size_t>{600, 2}, {2000, 3}, {2503, 5}}) {
      cases.push_back({items, workers, 0, fault});
      cases.push_back({items, workers, static_cast<WorkerId>(workers - 1), fault});
    }
  }
  uint64_t set_aside = 0;
  for (const Variant& variant : Variants()) {
    for (const FaultCase& c : cases) {
      SCOPED_TRACE(variant.Name() + " N=" + std::to_string(c.items) +
                   " P=" + std::to_string(c.workers) + " worker " + std::to_string(c.faulty) + " " +
                   FaultName(c.fault));
      auto policy = Make(variant.policy);
      ASSERT_NE(policy, nullptr);
      DriverConfig config;
      config.inputs_move = variant.inputs_move;
      config.items = c.items;
      config.speeds = Prefix(kSpeeds, c.workers);
      config.priors = std::vector<double>(c.workers, 1.0);
      config.fault = c.fault;
      config.faulty = c.faulty;
      const DriverResult result = Driver(*policy, config).Run();
      EXPECT_TRUE(result.fault_fired) << "the fault never happened; the case tests nothing";
      ExpectEveryItemAccounted(result, c.items);
      set_aside += result.set_aside;
      if (c.fault == Fault::kDiesBeforeAsking) {
        EXPECT_TRUE(result.leases[c.faulty].empty());
      }
    }
  }
  EXPECT_GT(set_aside, 0u) << "no work was ever set aside: prefetch went untested";
}

// 25 rounds of every policy on random jobs, speeds, priors and faults drawn
// from `seed`; every item must be accounted for exactly once.
void RunRandomJobs(uint64_t seed) {
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> speed(0.2, 5.0);
  const std::vector<CostShape> shapes = {CostShape::kUniform, CostShape::kLinear, CostShape::kSqrt};
  for (int round = 0; round < 25; ++round) {
    for (const std::string& name : PolicyNames()) {
      DriverConfig config;
      config.items = 1 + random() % 1500;
      const size_t workers = 1 + random() % 6;
      config.cost = shapes[random() % shapes.size()];
      for (size_t i = 0; i < workers; ++i) {
        config.speeds.push_back(speed(random));
        config.priors.push_back(random() % 2 == 0 ? config.speeds.back() : speed(random));
      }
      config.inputs_move = random() % 2 == 0;
      config.inputs_cross_links = random() % 2 == 0;
      if (workers >= 2) {
        config.fault = static_cast<Fault>(random() % 4);
        config.faulty = static_cast<WorkerId>(random() % workers);
        config.detection = 0.25 * static_cast<double>(random() % 20);
      }
      SCOPED_TRACE("round " + std::to_string(round) + " " + name +
                   " N=" + std::to_string(config.items) + " P=" + std::to_string(workers) +
                   " cost=" + CostShapeName(config.cost) + " fault=" + FaultName(config.fault) +
                   " worker " + std::to_string(config.faulty) +
                   (config.inputs_move ? " inputs move" : "") +
                   (config.inputs_cross_links ? "" : " no inputs cross links"));
      auto policy = Make(name);
      ASSERT_NE(policy, nullptr);
      const DriverResult result = Driver(*policy, config).Run();
      ExpectEveryItemAccounted(result, config.items);
      if (::testing::Test::HasFailure()) return;  // one seed's failure is enough to read
    }
  }
}

TEST(PolicyTest, RandomJobsAndFailuresFinishWithEveryItemAccounted) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomJobsAndFailuresFinishWithEveryItemAccounted seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  RunRandomJobs(seed);
}

// Skewed item costs as a job may declare them: Pareto-like (one item in
// ten a hundred times the rest), growing, and some far apart.
std::vector<double> SkewedCosts(std::mt19937_64& random, uint64_t items) {
  std::vector<double> costs(items);
  const int kind = static_cast<int>(random() % 3);
  for (uint64_t i = 0; i < items; ++i) {
    switch (kind) {
      case 0:
        costs[i] = random() % 10 == 0 ? 100 : 1;
        break;
      case 1:
        costs[i] = 1 + static_cast<double>(i * i);
        break;
      default:
        costs[i] = std::pow(10.0, static_cast<double>(random() % 600) - 300);
        break;
    }
  }
  return costs;
}

// Every policy on jobs with one cost per item: each item finished and
// accounted once, with and without a fault.
TEST(PolicyTest, RandomJobsWithItemCostsFinishWithEveryItemAccounted) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomJobsWithItemCostsFinishWithEveryItemAccounted seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> speed(0.2, 5.0);
  for (int round = 0; round < 25; ++round) {
    for (const Variant& variant : Variants()) {
      DriverConfig config;
      config.items = 1 + random() % 800;
      config.item_costs =
          std::make_shared<const std::vector<double>>(SkewedCosts(random, config.items));
      const size_t workers = 1 + random() % 5;
      for (size_t i = 0; i < workers; ++i) {
        config.speeds.push_back(speed(random));
        config.priors.push_back(config.speeds.back());
      }
      config.inputs_move = variant.inputs_move;
      if (workers >= 2 && random() % 2 == 0) {
        config.fault = static_cast<Fault>(1 + random() % 3);
        config.faulty = static_cast<WorkerId>(random() % workers);
      }
      SCOPED_TRACE("round " + std::to_string(round) + " " + variant.Name() +
                   " N=" + std::to_string(config.items) + " P=" + std::to_string(workers) +
                   " fault=" + FaultName(config.fault));
      auto policy = Make(variant.policy);
      ASSERT_NE(policy, nullptr);
      const DriverResult result = Driver(*policy, config).Run();
      ASSERT_TRUE(result.started.ok()) << result.started.ToString();
      ExpectEveryItemAccounted(result, config.items);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// Regression (seed 1488007336, round 5, adaptive, 6 workers): worker 2 took
// a backup copy of the silent worker 0's rest [1, 20); worker 0 was then
// lost, and its whole lease went back to the pool, so workers 3, 5 and 1
// were leased items worker 2 still held. The items a backup pair holds both
// now stay with the one left (PolicyBase::SharedLease).
TEST(PolicyTest, ALostWorkersBackedUpItemsStayWithItsCopyAndNeverReachThePool) {
  RunRandomJobs(1488007336);
}

// ---------------------------------------------------------------------------
// Elastic workers: workers that join mid-job, and drained ones.

// The earliest a job of `items` unit items can end when `speeds` compute from
// the start and a worker of speed `joined` from `at` on: the work over the
// capacity the job actually had.
double ElasticLimit(uint64_t items, const std::vector<double>& speeds, double joined, double at) {
  double start = 0;
  for (double speed : speeds) start += speed;
  const auto work = static_cast<double>(items);
  if (work <= start * at) return work / start;
  return at + (work - start * at) / (start + joined);
}

TEST(PolicyTest, AWorkerJoiningMidJobGetsWorkAndEveryItemIsAccounted) {
  for (const Variant& variant : Variants()) {
    for (const double at : {0.0, 10.0, 40.0, 80.0}) {
      for (const size_t initial : {1u, 2u, 3u}) {
        SCOPED_TRACE(variant.Name() + " join at " + std::to_string(at) + " beside " +
                     std::to_string(initial));
        auto policy = Make(variant.policy);
        DriverConfig config;
        config.inputs_move = variant.inputs_move;
        config.items = 1200;
        config.speeds = Prefix(kSpeeds, initial);
        config.priors = config.speeds;
        config.joins = {{at, 4.0, 4.0}, {at + 5, 1.0, 1.0}};
        const DriverResult result = Driver(*policy, config).Run();
        ExpectEveryItemAccounted(result, config.items);
        EXPECT_EQ(result.joined, 2u);
        // A static split moves nothing to a newcomer, and guided hands a lone
        // worker the whole job as its first chunk; every other policy hands
        // it work while there is plenty left.
        const bool static_split = variant.policy == "equal" || variant.policy == "weighted";
        const bool all_in_one_chunk = variant.policy == "guided" && initial == 1;
        if (!static_split && !all_in_one_chunk && at <= 40) {
          EXPECT_FALSE(result.leases[initial].empty()) << "the fast newcomer got no work";
        }
      }
    }
  }
}

// adaptive counts a newcomer's speed at once: the others give their excess
// back and it takes it, so the job ends near the limit of the capacity it
// had (work / the integral of the total speed).
TEST(PolicyTest, AdaptiveWithAWorkerJoiningAThirdOfTheWayEndsNearTheElasticLimit) {
  for (const auto& [speeds, joined] : std::vector<std::pair<std::vector<double>, double>>{
           {{2.0, 2.0}, 2.0}, {{2.0, 0.5}, 4.0}, {{1.0, 1.0, 1.0}, 0.5}}) {
    // With inputs that cross links, the newcomer's steals start as
    // slow-start probes.
    for (const bool cross_links : {false, true}) {
      const uint64_t items = 20'000;
      double start = 0;
      for (double speed : speeds) start += speed;
      const double at = items / start / 3;
      SCOPED_TRACE("join at " + std::to_string(at) + (cross_links ? ", inputs cross links" : ""));
      auto policy = Make("adaptive");
      DriverConfig config;
      config.items = items;
      config.speeds = speeds;
      config.priors = speeds;
      config.joins = {{at, joined, joined}};
      config.inputs_cross_links = cross_links;
      const DriverResult result = Driver(*policy, config).Run();
      ExpectEveryItemAccounted(result, items);
      const double limit = ElasticLimit(items, speeds, joined, at);
      EXPECT_GE(limit / result.makespan, 0.95)
          << "makespan " << result.makespan << " s, limit " << limit << " s";
    }
  }
}

TEST(PolicyTest, AJoiningWorkerWithABadPriorIsRefusedAndChangesNothing) {
  for (const std::string& name : PolicyNames()) {
    SCOPED_TRACE(name);
    auto policy = Make(name);
    ASSERT_TRUE(policy->Start(Job(100, {1.0}), 0).ok());
    for (const WorkerPrior& bad :
         {WorkerPrior{"zero", 0}, WorkerPrior{"nan", std::nan("")}, WorkerPrior{"huge", 1e13},
          WorkerPrior{"duty", 1, 0, 0}, WorkerPrior{"duty", 1, 0, 1.5}}) {
      const StatusOr<WorkerId> joined = policy->OnWorkerJoined(bad, 1);
      ASSERT_FALSE(joined.ok()) << bad.name;
      EXPECT_EQ(joined.status().code(), StatusCode::kInvalid);
      EXPECT_NE(joined.status().message().find("worker " + bad.name), std::string::npos)
          << joined.status().message();
    }
    const StatusOr<WorkerId> good = policy->OnWorkerJoined({"good", 2}, 1);
    ASSERT_TRUE(good.ok()) << good.status().ToString();
    EXPECT_EQ(*good, 1u);
  }
}

// A drained worker's lease goes back at once: a worker waiting for work is
// signalled and leased the rest, with no lease to expire first.
TEST(PolicyTest, ADrainedWorkersRestGoesToAWaitingWorkerAtOnce) {
  for (const std::string& name : PolicyNames()) {
    SCOPED_TRACE(name);
    // selfsched's default chunk of this job is one item, nothing to drain;
    // adaptive would steal all of the silent worker 0's lease first.
    auto policy = name == "selfsched"  ? Make(name, {{"chunk", "10"}})
                  : name == "adaptive" ? Make(name, {{"stealing", "false"}})
                                       : Make(name);
    ASSERT_TRUE(policy->Start(Job(100, {1.0, 1.0}), 0).ok());
    // Worker 0 takes everything it can; worker 1 is given the rest or waits,
    // and is made to wait by computing its share.
    Reply zero = policy->OnReport(Report{0, 0, {}, 0, 0, true, {}});
    ASSERT_EQ(KindName(zero.kind), KindName(Reply::Kind::kLease));
    Range lease = zero.lease;
    Reply one = policy->OnReport(Report{1, 0, {}, 0, 0, true, {}});
    for (double now = 1; one.kind == Reply::Kind::kLease && now < 1000; ++now) {
      one = policy->OnReport(Report{1, now, {one.lease}, 1, one.lease.end, true, {}});
    }
    ASSERT_EQ(KindName(one.kind), KindName(Reply::Kind::kWait));
    (void)policy->TakeSignals();
    // Worker 0 hands in its first item and is drained.
    const Reply progress = policy->OnReport(
        Report{0, 1000, {{lease.begin, lease.begin + 1}}, 1, lease.begin + 1, false, {}});
    lease.end = progress.kind == Reply::Kind::kContinue ? progress.lease.end : lease.end;
    policy->OnWorkerLost(0, 1000);
    const std::vector<WorkerId> signals = policy->TakeSignals();
    EXPECT_NE(std::find(signals.begin(), signals.end(), 1u), signals.end())
        << "the waiting worker was not told there is work";
    const Reply rest = policy->OnReport(Report{1, 1000, {}, 0, 0, true, {}});
    ASSERT_EQ(KindName(rest.kind), KindName(Reply::Kind::kLease));
    EXPECT_EQ(rest.lease.begin, lease.begin + 1);
  }
}

// Random jobs with workers joining and drained: every item accounted once.
TEST(PolicyTest, RandomElasticJobsFinishWithEveryItemAccounted) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "RandomElasticJobsFinishWithEveryItemAccounted seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> speed(0.2, 5.0);
  const std::vector<CostShape> shapes = {CostShape::kUniform, CostShape::kLinear, CostShape::kSqrt};
  for (int round = 0; round < 20; ++round) {
    for (const Variant& variant : Variants()) {
      DriverConfig config;
      config.items = 1 + random() % 1500;
      const size_t workers = 1 + random() % 4;
      config.cost = shapes[random() % shapes.size()];
      for (size_t i = 0; i < workers; ++i) {
        config.speeds.push_back(speed(random));
        config.priors.push_back(random() % 2 == 0 ? config.speeds.back() : speed(random));
      }
      double at = 0;
      for (size_t joins = random() % 4; joins > 0; --joins) {
        at += 0.25 * static_cast<double>(random() % 200);
        const double s = speed(random);
        config.joins.push_back({at, s, random() % 2 == 0 ? s : speed(random)});
      }
      config.inputs_move = variant.inputs_move;
      if (workers >= 2 && random() % 2 == 0) {
        config.fault = random() % 2 == 0 ? Fault::kDrained : Fault::kDiesMidLease;
        config.faulty = static_cast<WorkerId>(random() % workers);
      }
      SCOPED_TRACE("round " + std::to_string(round) + " " + variant.Name() +
                   " N=" + std::to_string(config.items) + " P=" + std::to_string(workers) +
                   " joins=" + std::to_string(config.joins.size()) +
                   " cost=" + CostShapeName(config.cost) + " fault=" + FaultName(config.fault));
      auto policy = Make(variant.policy);
      const DriverResult result = Driver(*policy, config).Run();
      ExpectEveryItemAccounted(result, config.items);
      if (::testing::Test::HasFailure()) return;
    }
  }
}

// ---------------------------------------------------------------------------
// Hand-computed decisions of each policy, message by message.

Reply Ask(Policy& policy, WorkerId worker, double now) {
  return policy.OnReport(Report{worker, now, {}, 0, 0, true, {}});
}

Reply Finish(Policy& policy, WorkerId worker, Range done, double now, double calc) {
  return policy.OnReport(Report{worker, now, {done}, calc, done.end, true, {}});
}

Reply Progress(Policy& policy, WorkerId worker, Range done, double now, double calc) {
  return policy.OnReport(Report{worker, now, {done}, calc, done.end, false, {}});
}

void ExpectLease(const Reply& reply, Range lease) {
  EXPECT_EQ(KindName(reply.kind), KindName(Reply::Kind::kLease));
  EXPECT_EQ(reply.lease, lease) << "got " << reply.lease.ToString();
}

struct ShareCase {
  std::string title;
  std::string policy;
  uint64_t items;
  CostShape cost;
  std::vector<double> priors;
  std::vector<WorkerId> ask_order;
  std::vector<Range> shares;  // per worker
};

TEST(PolicyTest, StaticPoliciesGiveContiguousSharesByCost) {
  const std::vector<ShareCase> cases = {
      {"equal, uniform",
       "equal",
       100,
       CostShape::kUniform,
       {1, 1, 1, 1},
       {2, 0, 3, 1},
       {{0, 25}, {25, 50}, {50, 75}, {75, 100}}},
      // Priors do not matter to equal.
      {"equal ignores priors",
       "equal",
       100,
       CostShape::kUniform,
       {5, 1, 1, 1},
       {0, 1, 2, 3},
       {{0, 25}, {25, 50}, {50, 75}, {75, 100}}},
      // Linear: C(i) = i²/100; halves of the cost end at 100·√½ = 70.7.
      {"equal, linear, two",
       "equal",
       100,
       CostShape::kLinear,
       {1, 1},
       {1, 0},
       {{0, 70}, {70, 100}}},
      // Quarters end at 100·√(k/4): 50, 70.7, 86.6.
      {"equal, linear, four",
       "equal",
       100,
       CostShape::kLinear,
       {1, 1, 1, 1},
       {0, 1, 2, 3},
       {{0, 50}, {50, 70}, {70, 86}, {86, 100}}},
      {"weighted 5/5/1",
       "weighted",
       110,
       CostShape::kUniform,
       {5, 5, 1},
       {0, 1, 2},
       {{0, 50}, {50, 100}, {100, 110}}},
      {"weighted 1/3", "weighted", 100, CostShape::kUniform, {1, 3}, {1, 0}, {{0, 25}, {25, 100}}},
  };
  for (const ShareCase& c : cases) {
    SCOPED_TRACE(c.title);
    auto policy = Make(c.policy);
    ASSERT_NE(policy, nullptr);
    policy->Start(Job(c.items, c.priors, c.cost), 0);
    for (WorkerId worker : c.ask_order) {
      SCOPED_TRACE("worker " + std::to_string(worker));
      ExpectLease(Ask(*policy, worker, 0), c.shares[worker]);
    }
    // No rebalancing: a worker done with its share waits; the last report ends the job.
    for (WorkerId worker = 0; worker < c.shares.size(); ++worker) {
      const Reply reply = Finish(*policy, worker, c.shares[worker], 10, 10);
      const bool last = worker + 1 == c.shares.size();
      EXPECT_EQ(KindName(reply.kind), KindName(last ? Reply::Kind::kDone : Reply::Kind::kWait));
    }
    EXPECT_TRUE(policy->Finished());
    EXPECT_EQ(policy->stats().completed_items, c.items);
  }
}

TEST(PolicyTest, StaticPoliciesHandALostShareToTheNextIdleWorker) {
  auto policy = Make("equal");
  policy->Start(Job(90, {1, 1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 30});
  ExpectLease(Ask(*policy, 1, 0), {30, 60});
  ExpectLease(Ask(*policy, 2, 0), {60, 90});
  EXPECT_EQ(Progress(*policy, 1, {30, 40}, 1, 1).kind, Reply::Kind::kContinue);
  EXPECT_EQ(Finish(*policy, 0, {0, 30}, 3, 3).kind, Reply::Kind::kWait);
  EXPECT_TRUE(policy->TakeSignals().empty());
  policy->OnWorkerLost(1, 4);
  // The waiting worker is signalled and gets the unreported rest, whole.
  EXPECT_EQ(policy->TakeSignals(), (std::vector<WorkerId>{0}));
  ExpectLease(Ask(*policy, 0, 4), {40, 60});
}

// A worker whose range the coordinator could not merge (it overlapped items
// a thief handed in first) reports its lease's end with less finished than
// the lease: the rest goes back to the pool. The worker asks first, and what
// it leaves there wakes the workers waiting for work; they used to wait while
// the slow worker took the rest in slivers sized for all three.
TEST(PolicyTest, ALeaseHandedBackUnfinishedWakesTheWaitingWorkers) {
  // Without the endgame's backup, which would give worker 0 a copy of
  // worker 1's rest where this test has it wait.
  auto policy = Make("adaptive", {{"backup", "off"}});
  JobInfo job = Job(100, {1, 1});
  job.inputs_cross_links = false;  // a primes job: pool leases sized at once
  policy->Start(job, 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  EXPECT_EQ(KindName(Finish(*policy, 0, {0, 50}, 5, 5).kind), "kWait");
  EXPECT_TRUE(policy->TakeSignals().empty());
  // Worker 1 ran to its end, but only [50, 60) of it could be merged.
  const Reply reply = policy->OnReport(Report{1, 6, {{50, 60}}, 6, 100, false, {}});
  ASSERT_EQ(KindName(reply.kind), "kLease");
  EXPECT_EQ(reply.lease.begin, 60u);
  ASSERT_LT(reply.lease.end, 100u) << "sized for both: the rest stays in the pool";
  EXPECT_EQ(policy->TakeSignals(), (std::vector<WorkerId>{0}));
  // Six times as fast, it takes most of the rest.
  const Reply woken = Ask(*policy, 0, 6);
  ASSERT_EQ(KindName(woken.kind), "kLease");
  EXPECT_EQ(woken.lease.begin, reply.lease.end);
  EXPECT_GE(woken.lease.size(), 30u) << woken.lease.ToString();
}

TEST(PolicyTest, AWorkerHeardFromAfterItWasLostKeepsWhatItReportedAndStops) {
  for (const std::string& name : PolicyNames()) {
    SCOPED_TRACE(name);
    auto policy = Make(name);
    policy->Start(Job(4000, {1, 1}), 0);
    const Reply first = Ask(*policy, 0, 0);
    ASSERT_EQ(KindName(first.kind), "kLease");
    ASSERT_GE(first.lease.size(), 4u);
    const uint64_t begin = first.lease.begin;
    policy->OnWorkerLost(0, 1);
    // Its lease went back to the pool; the report still counts...
    const Reply reply = Progress(*policy, 0, {begin, begin + 3}, 2, 2);
    EXPECT_EQ(policy->stats().completed_items, 3u);
    // ...and it is told to stop where it is: nothing of its old lease is left
    // to it, since that may already be someone else's.
    EXPECT_EQ(KindName(reply.kind), "kContinue");
    EXPECT_EQ(reply.lease.end, begin + 3);
    EXPECT_TRUE(reply.lease.empty());
    // Asking afresh, it gets work that does not hold the items it reported.
    const Reply next = Ask(*policy, 0, 3);
    ASSERT_EQ(KindName(next.kind), "kLease");
    EXPECT_EQ(IntervalSet(Range{begin, begin + 3}).CountIn(next.lease), 0u);
  }
}

// Plays honest workers to the end of the job. Each works on the lease of the
// last reply it got (a later reply supersedes an earlier one), reports one
// item of progress to learn its current end, then reports the rest finished;
// a waiting worker asks again when signalled. Returns Finished().
struct PlayerState {
  Range lease;          // what it computes; empty when it has none
  bool asking = false;  // it will ask (an idle report) at its next turn
};

bool PlayOut(Policy& policy, std::vector<PlayerState> players, double now) {
  auto apply = [&](WorkerId id, const Reply& reply) {
    players[id].asking = false;
    players[id].lease = reply.kind == Reply::Kind::kLease ? reply.lease : Range{};
  };
  for (int round = 0; round < 10000 && !policy.Finished(); ++round) {
    bool anyone = false;
    for (WorkerId id = 0; id < players.size() && !policy.Finished(); ++id) {
      PlayerState& p = players[id];
      now += 0.5;
      if (p.asking) {
        anyone = true;
        apply(id, Ask(policy, id, now));
      } else if (!p.lease.empty()) {
        anyone = true;
        const uint64_t next = p.lease.begin + 1;
        Reply reply = policy.OnReport(
            Report{id, now, {{p.lease.begin, next}}, 0.5, next, next == p.lease.end, {}});
        if (reply.kind == Reply::Kind::kContinue) {
          const uint64_t end = std::max(reply.lease.end, next);
          reply = policy.OnReport(Report{id, now + 0.25, {{next, end}}, 0.25, end, true, {}});
        }
        apply(id, reply);
      }
      for (WorkerId signalled : policy.TakeSignals()) {
        if (players[signalled].lease.empty()) players[signalled].asking = true;
      }
    }
    if (!anyone) break;
  }
  return policy.Finished();
}

TEST(PolicyTest, PlayOutFinishesAnOrdinaryJob) {
  // The control for the two tests below: the same players, no crossing.
  for (const std::string& name : PolicyNames()) {
    SCOPED_TRACE(name);
    auto policy = Make(name, name == "selfsched" || name == "mms"
                                 ? std::map<std::string, std::string>{{"chunk", "5"}}
                                 : std::map<std::string, std::string>{});
    policy->Start(Job(40, {1, 1}), 0);
    std::vector<PlayerState> players(2);
    players[0].asking = true;
    players[1].asking = true;
    EXPECT_TRUE(PlayOut(*policy, players, 0));
    EXPECT_EQ(policy->stats().completed_items, 40u);
  }
}

// Regression guard: an ask whose reply was lost (a timeout, then a retry)
// reaches the coordinator twice. The first lease must not vanish with it: the
// worker never saw it, so its items must go back to the pool.
TEST(PolicyTest, ARetriedAskDoesNotLoseTheFirstLease) {
  for (const std::string& name : PolicyNames()) {
    SCOPED_TRACE(name);
    auto policy = Make(name, name == "selfsched" || name == "mms"
                                 ? std::map<std::string, std::string>{{"chunk", "5"}}
                                 : std::map<std::string, std::string>{});
    policy->Start(Job(40, {1, 1}), 0);
    const Reply lost = Ask(*policy, 0, 0);
    ASSERT_EQ(KindName(lost.kind), "kLease");
    const Reply retried = Ask(*policy, 0, 0.1);  // the same request again
    std::vector<PlayerState> players(2);
    players[0].lease = retried.kind == Reply::Kind::kLease ? retried.lease : Range{};
    players[1].asking = true;
    EXPECT_TRUE(PlayOut(*policy, players, 1))
        << "the job cannot finish: " << policy->stats().completed_items
        << " of 40 items done; the lost reply leased " << lost.lease.ToString();
  }
}

// Regression guard, as the simulator met it: worker 1's lease was cut under
// it; its progress report at the cut is answered with a new lease; before that
// reply arrives it finishes the item it had begun and reports idle. The lease
// granted in between must not vanish.
TEST(PolicyTest, AnIdleReportThatCrossedALeaseDoesNotLoseIt) {
  // Without slow start, so that the steal is sized by the formula alone.
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  Progress(*policy, 1, {50, 51}, 1, 1);
  const Reply stolen = Finish(*policy, 0, {0, 50}, 5, 5);  // steals [60, 100)
  ASSERT_EQ(KindName(stolen.kind), "kLease");
  ASSERT_EQ(stolen.lease, (Range{60, 100}));
  EXPECT_EQ(Progress(*policy, 1, {51, 56}, 6, 5).lease, (Range{50, 60}));
  // At the cut: a new lease is the answer (it steals again)...
  const Reply crossed = Progress(*policy, 1, {56, 60}, 7, 1);
  ASSERT_EQ(KindName(crossed.kind), "kLease") << "precondition of this sequence";
  // ...but worker 1 had begun item 60 and reports it before that reply arrives.
  const Reply latest = policy->OnReport(Report{1, 7.5, {{60, 61}}, 0.5, 61, true, {}});
  std::vector<PlayerState> players(2);
  players[0].lease = {61, 100};  // worker 0 goes on with its lease
  players[1].lease = latest.kind == Reply::Kind::kLease ? latest.lease : Range{};
  EXPECT_TRUE(PlayOut(*policy, players, 8))
      << "the job cannot finish: " << policy->stats().completed_items
      << " of 100 items done; the crossed reply leased " << crossed.lease.ToString();
}

// Slow start probes a link that may carry a stolen lease's inputs: a job
// whose items carry none (primes, matmul) gets the steal as the formula
// sizes it, with slow start on.
TEST(PolicyTest, SlowStartProbesOnlyWhenInputsCrossLinks) {
  for (const bool cross : {false, true}) {
    SCOPED_TRACE(cross ? "inputs cross links" : "no inputs cross links");
    auto policy = Make("adaptive");
    JobInfo job = Job(100, {1, 1});
    job.inputs_cross_links = cross;
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 50});
    ExpectLease(Ask(*policy, 1, 0), {50, 100});
    Progress(*policy, 1, {50, 51}, 1, 1);
    const Reply stolen = Finish(*policy, 0, {0, 50}, 5, 5);
    ASSERT_EQ(KindName(stolen.kind), "kLease");
    EXPECT_EQ(stolen.lease.end, 100u);
    if (cross) {
      // A probe of four report floors (0.05 s) at the thief's 10 items/s.
      EXPECT_EQ(stolen.lease, (Range{98, 100}));
    } else {
      EXPECT_EQ(stolen.lease, (Range{60, 100}));  // as AnIdleReportThatCrossedALeaseDoesNotLoseIt
    }
  }
}

// A worker whose prior is a credible history and agrees with what it measures
// (the scale set by the others' measurements too) reports three times over
// its lease, not ten; one that strays from its prior, one measured before
// any other (nothing to agree with yet) or one without a credible prior
// reports at the full rate.
TEST(PolicyTest, ACrediblePriorThatAgreesAsksForFewerReports) {
  struct Case {
    const char* title;
    double credibility;
    Range first_report;  // worker 0's, over 4 s, after worker 1 measured 100 items/s (or not)
    bool other_measured;
    double every;  // seconds between worker 0's reports
  };
  const Case cases[] = {
      // A lease of 5000 items at 100/s: 50 s, ten reports.
      {"fuzzy prior", 0, {0, 400}, false, 50.0 / 10},
      // Three reports.
      {"credible prior, agrees", 1, {0, 400}, true, 50.0 / 3},
      // Measured first, its prior sets nothing to agree with: ten reports.
      {"credible prior, measured first", 1, {0, 400}, false, 50.0 / 10},
      // Worker 0 measures 40/s where its prior says 100 (worker 1 fixed the
      // scale): its speed is still mostly the prior's (scale 70/s; blended
      // with weight 160 / (160 + 0.25 * 5000) on the measurement, 65.7/s),
      // and it reports at the full rate over what it keeps: its excess over
      // its fair share, above a fiftieth of its time for a credible prior,
      // went back at once (every: 0, from the lease in the reply).
      {"credible prior, strayed", 1, {0, 160}, true, 0},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.title);
    auto policy = Make("adaptive");
    JobInfo job = CredibleJob(10000, {1, 1}, c.credibility);
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 5000});
    ExpectLease(Ask(*policy, 1, 0), {5000, 10000});
    if (c.other_measured) Progress(*policy, 1, {5000, 5100}, 1, 1);
    const Reply reply = Progress(*policy, 0, c.first_report, 4, 4);
    ASSERT_EQ(KindName(reply.kind), "kContinue");
    double every = c.every;
    if (every == 0) {
      EXPECT_LT(reply.lease.end, 5000u);
      every = static_cast<double>(reply.lease.size()) / 65.7 / 10;
    }
    EXPECT_NEAR(reply.report_every_s, every, 0.02 * every);
  }
}

// A worker that starts 3 s after the other holds 1.5 s (3 %) more than its
// fair share at its first report. With a fuzzy prior that is below the
// rebalancing threshold (a tenth of its time: young measurements are
// noisy); with a credible one (a fiftieth) the excess goes back at once,
// instead of being found in the tail by steals.
TEST(PolicyTest, ACrediblePriorGivesBackASmallExcessAtOnce) {
  for (const double credibility : {0.0, 1.0}) {
    SCOPED_TRACE(credibility);
    auto policy = Make("adaptive");
    JobInfo job = CredibleJob(10000, {1, 1}, credibility);
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 1, 0), {5000, 10000});
    Progress(*policy, 1, {5000, 5400}, 4, 4);  // 100 items/s
    ExpectLease(Ask(*policy, 0, 3), {0, 5000});
    const Reply reply = Progress(*policy, 0, {0, 100}, 4, 1);  // 100 items/s too
    ASSERT_EQ(KindName(reply.kind), "kContinue");
    if (credibility > 0) {
      // 4900 left against a fair 0.5 * 9500: about 150 items back.
      EXPECT_LT(reply.lease.end, 4900u);
      EXPECT_GT(reply.lease.end, 4800u);
      EXPECT_EQ(policy->stats().rebalances, 1u);
    } else {
      EXPECT_EQ(reply.lease.end, 5000u);
      EXPECT_EQ(policy->stats().rebalances, 0u);
    }
  }
}

// A credible prior's split leaves a small worker that computes in bursts (a
// CPU quota: duty below 1) a little short, by exp(Z · 0.1 · (1 - d) ·
// Φ⁻¹(q)) of its share q of the speed: handing in its last items a throttled
// gap late would idle every other worker. Shares as the emulated rack of
// examples/clusters/pi-mixed.yaml: 60 / 30 / 30 / 6, duties 0.6 / 0.3 / 0.3
// / 0.06. The Pi 3B's q = 6/126 is Φ⁻¹ -1.66839: its share × 0.85485.
TEST(PolicyTest, ACredibleSplitLeavesASmallBurstyWorkerALittleShort) {
  const std::vector<double> duties = {0.6, 0.3, 0.3, 0.06};
  auto pi3b_lease = [&](double z, std::vector<double> duty,
                        std::map<std::string, std::string> options = {}) {
    auto policy = Make("adaptive", std::move(options));
    JobInfo job = CredibleJob(126000, {60, 30, 30, 6}, z);
    for (size_t i = 0; i < duty.size(); ++i) job.workers[i].duty = duty[i];
    EXPECT_TRUE(policy->Start(job, 0).ok());
    for (WorkerId id = 0; id < 3; ++id) Ask(*policy, id, 0);
    const Reply reply = Ask(*policy, 3, 0);
    EXPECT_EQ(KindName(reply.kind), "kLease");
    EXPECT_EQ(reply.lease.end, 126000u);  // the whole job is still planned
    return reply.lease.size();
  };
  // 126000 · 6 · 0.85485 / (120 + 6 · 0.85485) = 5164.8.
  EXPECT_EQ(pi3b_lease(1, duties), 5165u);
  // Half the credibility, half the exponent: 126000 · 6 · 0.92459 / 125.5475.
  EXPECT_NEAR(static_cast<double>(pi3b_lease(0.5, duties)), 5567.5, 1.0);
  // Unhedged: a fuzzy prior, a steady node, the option off.
  EXPECT_EQ(pi3b_lease(0, duties), 6000u);
  EXPECT_EQ(pi3b_lease(1, {1, 1, 1, 1}), 6000u);
  EXPECT_EQ(pi3b_lease(1, duties, {{"hedge", "off"}}), 6000u);
  // A bursty worker holding a tenth of the speed or more is not hedged: the
  // others would take up more than their rebalancing threshold.
  auto policy = Make("adaptive");
  JobInfo job = CredibleJob(1500, {1, 0.5}, 1);
  job.workers[1].duty = 0.1;
  ASSERT_TRUE(policy->Start(job, 0).ok());
  Ask(*policy, 0, 0);
  ExpectLease(Ask(*policy, 1, 0), {1000, 1500});
}

// A duty is the share of a CPU period a worker computes: outside (0, 1] the
// job is refused, naming the worker, as a bad speed is.
TEST(PolicyTest, ADutyOutsideZeroToOneIsRefusedAtStart) {
  for (const double duty : {0.0, -0.5, 1.5, std::numeric_limits<double>::quiet_NaN()}) {
    SCOPED_TRACE(duty);
    auto policy = Make("adaptive");
    JobInfo job = Job(100, {1, 1});
    job.workers[1].duty = duty;
    const Status started = policy->Start(job, 0);
    EXPECT_EQ(started.code(), StatusCode::kInvalid);
    EXPECT_NE(started.message().find("worker w1: duty"), std::string::npos) << started.message();
    EXPECT_NE(started.message().find("in (0, 1]"), std::string::npos) << started.message();
  }
}

// Before it has finished an item a worker reports at the report floor
// (50 ms), or eight times that when its prior is fully credible.
TEST(PolicyTest, ACrediblePriorsFirstReportComesLater) {
  for (const double credibility : {0.0, 0.5, 1.0}) {
    SCOPED_TRACE(credibility);
    auto policy = Make("adaptive");
    JobInfo job = CredibleJob(10000, {1, 1}, credibility);
    policy->Start(job, 0);
    const Reply reply = Ask(*policy, 0, 0);
    ExpectLease(reply, {0, 5000});
    EXPECT_NEAR(reply.report_every_s, 0.05 * (1 + 7 * credibility), 1e-12);
  }
}

// A speed measured over a short first report is not relied on for long: the
// next report comes within kEvidenceHorizon (8) times the computing measured,
// however long the lease; then the cadence widens as evidence grows.
TEST(PolicyTest, TheCadenceGrowsWithTheComputingMeasured) {
  auto policy = Make("adaptive");
  policy->Start(Job(100000, {1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 100000});
  Reply reply = Progress(*policy, 0, {0, 10}, 0.1, 0.1);  // 100 items/s: 1000 s left
  EXPECT_NEAR(reply.report_every_s, 0.8, 1e-9);
  reply = Progress(*policy, 0, {10, 90}, 0.9, 0.8);
  EXPECT_NEAR(reply.report_every_s, 7.2, 1e-9);
  reply = Progress(*policy, 0, {90, 810}, 8.1, 7.2);
  EXPECT_NEAR(reply.report_every_s, 60, 1e-9);  // 64.8, above the longest cadence
}

// A measured worker reports at least every 60 s, or every thousandth of the
// predicted rest of the job when that is longer: a job of 10^12 items
// (10^10 s here) costs each worker thousands of reports, not 1.7e8 (the
// simulator simulates every one; docs/simulator.md, "Bounds").
TEST(PolicyTest, TheLongestCadenceIsAThousandthOfALongJobsRest) {
  const uint64_t items = 1'000'000'000'000ull;
  auto policy = Make("adaptive");
  policy->Start(Job(items, {1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, items});
  Progress(*policy, 0, {0, 10}, 0.1, 0.1);  // 100 items/s
  // 2e6 s of evidence: the evidence horizon (8 times it) no longer binds.
  const uint64_t done = 200'000'010;
  const Reply reply = Progress(*policy, 0, {10, done}, 2e6 + 0.1, 2e6);
  const double rest = static_cast<double>(items - done) / 100;  // 9.998e9 s
  EXPECT_NEAR(reply.report_every_s, rest / 1000, 1e-6 * rest / 1000);
  // A job of 1000 minutes or less keeps the 60 s (TheCadenceGrowsWithTheComputingMeasured).
}

// The floor wins over the longest cadence: a minReportSeconds above 60 s is
// kept, before the worker is measured and after.
TEST(PolicyTest, AMinimumCadenceAboveAMinuteIsKept) {
  auto policy = Make("adaptive", {{"minReportSeconds", "120"}});
  policy->Start(Job(100000, {1}), 0);
  Reply reply = Ask(*policy, 0, 0);
  ExpectLease(reply, {0, 100000});
  EXPECT_NEAR(reply.report_every_s, 120, 1e-9);  // unmeasured
  reply = Progress(*policy, 0, {0, 10}, 0.1, 0.1);
  EXPECT_NEAR(reply.report_every_s, 120, 1e-9);
  reply = Progress(*policy, 0, {10, 12010}, 120.1, 120);  // 100 items/s: 880 s left
  EXPECT_NEAR(reply.report_every_s, 120, 1e-9);
}

// In the tail the common end is near, and a lease from the pool sized by it
// would be a sliver of an item or two. A pool the asker can finish within a
// report floor (50 ms) goes to it whole: the pool's last items go out in one
// lease, not one round trip per item.
TEST(PolicyTest, ThePoolsLastItemsGoOutInOneLeaseNotInSlivers) {
  auto policy = Make("adaptive");
  policy->Start(Job(1000, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 500});
  ExpectLease(Ask(*policy, 1, 0), {500, 1000});
  Progress(*policy, 0, {0, 100}, 1, 1);  // 100 items/s each
  Progress(*policy, 1, {500, 600}, 1, 1);
  Progress(*policy, 0, {100, 499}, 4.99, 3.99);  // one item left
  // Worker 1 hands in all but its last three items: they go back to the
  // pool, and it asks. Sized by the common end (4 items left at 200 items/s:
  // 0.02 s) its lease would be two items; a report floor is five.
  const Reply reply = Finish(*policy, 1, {600, 997}, 5, 4);
  ExpectLease(reply, {997, 1000});
}

// A victim that ran ahead of its predictions (150 items/s where its speed
// said 100) keeps, after a steal, the items it may reach at the rate it
// showed by the time it learns of the cut: the thief does not compute them
// twice. (Without the lead the cut falls at 430, items the victim reaches
// by 3.3 s at 150 items/s.)
TEST(PolicyTest, AStealLeavesAVictimThatRanAheadTheItemsItMayReach) {
  auto policy = Make("adaptive");
  policy->Start(Job(2000, {1, 3}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 500});
  ExpectLease(Ask(*policy, 1, 0), {500, 2000});
  Progress(*policy, 0, {0, 100}, 1, 1);                          // 100 items/s
  Progress(*policy, 1, {500, 800}, 1, 1);                        // 300 items/s
  const Reply cadence = Progress(*policy, 0, {100, 250}, 2, 1);  // 150 items/s
  const double now = 3.3;
  const Reply stolen = Finish(*policy, 1, {800, 2000}, now, 2.3);
  ASSERT_EQ(KindName(stolen.kind), "kLease");
  ASSERT_EQ(stolen.lease.end, 500u);
  // The victim learns of the cut at its next report, or a report floor from
  // now when it was signalled.
  const bool signalled = policy->TakeSignals() == std::vector<WorkerId>{0};
  const double learns = signalled ? now + 0.05 : std::max(now, 2 + cadence.report_every_s);
  EXPECT_GE(stolen.lease.begin, 250 + 150 * (learns - 2))
      << "learns at " << learns << ", stolen " << stolen.lease.ToString();
}

// The lead counts less when the thief is much faster than the victim: a cut
// the victim passes costs the thief little to compute again, items left to a
// slow victim cost its slow time. The scenario above with the thief three
// and thirty times the victim's prior speed: the cut leaves the victim its
// lead with the first, less of it with the second, and never less than what
// its slowest rate (100 items/s) reaches.
TEST(PolicyTest, AFastThiefLeavesASlowVictimLessOfItsLead) {
  std::map<int, double> cut_over_travel;  // by the thief's speed ratio
  for (const int ratio : {3, 30}) {
    SCOPED_TRACE(ratio);
    const uint64_t items = 500 * (1 + ratio);
    auto policy = Make("adaptive");
    policy->Start(Job(items, {1, static_cast<double>(ratio)}), 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 500});
    ExpectLease(Ask(*policy, 1, 0), {500, items});
    Progress(*policy, 0, {0, 100}, 1, 1);  // 100 items/s
    const uint64_t thief_at = 500 + 100 * ratio;
    Progress(*policy, 1, {500, thief_at}, 1, 1);
    const Reply cadence = Progress(*policy, 0, {100, 250}, 2, 1);  // 150 items/s
    const double now = 3.3;
    const Reply stolen = Finish(*policy, 1, {thief_at, items}, now, 2.3);
    ASSERT_EQ(KindName(stolen.kind), "kLease");
    ASSERT_EQ(stolen.lease.end, 500u);
    const bool signalled = policy->TakeSignals() == std::vector<WorkerId>{0};
    const double learns = signalled ? now + 0.05 : std::max(now, 2 + cadence.report_every_s);
    EXPECT_GE(stolen.lease.begin, 250 + 100 * (learns - 2)) << stolen.lease.ToString();
    cut_over_travel[ratio] = (stolen.lease.begin - 250.0) / (learns - 2);
  }
  EXPECT_GE(cut_over_travel[3], 150);
  EXPECT_LT(cut_over_travel[30], cut_over_travel[3] - 10)
      << cut_over_travel[30] << " " << cut_over_travel[3];
}

// Workers told to wait (nothing was worth stealing when they asked) are woken
// when a computing worker reports that its end is later than predicted by
// more than four report floors and half the time it now has left; not when
// it is on time.
// Two workers of equal speed on 1000 items: worker 0 has 10 items left, done
// at 5.0 s, when worker 1 is done with its lease at 4.95 s and asks; 0.05 s
// of worker 0's is not worth a steal, and worker 1 is told to wait.
std::unique_ptr<Policy> ToldToWaitBesideALastTenItems() {
  auto policy = Make("adaptive");
  policy->Start(Job(1000, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 500});
  ExpectLease(Ask(*policy, 1, 0), {500, 1000});
  Progress(*policy, 0, {0, 100}, 1, 1);
  Progress(*policy, 1, {500, 600}, 1, 1);
  Progress(*policy, 0, {100, 490}, 4.9, 3.9);
  EXPECT_EQ(KindName(Finish(*policy, 1, {600, 1000}, 4.95, 3.95).kind), "kWait");
  return policy;
}

TEST(PolicyTest, AWorkerThatSlowsDownWakesTheWaitingWorkers) {
  for (const bool slowed : {false, true}) {
    SCOPED_TRACE(slowed ? "slowed down" : "on time");
    auto policy = ToldToWaitBesideALastTenItems();
    policy->TakeSignals();
    // Five items in 0.05 s as predicted, or in 0.6 s (its end now 5.8 s).
    const double now = slowed ? 5.5 : 4.95;
    const Reply reply = Progress(*policy, 0, {490, 495}, now, now - 4.9);
    ASSERT_EQ(KindName(reply.kind), "kContinue");
    EXPECT_EQ(policy->TakeSignals(), slowed ? std::vector<WorkerId>{1} : std::vector<WorkerId>{});
  }
}

// Told to wait, an idle worker's notes say whom adaptive looked at and why
// each gave nothing: here worker 0's last 0.05 s (ToldToWaitBesideALastTenItems).
TEST(PolicyTest, AnIdleWorkerToldToWaitIsToldWhyVictimByVictim) {
  auto policy = ToldToWaitBesideALastTenItems();
  const std::vector<WaitNote> notes = policy->WaitNotes();
  std::string all;
  for (const WaitNote& note : notes) all += note.why + "\n";
  SCOPED_TRACE(all);
  ASSERT_FALSE(notes.empty());
  // Sized or whole, by its next report or by a signal, worker 0 may be in
  // its last item when it learns of a cut; a copy of its last ten items
  // would end after it.
  bool sized = false, backup = false, whole = false;
  for (const WaitNote& note : notes) {
    ASSERT_TRUE(note.victim.has_value());
    EXPECT_EQ(*note.victim, 0u);  // the thief is never its own victim
    const bool last_item = note.why.ends_with("it may be in its last item [499, 500) by then");
    sized |= note.why.starts_with("sized (learning at ") && last_item;
    whole |= note.why.starts_with("whole item (learning at ") && last_item;
    backup |= note.why ==
              "backup: the thief would end [490, 500) at 5.05 s (5.05 s with its overhead), not "
              "before the victim's end at 5.00 s";
  }
  EXPECT_TRUE(sized);
  EXPECT_TRUE(backup);
  EXPECT_TRUE(whole);
  // A policy that keeps no notes has none.
  auto mms = Make("mms");
  mms->Start(Job(10, {1}), 0);
  Ask(*mms, 0, 0);
  EXPECT_TRUE(mms->WaitNotes().empty());
}

TEST(PolicyTest, SelfSchedHandsOutFixedChunks) {
  auto policy = Make("selfsched", {{"chunk", "7"}});
  policy->Start(Job(30, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 7});
  ExpectLease(Ask(*policy, 1, 0), {7, 14});
  ExpectLease(Finish(*policy, 1, {7, 14}, 1, 1), {14, 21});
  ExpectLease(Finish(*policy, 0, {0, 7}, 2, 2), {21, 28});
  ExpectLease(Finish(*policy, 1, {14, 21}, 2, 1), {28, 30});  // what is left
  EXPECT_EQ(Finish(*policy, 0, {21, 28}, 3, 1).kind, Reply::Kind::kWait);
  EXPECT_EQ(Finish(*policy, 1, {28, 30}, 3, 1).kind, Reply::Kind::kDone);

  // The default chunk: about a hundred per worker, floor(N / 100P).
  auto by_default = Make("selfsched");
  by_default->Start(Job(10000, {1, 1, 1, 1}), 0);
  ExpectLease(Ask(*by_default, 0, 0), {0, 25});
}

TEST(PolicyTest, GuidedChunkIsRemainingOverWorkers) {
  auto policy = Make("guided");
  policy->Start(Job(10, {1, 1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 4});                 // ceil(10 / 3)
  ExpectLease(Ask(*policy, 1, 0), {4, 6});                 // ceil(6 / 3)
  ExpectLease(Ask(*policy, 2, 0), {6, 8});                 // ceil(4 / 3)
  ExpectLease(Finish(*policy, 1, {4, 6}, 1, 1), {8, 9});   // ceil(2 / 3)
  ExpectLease(Finish(*policy, 2, {6, 8}, 1, 1), {9, 10});  // ceil(1 / 3)

  auto big = Make("guided");
  big->Start(Job(1001, {1, 1, 1, 1}), 0);
  ExpectLease(Ask(*big, 3, 0), {0, 251});  // ceil(1001 / 4)

  auto floored = Make("guided", {{"minChunk", "5"}});
  floored->Start(Job(12, {1, 1, 1, 1}), 0);
  ExpectLease(Ask(*floored, 0, 0), {0, 5});   // max(5, ceil(12 / 4))
  ExpectLease(Ask(*floored, 1, 0), {5, 10});  // max(5, ceil(7 / 4))
  ExpectLease(Ask(*floored, 2, 0), {10, 12});
}

TEST(PolicyTest, FactoringHandsOutBatchesOfPChunks) {
  auto policy = Make("factoring");
  policy->Start(Job(100, {1, 1, 1, 1}), 0);
  // First batch: P chunks of ceil(100 / 8) = 13.
  ExpectLease(Ask(*policy, 0, 0), {0, 13});
  ExpectLease(Ask(*policy, 1, 0), {13, 26});
  ExpectLease(Ask(*policy, 2, 0), {26, 39});
  ExpectLease(Finish(*policy, 0, {0, 13}, 1, 1), {39, 52});
  // Second batch: 48 remain, chunks of ceil(48 / 8) = 6.
  ExpectLease(Ask(*policy, 3, 1), {52, 58});
  ExpectLease(Finish(*policy, 1, {13, 26}, 1, 1), {58, 64});
  ExpectLease(Finish(*policy, 2, {26, 39}, 1, 1), {64, 70});
  ExpectLease(Finish(*policy, 0, {39, 52}, 2, 1), {70, 76});
  // Third batch: 24 remain, chunks of 3.
  ExpectLease(Finish(*policy, 3, {52, 58}, 2, 1), {76, 79});
}

TEST(PolicyTest, MmsStopsEveryoneThenHandsOutChunks) {
  auto policy = Make("mms", {{"chunk", "2"}});
  policy->Start(Job(30, {1, 1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 10});
  ExpectLease(Ask(*policy, 1, 0), {10, 20});
  ExpectLease(Ask(*policy, 2, 0), {20, 30});
  EXPECT_TRUE(policy->TakeSignals().empty());
  // The first worker to finish its share stops the world.
  EXPECT_EQ(KindName(Finish(*policy, 0, {0, 10}, 5, 5).kind), "kWait");
  std::vector<WorkerId> signals = policy->TakeSignals();
  std::sort(signals.begin(), signals.end());
  EXPECT_EQ(signals, (std::vector<WorkerId>{1, 2}));
  // Each signalled worker reports what it did and waits for the others.
  EXPECT_EQ(KindName(Progress(*policy, 1, {10, 13}, 5.1, 5.1).kind), "kWait");
  EXPECT_TRUE(policy->TakeSignals().empty()) << "no one is woken before all have stopped";
  // The last one to report starts the master-slave phase with a chunk...
  ExpectLease(Progress(*policy, 2, {20, 25}, 5.2, 5.2), {13, 15});
  // ...and the waiting workers are asked to ask again.
  signals = policy->TakeSignals();
  std::sort(signals.begin(), signals.end());
  EXPECT_EQ(signals, (std::vector<WorkerId>{0, 1}));
  ExpectLease(Ask(*policy, 0, 5.3), {15, 17});
  ExpectLease(Ask(*policy, 1, 5.3), {17, 19});
  ExpectLease(Finish(*policy, 2, {13, 15}, 6, 0.8), {19, 20});  // the end of the first gap
  ExpectLease(Finish(*policy, 0, {15, 17}, 6, 0.7), {25, 27});
  EXPECT_EQ(policy->stats().completed_items, 10u + 3 + 5 + 2 + 2);
}

// mms's stop with a worker whose report names a run under way: it keeps that
// run's items and finishes them (the rest of its lease goes back), and the
// master-slave phase starts when it asks again.
TEST(PolicyTest, MmsLetsARunUnderWayFinishBeforeTheWorldStops) {
  auto policy = Make("mms", {{"chunk", "2"}});
  policy->Start(Job(30, {1, 1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 10});
  ExpectLease(Ask(*policy, 1, 0), {10, 20});
  ExpectLease(Ask(*policy, 2, 0), {20, 30});
  EXPECT_EQ(KindName(Finish(*policy, 0, {0, 10}, 5, 5).kind), "kWait");
  policy->TakeSignals();
  Report running{1, 5.1, {{10, 13}}, 5.1, 13, false, {}};
  running.running_end = 16;
  const Reply kept = policy->OnReport(running);
  EXPECT_EQ(KindName(kept.kind), "kContinue");
  EXPECT_EQ(kept.lease, (Range{10, 16}));
  EXPECT_EQ(KindName(Progress(*policy, 2, {20, 25}, 5.2, 5.2).kind), "kWait")
      << "worker 1 has not stopped yet";
  EXPECT_TRUE(policy->TakeSignals().empty());
  // Worker 1 hands in its run and asks: the pool's first chunk, after the run.
  ExpectLease(Finish(*policy, 1, {13, 16}, 8, 2.9), {16, 18});
  std::vector<WorkerId> signals = policy->TakeSignals();
  std::sort(signals.begin(), signals.end());
  EXPECT_EQ(signals, (std::vector<WorkerId>{0, 2}));
  EXPECT_EQ(policy->stats().duplicate_items, 0u);
}

TEST(PolicyTest, AdaptiveThiefTakesTheFarEndOfTheSlowestLease) {
  // Without slow start, so that the steal is sized by the formula alone.
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  // Worker 1 computes one item a second; its cadence becomes a tenth of its
  // predicted lease time, 50 / 1 / 10 = 5 s.
  Reply reply = Progress(*policy, 1, {50, 51}, 1, 1);
  EXPECT_EQ(KindName(reply.kind), "kContinue");
  EXPECT_EQ(reply.lease, (Range{50, 100}));
  EXPECT_DOUBLE_EQ(reply.report_every_s, 5);
  // Worker 0 computes ten a second and finishes at t = 5 with the pool empty.
  // Worker 1 is predicted at 55 by now and at 56 when it next reports (t = 6),
  // so it may have begun item 56: the safe point is 57. Of the 43 items after
  // it the thief takes x with x/10 = (43 - x)/1 + (6 - 5): x = 44 / 1.1 = 40.
  reply = Finish(*policy, 0, {0, 50}, 5, 5);
  ExpectLease(reply, {60, 100});
  EXPECT_EQ(policy->stats().steals, 1u);
  EXPECT_EQ(policy->stats().moved_items, 40u);
  // The victim learns its new end in the reply to its next report.
  reply = Progress(*policy, 1, {51, 56}, 6, 5);
  EXPECT_EQ(KindName(reply.kind), "kContinue");
  EXPECT_EQ(reply.lease, (Range{50, 60}));
  // Both finish the job.
  EXPECT_EQ(KindName(Finish(*policy, 1, {56, 60}, 10, 4).kind), "kWait");
  EXPECT_EQ(KindName(Finish(*policy, 0, {60, 100}, 10, 4).kind), "kDone");
  EXPECT_TRUE(policy->Finished());
  EXPECT_EQ(policy->stats().duplicate_items, 0u);
}

// An exec step that runs one command for several items cannot stop inside
// it, and its result is the run's whole: a cut there would have that result
// dropped once the thief hands in an item past the cut (on real nodes a Pi
// 3B's run of two archives, 24 s, was dropped so, and its first archive run
// again at the end). The steal above, with worker 1's report naming a run of
// [51, 80) under way: the thief's part begins at the run's end or later, the
// victim keeps the run, and every item is handed in once.
TEST(PolicyTest, AdaptiveNeverCutsALeaseInsideARunUnderWay) {
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  Report running{1, 1, {{50, 51}}, 1, 51, false, {}};
  running.running_end = 80;
  EXPECT_EQ(policy->OnReport(running).lease, (Range{50, 100}));
  const Reply stolen = Finish(*policy, 0, {0, 50}, 5, 5);
  ExpectLease(stolen, {stolen.lease.begin, 100});
  EXPECT_GE(stolen.lease.begin, 80u) << "not inside the run [51, 80)";
  EXPECT_LT(stolen.lease.begin, 100u);
  EXPECT_EQ(policy->LeaseOf(1), (Range{50, stolen.lease.begin}));
  Finish(*policy, 1, {51, stolen.lease.begin}, 40, 35);
  EXPECT_EQ(KindName(Finish(*policy, 0, stolen.lease, 40, 2).kind), "kDone");
  EXPECT_TRUE(policy->Finished());
  EXPECT_EQ(policy->stats().duplicate_items, 0u);
}

// A run under way is predicted from when it began, not from its last
// heartbeat (on real nodes a Pi 4B 30 s into a 34-s run was predicted to
// need 34 s more, and an idle Pi 4B spent 20 s on a backup copy of it that
// lost). Worker 0 (1 item a second) begins a run of [3, 33) at t = 3 and
// heartbeats at t = 30 with the run still under way: it ends near t = 33.
// Worker 1 (about 2.2 a second) runs out at t = 31, and a copy of the run
// would end near t = 45: it waits. Once the run is past its predicted length
// (a heartbeat at t = 40), it is given that length anew and the copy is worth
// taking: t = 41 + 30 / 2.2 is before 40 + 30.
TEST(PolicyTest, AdaptiveCountsARunUnderWayFromItsStartNotFromItsLastHeartbeat) {
  for (const double heard : {30.0, 40.0}) {
    SCOPED_TRACE(heard);
    auto policy = Make("adaptive", {{"slowStart", "off"}, {"rebalance", "off"}});
    policy->Start(Job(100, {1, 2}), 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 33});
    ExpectLease(Ask(*policy, 1, 0), {33, 100});
    Report begun{0, 3, {{0, 3}}, 3, 3, false, {}};
    begun.running_end = 33;
    policy->OnReport(begun);
    const Report heartbeat{0, heard, {}, 0, 3, false, {}, 33};
    EXPECT_EQ(KindName(policy->OnReport(heartbeat).kind), "kContinue");
    const Reply idle = Finish(*policy, 1, {33, 100}, heard + 1, heard + 1);
    if (heard < 33) {
      EXPECT_EQ(KindName(idle.kind), "kWait") << "got " << idle.lease.ToString();
      EXPECT_EQ(policy->stats().backups, 0u);
    } else {
      ExpectLease(idle, {3, 33});
      EXPECT_EQ(policy->stats().backups, 1u);
    }
  }
}

// Every cut of a lease stops at a run under way, whoever cuts: the
// rebalance of a worker whose estimate falls behind, mms's stop. Worker 0 of
// two is far slower than its prior says and its excess goes back to the pool,
// but not the run it reports.
TEST(PolicyTest, ARebalanceGivesBackNothingOfARunUnderWay) {
  for (const uint64_t run_end : {uint64_t{0}, uint64_t{95}}) {
    SCOPED_TRACE(run_end);
    auto policy = Make("adaptive", {{"slowStart", "off"}});
    policy->Start(Job(200, {1, 1}), 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 100});
    ExpectLease(Ask(*policy, 1, 0), {100, 200});
    Progress(*policy, 1, {100, 150}, 5, 5);        // 10 items/s
    Report slow{0, 5, {{0, 5}}, 5, 5, false, {}};  // 1 item/s
    slow.running_end = run_end;
    policy->OnReport(slow);
    const Report later{0, 10, {{5, 10}}, 5, 10, false, {}, run_end};
    const Reply reply = policy->OnReport(later);
    ASSERT_EQ(KindName(reply.kind), "kContinue");
    if (run_end == 0) {
      EXPECT_LT(reply.lease.end, 95u) << "the control: the excess goes back";
    } else {
      EXPECT_GE(reply.lease.end, run_end) << reply.lease.ToString();
    }
  }
}

// A failed item is done, but its declared cost was not computed: the same
// run as above with 30 of worker 0's 50 items failed measures it at 20 items
// in 5 s, not 50, and the steal it makes is sized by that.
TEST(PolicyTest, AdaptiveDoesNotCountFailedItemsTowardASpeed) {
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  Progress(*policy, 1, {50, 51}, 1, 1);
  Report report{0, 5, {{0, 50}}, 5, 50, true, {}};
  report.failed = {{10, 40}};
  const Reply reply = policy->OnReport(report);
  EXPECT_EQ(KindName(reply.kind), "kLease");
  EXPECT_GT(reply.lease.begin, 60u)
      << "a smaller steal than the 40 items of a 10/s worker: " << reply.lease.ToString();
  EXPECT_EQ(reply.lease.end, 100u);
  EXPECT_LT(policy->stats().moved_items, 40u);
}

// Regression guard: a victim that was faster than predicted computes past the
// end it was cut to, and reports items of its thief's lease. Those items are
// finished; a later steal must not lease them again.
TEST(PolicyTest, AdaptiveSignalsAVictimWhoseNextReportComesTooLateForASteal) {
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  // Worker 1 computes one item a second and last reported at t = 44, at
  // item 94, with a cadence of 5 s: it will not report again before t = 49,
  // when it will have finished.
  Progress(*policy, 1, {50, 51}, 1, 1);
  const Reply cadence = Progress(*policy, 1, {51, 94}, 44, 43);
  ASSERT_GT(cadence.report_every_s, 4);
  (void)policy->TakeSignals();
  // Worker 0 finishes its share at t = 45 and finds the pool empty. Waiting
  // for worker 1's next report would leave nothing to steal, so worker 1 is
  // signalled to report at its next item and the thief takes the far end
  // of what it cannot have begun by then.
  const Reply stolen = Finish(*policy, 0, {0, 50}, 45, 45);
  ASSERT_EQ(KindName(stolen.kind), "kLease");
  EXPECT_EQ(stolen.lease.end, 100u);
  EXPECT_GE(stolen.lease.begin, 96u);
  EXPECT_LT(stolen.lease.begin, 100u);
  EXPECT_EQ(policy->TakeSignals(), std::vector<WorkerId>{1});
  // Signalled, worker 1 reports at once and learns its new end.
  const Reply learned = Progress(*policy, 1, {94, 95}, 45.1, 1.1);
  EXPECT_EQ(KindName(learned.kind), "kContinue");
  EXPECT_EQ(learned.lease.end, stolen.lease.begin);
  EXPECT_EQ(KindName(Finish(*policy, 1, {95, stolen.lease.begin}, 47, 2).kind), "kWait");
  EXPECT_EQ(KindName(Finish(*policy, 0, stolen.lease, 47, 2).kind), "kDone");
  EXPECT_TRUE(policy->Finished());
}

TEST(PolicyTest, AdaptiveStealNeverLeasesFinishedItems) {
  // Without slow start, so that the steal is sized by the formula alone.
  auto policy = Make("adaptive", {{"slowStart", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  Progress(*policy, 0, {0, 1}, 1, 1);
  Progress(*policy, 1, {50, 51}, 1, 1);
  // Worker 1 finishes early and steals the far end of worker 0's lease.
  Reply reply = Finish(*policy, 1, {51, 100}, 2, 1);
  ASSERT_EQ(KindName(reply.kind), "kLease");
  const Range stolen = reply.lease;
  ASSERT_EQ(stolen.end, 50u);
  ASSERT_GT(stolen.begin, 1u);
  // Worker 0 was faster than predicted: before it learns its new end it has
  // computed well into the stolen range, and reports it.
  const Range overran{1, 48};
  ASSERT_GT(overran.end, stolen.begin);
  reply = Progress(*policy, 0, overran, 6, 5);
  // It steals again from the far end of worker 1's lease, which must not
  // hold an item it has just reported finished.
  ASSERT_EQ(KindName(reply.kind), "kLease");
  EXPECT_EQ(reply.lease.end, 50u);
  IntervalSet finished;
  finished.Add({0, 1});
  finished.Add({50, 100});
  finished.Add(overran);
  EXPECT_EQ(finished.CountIn(reply.lease), 0u)
      << "worker 0 was leased " << reply.lease.ToString() << ", of which "
      << finished.CountIn(reply.lease) << " items it had just reported finished";
  EXPECT_EQ(policy->stats().completed_items, 1u + 50 + 47);
}

// A history prior (credibility 1) is not thrown over by a worker's first
// short report: two workers with equal priors, the second's first report
// says it is three times slower than the first. On fuzzy weights
// (credibility 0) adaptive believes it at once and gives half its lease
// back; on a credible prior it keeps its lease until it has measured enough
// of its share to outweigh the prior, and then gives back what it cannot
// finish.
TEST(PolicyTest, AdaptiveTrustsACrediblePriorAgainstItsFirstReports) {
  const auto moved_after = [](double credibility, Range second_report, double at) {
    auto policy = Make("adaptive", {{"slowStart", "off"}});
    JobInfo job = CredibleJob(1000, {1, 1}, credibility);
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 500});
    ExpectLease(Ask(*policy, 1, 0), {500, 1000});
    Progress(*policy, 0, {0, 1}, 0.1, 0.1);      // 10 items a second
    Progress(*policy, 1, {500, 501}, 0.3, 0.3);  // 3.3 items a second
    if (!second_report.empty()) {
      Progress(*policy, 0, {1, 1 + static_cast<uint64_t>(10 * (at - 0.1))}, at, at - 0.1);
      Progress(*policy, 1, second_report, at, at - 0.3);
    }
    return policy->stats().moved_items;
  };
  EXPECT_GT(moved_after(0, {}, 0), 100u) << "fuzzy weights: the first report decides";
  EXPECT_EQ(moved_after(1, {}, 0), 0u) << "a credible prior outweighs one item";
  // 3.3 items a second for 60 s: 200 items, more than the quarter of its
  // 500-item share that the prior is worth; the measurement now counts 0.6.
  EXPECT_GT(moved_after(1, {501, 700}, 60.3), 50u);
}

// The endgame backup: a slow worker two items from its end is predicted to
// finish before a steal sized for both to end together could reach it; the
// fast idle worker computes a copy of those two items instead. If the
// slow one is paused (a CPU quota's throttled period), the copy ends the job;
// if it is on time, its own result counts and the copy is dropped.
TEST(PolicyTest, AdaptiveBacksUpTheLastLeaseWhenNothingIsWorthStealing) {
  const auto endgame = [](std::map<std::string, std::string> options, bool repeatable = true) {
    // Without rebalancing and slow start: the steal and the backup alone.
    options["slowStart"] = "off";
    options["rebalance"] = "off";
    auto policy = Make("adaptive", options);
    JobInfo job = Job(100, {10, 1});
    job.repeatable = repeatable;
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 90});
    ExpectLease(Ask(*policy, 1, 0), {90, 100});
    // Worker 1 computes about an item a second and is at item 98 at t = 8.5:
    // it is predicted to end near t = 10.7.
    Progress(*policy, 1, {90, 91}, 1, 1);
    Progress(*policy, 1, {91, 98}, 8.5, 7.5);
    (void)policy->TakeSignals();
    return policy;
  };
  {
    auto policy = endgame({});
    // Worker 0 computes ten items a second and is done at t = 9.1.
    const Reply copy = Finish(*policy, 0, {0, 90}, 9.1, 9.1);
    ExpectLease(copy, {98, 100});
    EXPECT_EQ(policy->stats().backups, 1u);
    EXPECT_TRUE(policy->TakeSignals().empty()) << "the victim is neither cut nor told";
    // Worker 1 is paused; the copy is done at t = 9.3 and ends the job.
    EXPECT_EQ(KindName(Finish(*policy, 0, {98, 100}, 9.3, 0.2).kind), "kDone");
    EXPECT_TRUE(policy->Finished());
    // Its late result is a duplicate.
    EXPECT_EQ(KindName(Finish(*policy, 1, {98, 100}, 11, 2.5).kind), "kDone");
    EXPECT_EQ(policy->stats().duplicate_items, 2u);
  }
  {
    // On time, worker 1 hands in first; the copy's result is the duplicate.
    auto policy = endgame({});
    ExpectLease(Finish(*policy, 0, {0, 90}, 9.1, 9.1), {98, 100});
    EXPECT_EQ(KindName(Finish(*policy, 1, {98, 100}, 9.2, 0.7).kind), "kDone");
    EXPECT_TRUE(policy->Finished());
    EXPECT_EQ(KindName(Finish(*policy, 0, {98, 100}, 9.3, 0.2).kind), "kDone");
    EXPECT_EQ(policy->stats().duplicate_items, 2u);
  }
  // With no backup to make (backups off, or items that must not run twice:
  // an exec command's side effects), the fast worker takes the last item
  // whole, though a steal sized for both to end together is worth less than
  // it: it finishes it at about t = 9.2, where worker 1 would at 10.7.
  {
    auto policy = endgame({{"backup", "off"}});
    ExpectLease(Finish(*policy, 0, {0, 90}, 9.1, 9.1), {99, 100});
    EXPECT_EQ(policy->stats().backups, 0u);
    EXPECT_EQ(policy->TakeSignals(), std::vector<WorkerId>{1});
  }
  {
    auto policy = endgame({}, /*repeatable=*/false);
    ExpectLease(Finish(*policy, 0, {0, 90}, 9.1, 9.1), {99, 100});
    EXPECT_EQ(policy->stats().backups, 0u);
  }
}

// The worker predicted to finish last may have nothing to give: one
// indivisible item under way. The idle thief then steals from the next
// latest, which still holds many items, instead of waiting (or copying that
// one item): worker 0 (a tiny prior, an item in 30 s) computes its last
// item until about t = 60, worker 1 has 21 items left to about t = 35,
// worker 2 is done at t = 30.
TEST(PolicyTest, AdaptiveStealsFromTheNextLatestWhenTheLastHasNothingToGive) {
  for (const char* backup : {"off", "on"}) {
    SCOPED_TRACE(backup);
    auto policy =
        Make("adaptive", {{"slowStart", "off"}, {"rebalance", "off"}, {"backup", backup}});
    policy->Start(Job(300, {0.02, 1, 1}), 0);
    const Range slow = Ask(*policy, 0, 0).lease;
    const Range next = Ask(*policy, 1, 0).lease;
    const Range thief = Ask(*policy, 2, 0).lease;
    ASSERT_EQ(slow, (Range{0, 2}));
    ASSERT_EQ(next.begin, 2u);
    ASSERT_EQ(thief.end, 300u);
    ASSERT_LT(next.end, 160u);
    Progress(*policy, 0, {0, 1}, 30, 30);
    Progress(*policy, 1, {2, 130}, 30, 30);
    const Reply stolen = Finish(*policy, 2, thief, 30, 30);
    ASSERT_EQ(KindName(stolen.kind), "kLease");
    EXPECT_GT(stolen.lease.begin, 130u);
    EXPECT_EQ(stolen.lease.end, next.end) << stolen.lease.ToString();
    EXPECT_EQ(policy->stats().backups, 0u);
  }
}

TEST(PolicyTest, AdaptiveWithoutStealingLetsTheFastWorkerWait) {
  auto policy = Make("adaptive", {{"stealing", "off"}});
  policy->Start(Job(100, {1, 1}), 0);
  ExpectLease(Ask(*policy, 0, 0), {0, 50});
  ExpectLease(Ask(*policy, 1, 0), {50, 100});
  Progress(*policy, 1, {50, 51}, 1, 1);
  EXPECT_EQ(KindName(Finish(*policy, 0, {0, 50}, 5, 5).kind), "kWait");
  EXPECT_EQ(policy->stats().steals, 0u);
  ASSERT_EQ(policy->WaitNotes().size(), 1u);
  EXPECT_EQ(policy->WaitNotes()[0].why, "stealing is off");
  EXPECT_FALSE(policy->WaitNotes()[0].victim.has_value());
}

struct BadSpec {
  std::string title;
  std::string name;
  std::map<std::string, std::string> options;
  std::vector<std::string> named;  // what the message must name
};

TEST(PolicyTest, BadSpecsAreInvalidAndNameTheFieldAndTheProblem) {
  std::vector<BadSpec> cases = {
      {"unknown policy",
       "roundrobin",
       {},
       {"policy.name: expected a policy", "\"roundrobin\"", "adaptive"}},
      {"empty name", "", {}, {"policy.name: expected a policy"}},
      {"chunk out of range",
       "selfsched",
       {{"chunk", "0"}},
       {"policy.chunk: expected an integer", "got 0"}},
      {"chunk not a number", "mms", {{"chunk", "many"}}, {"policy.chunk", "\"many\""}},
      {"bad compensation",
       "adaptive",
       {{"compensation", "method2"}},
       {"policy.compensation", "method3", "\"method2\""}},
      {"bad switch", "adaptive", {{"stealing", "maybe"}}, {"policy.stealing", "\"maybe\""}},
      {"report interval too short",
       "adaptive",
       {{"minReportSeconds", "1e-9"}},
       {"policy.minReportSeconds", "1e-06"}},
  };
  for (const std::string& name : PolicyNames()) {
    cases.push_back({name + " with an unknown option",
                     name,
                     {{"bogus", "1"}},
                     {"policy.bogus: policy " + name + " has no option \"bogus\""}});
  }
  for (const BadSpec& c : cases) {
    SCOPED_TRACE(c.title);
    auto read = testing_support::ReadPolicy(c.name, c.options);
    ASSERT_FALSE(read.ok());
    EXPECT_EQ(read.status().code(), StatusCode::kInvalid);
    for (const std::string& part : c.named) {
      EXPECT_NE(read.status().message().find(part), std::string::npos)
          << "'" << read.status().message() << "' does not name " << part;
    }
  }
  // Labels are not options.
  auto labelled = testing_support::ReadPolicy("adaptive", {{"compensation", "none"}}, "my-label");
  ASSERT_TRUE(labelled.ok()) << labelled.status().ToString();
  EXPECT_EQ(labelled->display(), "my-label");
  EXPECT_EQ(labelled->name(), "adaptive");
}

// Each option reads into its policy's typed options, booleans as booleans or
// the simulator's on/off, and the defaults are the policy's own.
TEST(PolicyTest, OptionsAreReadOnceIntoTheirPolicysTypedStruct) {
  const auto read = [](const nlohmann::json& node) {
    auto spec = PolicyFromJson(node, "spec.policy");
    EXPECT_TRUE(spec.ok()) << spec.status().ToString();
    return spec.ok() ? *spec : PolicySpec{};
  };
  EXPECT_EQ(std::get<AdaptiveOptions>(read("adaptive").options), AdaptiveOptions{});
  const PolicySpec adaptive = read({{"name", "adaptive"},
                                    {"compensation", "none"},
                                    {"stealing", false},
                                    {"hedge", "off"},
                                    {"backup", "on"},
                                    {"minReportSeconds", 0.25}});
  const auto& options = std::get<AdaptiveOptions>(adaptive.options);
  EXPECT_FALSE(options.compensation);
  EXPECT_FALSE(options.stealing);
  EXPECT_FALSE(options.hedge);
  EXPECT_TRUE(options.backup);
  EXPECT_TRUE(options.rebalance);
  EXPECT_EQ(options.min_report_seconds, 0.25);
  EXPECT_EQ(std::get<SelfSchedOptions>(read({{"name", "selfsched"}, {"chunk", 8}}).options).chunk,
            8u);
  EXPECT_EQ(std::get<SelfSchedOptions>(read("selfsched").options).chunk, 0u);
  EXPECT_EQ(
      std::get<GuidedOptions>(read({{"name", "guided"}, {"minChunk", 4.0}}).options).min_chunk, 4u);
  EXPECT_EQ(read({{"name", "mms"}, {"chunk", nullptr}}), read("mms"));  // null: not written
  EXPECT_EQ(read("weighted").name(), "weighted");
  // A boolean written as a string a YAML 1.1 reader would take is refused.
  EXPECT_FALSE(PolicyFromJson({{"name", "adaptive"}, {"stealing", "no"}}, "p").ok());
  EXPECT_FALSE(PolicyFromJson({{"name", "selfsched"}, {"chunk", 2.5}}, "p").ok());
  EXPECT_FALSE(PolicyFromJson(42, "p").ok());
}

// When inputs move, adaptive sets work from the pool aside for a computing
// worker so that it can fetch its inputs before it asks; the reply to the
// worker's progress report names it, its next lease is made of it, and a
// worker that is lost gives it back.
std::vector<Range> Ranges(Range range) { return {range}; }

JobInfo InputsMove(JobInfo job) {
  job.inputs_move = true;
  return job;
}

// Worker 0 computes ten items a second, worker 1 one. At t = 1, worker 1's
// excess over its fair share goes back to the pool: its load is 49 of a
// total 89 at a total speed of 11, so it keeps 8.1 and gives 40.9 from the
// far end, and keeps [50, 60). From t = 2, worker 0 wants what it can do by
// the common end beyond its lease, 10 * 78 / 11 - 30 = 40.9 items, set aside
// in slow-start steps: first 4 report floors of its speed (4 * 0.05 * 10 =
// 2 items), then at most twice the last.
void SetAsideThreeSteps(Policy& policy) {
  ExpectLease(Ask(policy, 0, 0), {0, 50});
  ExpectLease(Ask(policy, 1, 0), {50, 100});
  EXPECT_TRUE(Progress(policy, 0, {0, 10}, 1, 1).prefetch.empty()) << "the pool is still empty";
  EXPECT_EQ(Progress(policy, 1, {50, 51}, 1, 1).lease, (Range{50, 60}));
  EXPECT_EQ(Progress(policy, 0, {10, 20}, 2, 1).prefetch, Ranges({60, 62}));
  EXPECT_EQ(Progress(policy, 0, {20, 30}, 3, 1).prefetch, Ranges({62, 66}));
  EXPECT_EQ(Progress(policy, 0, {30, 40}, 4, 1).prefetch, Ranges({66, 74}));
}

TEST(PolicyTest, AdaptiveSetsAsideTheWorkAWorkerWillWantAfterItsLease) {
  auto policy = Make("adaptive");
  policy->Start(InputsMove(Job(100, {1, 1})), 0);
  SetAsideThreeSteps(*policy);
  // Its next lease is what was set aside for it, in one piece.
  ExpectLease(Finish(*policy, 0, {40, 50}, 5, 1), {60, 74});
  EXPECT_TRUE(policy->TakeSignals().empty());
}

TEST(PolicyTest, AdaptiveSetsNothingAsideWhenInputsDoNotMoveOrPrefetchIsOff) {
  for (auto [inputs_move, prefetch] : {std::pair{false, "on"}, std::pair{true, "off"}}) {
    auto policy = Make("adaptive", {{"prefetch", prefetch}});
    JobInfo job = Job(100, {1, 1});
    job.inputs_move = inputs_move;
    policy->Start(job, 0);
    ExpectLease(Ask(*policy, 0, 0), {0, 50});
    ExpectLease(Ask(*policy, 1, 0), {50, 100});
    Progress(*policy, 0, {0, 10}, 1, 1);
    Progress(*policy, 1, {50, 51}, 1, 1);
    for (double t : {2.0, 3.0, 4.0}) {
      const uint64_t at = static_cast<uint64_t>(t) * 10;
      EXPECT_TRUE(Progress(*policy, 0, {at - 10, at}, t, 1).prefetch.empty());
    }
    // The pool's work goes out when the worker asks.
    EXPECT_EQ(Finish(*policy, 0, {40, 50}, 5, 1).lease.begin, 60u);
  }
}

TEST(PolicyTest, AdaptiveGivesBackWhatWasSetAsideForALostWorker) {
  auto policy = Make("adaptive");
  policy->Start(InputsMove(Job(100, {1, 1})), 0);
  SetAsideThreeSteps(*policy);
  policy->OnWorkerLost(0, 4.5);
  // Worker 1 finishes its lease and finds [40, 50) of the lost worker's lease
  // and the set-aside [60, 74) back in the pool.
  const Reply reply = Finish(*policy, 1, {51, 60}, 10, 9);
  ASSERT_EQ(KindName(reply.kind), "kLease");
  EXPECT_EQ(reply.lease.begin, 40u);
  EXPECT_EQ(policy->stats().steals, 0u);
}

TEST(PolicyTest, AdaptiveThiefTakesSetAsideWorkBeforeItIsLeased) {
  auto policy = Make("adaptive");
  policy->Start(InputsMove(Job(100, {1, 1})), 0);
  SetAsideThreeSteps(*policy);
  // Worker 0 slows down: at a tenth of its speed it takes the rest of the
  // pool aside in two more steps and is predicted to finish last.
  EXPECT_EQ(Progress(*policy, 0, {40, 41}, 4.1, 0.1).prefetch, Ranges({74, 90}));
  EXPECT_EQ(Progress(*policy, 0, {41, 42}, 4.2, 0.1).prefetch, Ranges({90, 100}));
  // Worker 1 finishes its lease with the pool empty and takes the far end of
  // worker 0's set-aside work, which worker 0 never gets.
  const Reply stolen = Finish(*policy, 1, {51, 60}, 6, 5);
  ASSERT_EQ(KindName(stolen.kind), "kLease");
  EXPECT_EQ(stolen.lease.end, 100u);
  EXPECT_EQ(policy->stats().steals, 1u);
  const Reply next = Finish(*policy, 0, {42, 50}, 7, 1);
  ExpectLease(next, {60, stolen.lease.begin});
  EXPECT_TRUE(policy->TakeSignals().empty()) << "a set-aside steal needs no signal";
  EXPECT_TRUE(PlayOut(*policy, {{next.lease, false}, {stolen.lease, false}}, 7));
  EXPECT_EQ(policy->stats().duplicate_items, 0u);
}

// ---------------------------------------------------------------------------
// Numbers from outside: weights and reported times that are absurd.

bool PriorInBounds(double speed) { return speed >= kMinPriorSpeed && speed <= kMaxPriorSpeed; }

// Regression: node labels such as cpu-ghz "1e200" / "1e-200" gave weights inf
// and NaN, and adaptive then looped forever inside the coordinator, holding
// the job's lock (its FinishTimes treap, keyed by NaN finish times, grew a
// cycle). Every policy now refuses such weights at Start, naming the worker.
TEST(PolicyTest, InfAndNanWeightsAreRefusedAtStartNotAnEndlessLoop) {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<std::vector<double>> cases = {
      {inf, nan, inf}, {1, inf}, {1, nan}, {1, 0}, {1, -1}, {1, 1e-300}, {1, 1e300}, {1, -inf}};
  for (const std::string& name : PolicyNames()) {
    for (const std::vector<double>& priors : cases) {
      SCOPED_TRACE(name + " w1 speed " + std::to_string(priors[1]));
      auto policy = Make(name);
      ASSERT_NE(policy, nullptr);
      const Status started = policy->Start(Job(100, priors), 0);
      EXPECT_EQ(started.code(), StatusCode::kInvalid);
      EXPECT_NE(started.message().find(priors[0] == 1 ? "worker w1: speed" : "worker w0: speed"),
                std::string::npos)
          << started.message();
      EXPECT_NE(started.message().find("expected a finite number in [1e-09, 1e+12]"),
                std::string::npos)
          << started.message();
    }
  }
}

TEST(PolicyTest, JobsWithoutItemsOrWorkersOrBeyondExactItemNumbersAreRefused) {
  for (const std::string& name : PolicyNames()) {
    auto policy = Make(name);
    ASSERT_NE(policy, nullptr);
    EXPECT_EQ(policy->Start(Job(0, {1}), 0).code(), StatusCode::kInvalid) << name;
    EXPECT_EQ(policy->Start(Job(kMaxItems + 1, {1}), 0).code(), StatusCode::kInvalid) << name;
    EXPECT_EQ(policy->Start(Job(10, {}), 0).code(), StatusCode::kInvalid) << name;
    EXPECT_TRUE(policy->Start(Job(10, {kMinPriorSpeed, kMaxPriorSpeed}), 0).ok()) << name;
  }
}

// Every policy, with weights drawn from absurd and extreme values and
// workers that report absurd compute times (0, 1e-300, 1e300 times the
// truth, NaN, infinite, negative), either refuses at Start or finishes with
// every item accounted within the driver's tick budget: no decision spins.
TEST(PolicyTest, AbsurdWeightsOrReportedTimesAreRefusedOrFinishInBoundedSteps) {
  const uint64_t seed = testing_support::TestSeed();
  std::cout << "AbsurdWeightsOrReportedTimesAreRefusedOrFinishInBoundedSteps seed=" << seed
            << " (rerun with BALLAST_TEST_SEED=" << seed << ")\n";
  SCOPED_TRACE("seed=" + std::to_string(seed));
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> priors = {kMinPriorSpeed, kMaxPriorSpeed, 1,   3,   1e-6, 1e9,
                                      1e-300,         1e300,          inf, nan, 0,    -1};
  const size_t kAcceptedPriors = 6;  // the first six
  const std::vector<double> scales = {1, 0, 1e-300, 1e300, inf, nan, -1};
  std::mt19937_64 random(seed);
  std::uniform_real_distribution<double> speed(0.2, 5.0);
  int refused = 0;
  int finished = 0;
  for (int round = 0; round < 12; ++round) {
    for (const Variant& variant : Variants()) {
      DriverConfig config;
      config.inputs_move = variant.inputs_move;
      config.items = 1 + random() % 600;
      const size_t workers = 1 + random() % 4;
      // Half the jobs draw only the extreme weights a policy accepts.
      const size_t choices = random() % 2 == 0 ? priors.size() : kAcceptedPriors;
      bool valid = true;
      for (size_t i = 0; i < workers; ++i) {
        config.speeds.push_back(speed(random));
        config.priors.push_back(priors[random() % choices]);
        valid = valid && PriorInBounds(config.priors.back());
      }
      config.calc_scale = scales[random() % scales.size()];
      // The slowest worker alone, item by item, at 0.2 items a second, with
      // room to spare for waits and re-dos.
      config.max_ticks = 20 * config.items * 20;
      SCOPED_TRACE("round " + std::to_string(round) + " " + variant.Name() +
                   " N=" + std::to_string(config.items) + " P=" + std::to_string(workers) +
                   " calc x" + std::to_string(config.calc_scale));
      auto policy = Make(variant.policy);
      ASSERT_NE(policy, nullptr);
      const DriverResult result = Driver(*policy, config).Run();
      if (!valid) {
        EXPECT_EQ(result.started.code(), StatusCode::kInvalid);
        ++refused;
        continue;
      }
      ExpectEveryItemAccounted(result, config.items);
      ++finished;
      if (HasFailure()) return;
    }
  }
  std::cout << "refused " << refused << ", finished " << finished << "\n";
  EXPECT_GT(refused, 0);
  EXPECT_GT(finished, 0);
}

}  // namespace
}  // namespace ballast::balance
