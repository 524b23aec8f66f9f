#include "core/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <limits>
#include <queue>
#include <variant>

#include "core/balance/efficiency.h"
#include "core/job/failure_policy.h"
#include "core/sim/packing.h"
#include "core/sim/true_cost.h"

namespace ballast::sim {
namespace {

using balance::Range;
using balance::Reply;
using balance::Report;
using balance::WorkerId;

constexpr double kEpsilon = 1e-9;

// kAbsent: not yet joined the job (NodeSpec::join_at); kDead: failed, or
// left the job (drained, NodeSpec::leave_at).
enum class Phase { kAbsent, kAsking, kWaiting, kReceiving, kComputing, kPaused, kDone, kDead };

// When a computing worker reaches each of its next decision points, as
// ScheduleNext computed them (kNever for one it does not have); its wake-up
// is the earliest of them.
//
// The wake-up acts on what these say is due at its time, whatever Integrate
// then finds in cost_done and busy_since_report. The clock is a double: an
// instant far from 0 is a multiple of its resolution (2^-39 s near 10^4 s,
// 2^-26 s near 10^8 s), so the wake-up falls up to half of it before or
// after the exact instant, and the progress integrated to it may fall short
// of the point by up to the rate times that. A test of the progress against
// a tolerance alone then misses the point whenever the shortfall exceeds the
// tolerance, and the next wake-up, now + shortfall / rate, rounds to now
// itself: the worker wakes at one instant for ever. Acting on the due times
// makes every wake-up finish the lease, stop the worker or send a report.
struct Due {
  double finish = balance::kNever;  // the lease's last item is done
  double report = balance::kNever;  // report_every seconds of computing since the last report
  double stop = balance::kNever;    // a signalled worker reaches the item boundary stop_at
  uint64_t stop_at = 0;
  double Earliest() const { return std::min({finish, report, stop}); }
};

struct Worker {
  const NodeSpec* node = nullptr;
  ItemsAtOnceModel at_once;  // how many items it runs at once, and at what cost
  WorkerId id = 0;           // its id in the policy (set when it joins the job)
  double bytes_per_item = 0;
  Phase phase = Phase::kAsking;
  double phase_since = 0;
  Range lease;
  double lease_base = 0;  // true cumulative cost at lease.begin
  double cost_done = 0;   // true cost finished within the lease
  uint64_t reported = 0;  // items of the lease before this one are reported
  double report_every = 0;
  double busy_since_report = 0;
  double rate = 0;           // cost units per second while computing
  double segment_start = 0;  // when cost_done was last brought up to date
  Due due;                   // of the wake-up of the current epoch, while computing
  bool signal_pending = false;
  uint64_t epoch = 0;          // invalidates scheduled wake-ups
  balance::IntervalSet local;  // items whose inputs are on this node
  // Block transfers: the link carries one block at a time, until link_free;
  // prefetched ranges still crossing it arrive at their time.
  double link_free = 0;
  std::vector<std::pair<Range, double>> in_flight;
  WorkerResult result;
};

struct Event {
  // kJoin, kLeave: the node joins or is drained (NodeSpec::join_at,
  // leave_at); kLeaving: a drained worker's last report reaches the coordinator.
  enum class Kind {
    kWake,
    kSpeedChange,
    kArrive,
    kDeliver,
    kSignal,
    kFail,
    kLost,
    kTick,
    kJoin,
    kLeave,
    kLeaving
  };
  double time = 0;
  uint64_t seq = 0;
  Kind kind = Kind::kWake;
  WorkerId worker = 0;
  uint64_t epoch = 0;
  std::variant<std::monostate, Report, Reply> message;

  bool operator>(const Event& other) const {
    return time != other.time ? time > other.time : seq > other.seq;
  }
};

class Simulation {
 public:
  // `dealt`: the scenario's items were dealt in another order than listed
  // (item i is listed item dealt[i]); empty when they were not.
  Simulation(const Scenario& scenario, std::unique_ptr<balance::Policy> policy,
             const std::vector<balance::WorkerPrior>& priors, const SimOptions& options,
             const std::vector<size_t>& dealt)
      : scenario_(scenario),
        options_(options),
        policy_(std::move(policy)),
        cost_(balance::CostModel(scenario.workload.items, scenario.workload.cost,
                                 scenario.workload.item_costs),
              scenario.workload.cost_jitter, scenario.seed, dealt, scenario.workload.start_cost,
              FailingCosts(scenario.workload)),
        item_seconds_(scenario.workload.item_seconds) {
    for (const FailingItem& failing : scenario.workload.failing_items) {
      uint64_t position = failing.item;
      if (dealt.size() == scenario.workload.items) {
        position = static_cast<uint64_t>(std::find(dealt.begin(), dealt.end(), failing.item) -
                                         dealt.begin());
      }
      if (position < scenario.workload.items) failing_.Add(Range{position, position + 1});
    }
    workers_.resize(scenario.nodes.size());
    uint64_t local_begin = 0;
    for (size_t i = 0; i < workers_.size(); ++i) {
      Worker& w = workers_[i];
      w.node = &scenario.nodes[i];
      w.at_once = AtOnce(*w.node, scenario.workload);
      w.bytes_per_item = w.node->bytes_per_item.value_or(scenario.workload.bytes_per_item);
      w.result.name = w.node->name;
      w.result.prior_speed = priors[i].speed;
      w.result.true_speed = w.node->speed;
      w.local = balance::IntervalSet(Range{local_begin, local_begin + w.node->local_items});
      local_begin += w.node->local_items;
    }
    job_.items = scenario.workload.items;
    // Split by count: the policies are told nothing of the costs.
    if (scenario.workload.split == Split::kCost) {
      job_.cost = scenario.workload.cost;
      job_.item_costs = scenario.workload.item_costs;
    }
    declared_ = balance::JobCostModel(job_);
    // The policy starts with the nodes there from the start, in node order;
    // the others join at their time and get the next ids (ids_ maps both ways).
    priors_ = priors;
    for (size_t i = 0; i < workers_.size(); ++i) {
      if (scenario.nodes[i].join_at) continue;
      workers_[i].id = static_cast<WorkerId>(job_.workers.size());
      node_of_.push_back(i);
      job_.workers.push_back(priors[i]);
    }
    // Inputs cross a link when some node ships bytes over a bandwidth
    // (adaptive's slow start probes them). Prefetch is modelled for block
    // transfers; streamed inputs already arrive while the lease computes.
    job_.inputs_cross_links = std::any_of(workers_.begin(), workers_.end(), [](const Worker& w) {
      return w.bytes_per_item > 0 && w.node->bandwidth > 0;
    });
    job_.inputs_move = scenario.workload.transfer == Transfer::kBlock && job_.inputs_cross_links;
    job_.repeatable = scenario.workload.repeatable;
  }

  StatusOr<SimResult> Run() {
    BALLAST_RETURN_IF_ERROR(policy_->Start(job_, 0));
    for (size_t id = 0; id < workers_.size(); ++id) {
      const NodeSpec& node = *workers_[id].node;
      if (node.join_at) {
        SetPhase(workers_[id], Phase::kAbsent, 0);
        Push(*node.join_at, Event::Kind::kJoin, id);
      } else {
        SendReport(id, 0, Report{0, 0, {}, 0, 0, true});
      }
      for (const SpeedChange& change : node.changes) Push(change.at, Event::Kind::kSpeedChange, id);
      if (node.fail_at) Push(*node.fail_at, Event::Kind::kFail, id);
      if (node.leave_at) Push(*node.leave_at, Event::Kind::kLeave, id);
    }
    ScheduleTick();
    while (!queue_.empty() && !finished_) {
      if (++events_ > options_.max_events) {
        return Status(StatusCode::kTerminal,
                      fmt::format("policy {} did not finish within {} simulator events",
                                  policy_->name(), options_.max_events));
      }
      Event event = queue_.top();
      queue_.pop();
      Handle(event);
    }
    if (!finished_) {
      return Status(
          StatusCode::kTerminal,
          fmt::format("policy {} stalled with {} of {} items unfinished (every worker "
                      "is dead or waiting)",
                      policy_->name(), job_.items - policy_->stats().completed_items, job_.items));
    }
    return Result();
  }

 private:
  // The true cost of each failing item, in mean items: its attempts.
  static std::vector<std::pair<uint64_t, double>> FailingCosts(const Workload& workload) {
    std::vector<std::pair<uint64_t, double>> costs;
    for (const FailingItem& failing : workload.failing_items) {
      costs.emplace_back(
          failing.item, (workload.retries + 1.0) * failing.attempt_seconds / workload.item_seconds);
    }
    return costs;
  }

  // Names the failing items among the report's completed ones (as the
  // worker's exec result does: every attempt failed).
  void MarkFailed(Report& report) const {
    if (failing_.empty()) return;
    for (const Range& range : report.completed) {
      for (const Range& failed : failing_.Ranges()) {
        const Range overlap{std::max(range.begin, failed.begin), std::min(range.end, failed.end)};
        if (!overlap.empty()) report.failed.push_back(overlap);
      }
    }
  }

  // `worker`: the node's index (Worker::id is its id in the policy).
  void Push(double time, Event::Kind kind, size_t worker, uint64_t epoch = 0,
            std::variant<std::monostate, Report, Reply> message = {}) {
    queue_.push(
        Event{time, seq_++, kind, static_cast<WorkerId>(worker), epoch, std::move(message)});
  }

  void SetPhase(Worker& w, Phase phase, double now) {
    if (options_.timeline && now > w.phase_since) {
      Segment::Kind kind = w.phase == Phase::kComputing   ? Segment::Kind::kBusy
                           : w.phase == Phase::kReceiving ? Segment::Kind::kTransfer
                                                          : Segment::Kind::kIdle;
      auto& timeline = w.result.timeline;
      if (!timeline.empty() && timeline.back().kind == kind &&
          timeline.back().end == w.phase_since) {
        timeline.back().end = now;
      } else {
        timeline.push_back({w.phase_since, now, kind});
      }
    }
    w.phase = phase;
    w.phase_since = now;
  }

  void Handle(const Event& event) {
    Worker& w = workers_[event.worker];
    const double now = event.time;
    switch (event.kind) {
      case Event::Kind::kWake:
        if (event.epoch != w.epoch) return;
        OnWake(event.worker, now);
        return;
      case Event::Kind::kSpeedChange:
        if (w.phase != Phase::kComputing) return;  // Rate() reads the speed when it starts
        Integrate(w, now);
        ScheduleNext(event.worker, now);
        return;
      case Event::Kind::kArrive:
        OnArrive(event.worker, std::get<Report>(event.message), now);
        return;
      case Event::Kind::kDeliver:
        if (w.phase == Phase::kDead) return;
        OnDeliver(event.worker, std::get<Reply>(event.message), now);
        return;
      case Event::Kind::kSignal:
        if (w.phase == Phase::kDead) return;
        OnSignal(event.worker, now);
        return;
      case Event::Kind::kFail:
        if (w.phase == Phase::kDead) return;  // it left the job before
        Integrate(w, now);
        SetPhase(w, Phase::kDead, now);
        w.result.failed = true;
        ++w.epoch;
        Push(now + scenario_.failure_detection, Event::Kind::kLost, event.worker);
        return;
      case Event::Kind::kLost:
        policy_->OnWorkerLost(w.id, now);
        DeliverSignals(now);
        return;
      case Event::Kind::kJoin:
        OnJoin(event.worker, now);
        return;
      case Event::Kind::kLeave:
        OnLeave(event.worker, now);
        return;
      case Event::Kind::kLeaving:
        Account(event.worker, std::get<Report>(event.message));
        if (!std::get<Report>(event.message).completed.empty()) {
          (void)policy_->OnReport(std::get<Report>(event.message));
        }
        policy_->OnWorkerLost(w.id, now);
        if (policy_->Finished()) {
          finished_ = true;
          makespan_ = now;
          return;
        }
        DeliverSignals(now);
        return;
      case Event::Kind::kTick:
        policy_->OnTick(now);
        DeliverSignals(now);
        ScheduleTick();
        return;
    }
  }

  void ScheduleTick() {
    const double next = policy_->NextTick();
    if (std::isfinite(next)) Push(next, Event::Kind::kTick, 0);
  }

  // Brings the worker's progress up to `now`.
  void Integrate(Worker& w, double now) {
    if (w.phase == Phase::kComputing && now > w.segment_start) {
      const double dt = now - w.segment_start;
      w.cost_done += w.rate * dt;
      w.busy_since_report += dt;
      w.result.busy_s += dt;
    }
    w.segment_start = now;
  }

  double LeaseCost(const Worker& w) const { return cost_.Cost(w.lease); }

  uint64_t Position(const Worker& w) const {
    return cost_.Advance(w.lease.begin, w.lease.end, w.cost_done + kEpsilon);
  }

  // Cost units per second the worker computes at now (its link may cap it).
  double Rate(const Worker& w, double now) const {
    // Items running at once share the node's speed (in cost units per
    // second, all of them together: the lease still finishes in order).
    double rate = SpeedAt(*w.node, now) * w.at_once.throughput() / item_seconds_;
    if (scenario_.workload.transfer == Transfer::kStream && w.bytes_per_item > 0 &&
        w.node->bandwidth > 0 && !w.lease.empty()) {
      // Only the items whose inputs are not on the node cross its link.
      const double remote = static_cast<double>(w.lease.size() - w.local.CountIn(w.lease));
      if (remote > 0) {
        const double items_per_s = w.node->bandwidth / w.bytes_per_item * w.lease.size() / remote;
        rate = std::min(rate, items_per_s * LeaseCost(w) / w.lease.size());
      }
    }
    return rate;
  }

  // Schedules the worker's next decision point while it computes (Due).
  // Requires its progress brought up to now (Integrate).
  void ScheduleNext(size_t id, double now) {
    Worker& w = workers_[id];
    ++w.epoch;
    if (w.phase != Phase::kComputing) return;
    w.rate = Rate(w, now);
    Due due;
    due.finish = now + std::max(0.0, LeaseCost(w) - w.cost_done) / w.rate;
    if (w.report_every > 0) {
      due.report = now + std::max(0.0, w.report_every - w.busy_since_report);
    }
    if (w.signal_pending) {
      // It stops where it is when that is an item boundary, else at the end
      // of the item in progress.
      const uint64_t position = Position(w);
      const bool at_boundary =
          std::fabs(cost_.Cost({w.lease.begin, position}) - w.cost_done) < 1e-9;
      // Running several at once, it finishes those it has begun.
      const uint64_t begun = w.at_once.items > 1 ? w.at_once.items : (at_boundary ? 0 : 1);
      due.stop_at = std::min(position + begun, w.lease.end);
      due.stop =
          now + std::max(0.0, cost_.Cost({w.lease.begin, due.stop_at}) - w.cost_done) / w.rate;
    }
    w.due = due;
    Push(due.Earliest(), Event::Kind::kWake, id, w.epoch);
  }

  void OnWake(size_t id, double now) {
    Worker& w = workers_[id];
    if (w.phase == Phase::kReceiving) {
      SetPhase(w, Phase::kComputing, now);
      w.segment_start = now;
      ScheduleNext(id, now);
      return;
    }
    if (w.phase != Phase::kComputing) return;
    Integrate(w, now);
    // This is the wake-up of w.due (its epoch is current). What was due at it
    // is reached, and so is what the progress reaches to rounding: a report
    // due a hair before the lease's end finds the lease done, and one due at
    // an item boundary stops a signalled worker there.
    const double total = LeaseCost(w);
    const double rounding = kEpsilon * std::max(1.0, total);
    if (w.due.finish <= now || w.cost_done >= total - rounding) {
      FinishLease(id, now);
      return;
    }
    const uint64_t position = Position(w);
    const bool at_boundary =
        std::fabs(cost_.Cost({w.lease.begin, position}) - w.cost_done) < rounding;
    if (w.due.stop <= now || (w.signal_pending && at_boundary)) {
      const uint64_t stop_at = w.due.stop <= now ? w.due.stop_at : position;
      w.cost_done = cost_.Cost({w.lease.begin, stop_at});
      w.signal_pending = false;
      SendProgress(id, now, stop_at);
      SetPhase(w, Phase::kPaused, now);  // waits for the coordinator's answer
      ++w.epoch;
      return;
    }
    if (w.due.report <= now) SendProgress(id, now, position);
    ScheduleNext(id, now);
  }

  void FinishLease(size_t id, double now) {
    Worker& w = workers_[id];
    w.cost_done = LeaseCost(w);
    Report report{0, 0, {}, w.busy_since_report, w.lease.end, true};
    if (w.lease.end > w.reported) {
      report.completed.push_back({w.reported, w.lease.end});
    }
    MarkFailed(report);
    ++w.result.reports;
    w.reported = w.lease.end;
    w.busy_since_report = 0;
    w.signal_pending = false;
    SetPhase(w, Phase::kAsking, now);
    ++w.epoch;
    SendReport(id, now, std::move(report));
  }

  // Reports the worker's progress: the items before `position` are done.
  void SendProgress(size_t id, double now, uint64_t position) {
    Worker& w = workers_[id];
    Report report{0, 0, {}, w.busy_since_report, position, false};
    ++w.result.reports;
    if (position > w.reported) {
      report.completed.push_back({w.reported, position});
      w.reported = position;
    }
    MarkFailed(report);
    w.busy_since_report = 0;
    SendReport(id, now, std::move(report));
  }

  // `kind`: kArrive, or kLeaving for a drained worker's last report.
  void SendReport(size_t id, double now, Report report, Event::Kind kind = Event::Kind::kArrive) {
    ++messages_;
    const double arrive = now + workers_[id].node->latency;
    report.now = arrive;
    report.worker = workers_[id].id;
    Push(arrive, kind, id, 0, std::move(report));
  }

  // The node joins the running job: the policy takes its worker in, and the
  // worker asks for work.
  void OnJoin(size_t node, double now) {
    Worker& w = workers_[node];
    if (w.phase != Phase::kAbsent) return;
    const StatusOr<WorkerId> id = policy_->OnWorkerJoined(priors_[node], now);
    if (!id.ok()) {
      // Its prior was checked with the others' before the start: not reached.
      SetPhase(w, Phase::kDead, now);
      return;
    }
    w.id = *id;
    node_of_.push_back(node);
    SetPhase(w, Phase::kAsking, now);
    SendReport(node, now, Report{0, 0, {}, 0, 0, true});
  }

  // The node is drained: its worker hands in what it finished (the item it
  // was computing is lost), stops, and tells the coordinator, which takes
  // the rest of its lease back at once.
  void OnLeave(size_t node, double now) {
    Worker& w = workers_[node];
    if (w.phase == Phase::kDead || w.phase == Phase::kDone || w.phase == Phase::kAbsent) return;
    Integrate(w, now);
    Report report{0, 0, {}, w.busy_since_report, 0, false};
    if (!w.lease.empty() && w.phase != Phase::kReceiving) {
      const uint64_t position = Position(w);
      report.position = position;
      if (position > w.reported) report.completed.push_back({w.reported, position});
      w.reported = std::max(w.reported, position);
    }
    MarkFailed(report);
    ++w.result.reports;
    w.busy_since_report = 0;
    SetPhase(w, Phase::kDead, now);
    w.result.left = true;
    ++w.epoch;
    SendReport(node, now, std::move(report), Event::Kind::kLeaving);
  }

  // A worker's items are those the coordinator received first: a report
  // still on its way when the job finished never arrives, and an item
  // another worker handed in before (a backup's copy, a step past a cut)
  // counts for that one.
  void Account(size_t id, const Report& report) {
    for (const Range& failed : report.failed) failed_seen_.Add(failed);
    for (const Range& range : report.completed) {
      const uint64_t fresh = arrived_.Add(range);
      if (fresh == 0) continue;
      workers_[id].result.items += fresh;
      workers_[id].result.cost +=
          declared_.Cost(range) * static_cast<double>(fresh) / static_cast<double>(range.size());
    }
  }

  void OnArrive(size_t id, const Report& report, double now) {
    Account(id, report);
    Reply reply = policy_->OnReport(report);
    if (policy_->Finished()) {
      finished_ = true;
      makespan_ = now;
      return;
    }
    ++messages_;
    Push(now + workers_[id].node->latency, Event::Kind::kDeliver, id, 0, reply);
    DeliverSignals(now);
  }

  void DeliverSignals(double now) {
    for (WorkerId id : policy_->TakeSignals()) {
      ++messages_;
      const size_t node = node_of_.at(id);
      Push(now + workers_[node].node->latency, Event::Kind::kSignal, node);
    }
  }

  void OnDeliver(size_t id, const Reply& reply, double now) {
    Worker& w = workers_[id];
    for (const Range& range : reply.prefetch) Prefetch(w, range, now);
    switch (reply.kind) {
      case Reply::Kind::kLease:
        StartLease(id, reply, now);
        return;
      case Reply::Kind::kContinue:
        ApplyEnd(id, reply, now);
        return;
      case Reply::Kind::kWait:
        if (w.phase == Phase::kComputing) return;  // an answer to an older report
        Integrate(w, now);
        w.lease = {};
        SetPhase(w, Phase::kWaiting, now);
        ++w.epoch;
        return;
      case Reply::Kind::kDone:
        Integrate(w, now);
        SetPhase(w, Phase::kDone, now);
        ++w.epoch;
        return;
    }
  }

  // Seconds the worker's link takes to carry the inputs of `items` items.
  double TransferSeconds(const Worker& w, uint64_t items) const {
    if (w.bytes_per_item <= 0 || w.node->bandwidth <= 0) return 0;
    return static_cast<double>(items) * w.bytes_per_item / w.node->bandwidth;
  }

  // Starts fetching the inputs of `range` as a block, after whatever the
  // link carries already.
  void Prefetch(Worker& w, Range range, double now) {
    const uint64_t remote = range.size() - w.local.CountIn(range);
    if (remote == 0 || TransferSeconds(w, remote) <= 0) return;
    w.link_free = std::max(now, w.link_free) + TransferSeconds(w, remote);
    w.in_flight.emplace_back(range, w.link_free);
  }

  // When the inputs of the worker's new lease are all on the node: prefetched
  // blocks that carry some arrive at their time, the rest cross the link as
  // one block now (block transfers) or the first item does (streaming).
  double InputsReady(Worker& w, double now) {
    double ready = now;
    balance::IntervalSet coming;  // items of the lease in blocks still crossing
    std::erase_if(w.in_flight, [&](const std::pair<Range, double>& flight) {
      const Range overlap{std::max(flight.first.begin, w.lease.begin),
                          std::min(flight.first.end, w.lease.end)};
      if (flight.second <= now) {
        w.local.Add(flight.first);
        return true;
      }
      if (!overlap.empty()) {
        ready = std::max(ready, flight.second);
        coming.Add(overlap);
      }
      return false;
    });
    uint64_t here = w.local.CountIn(w.lease);
    for (const Range& range : coming.Ranges()) here += range.size() - w.local.CountIn(range);
    const uint64_t remote = w.lease.size() - here;
    if (remote == 0) return ready;
    if (scenario_.workload.transfer == Transfer::kStream) {
      return std::max(ready, now + TransferSeconds(w, 1));
    }
    w.link_free = std::max(now, w.link_free) + TransferSeconds(w, remote);
    return std::max(ready, w.link_free);
  }

  void StartLease(size_t id, const Reply& reply, double now) {
    Worker& w = workers_[id];
    w.lease = reply.lease;
    w.lease_base = cost_.Cumulative(w.lease.begin);
    w.cost_done = 0;
    w.reported = w.lease.begin;
    w.report_every = reply.report_every_s;
    w.busy_since_report = 0;
    w.signal_pending = false;
    ++w.result.leases;
    const double ready = InputsReady(w, now);
    SetPhase(w, Phase::kReceiving, now);
    ++w.epoch;
    Push(ready, Event::Kind::kWake, id, w.epoch);
  }

  void ApplyEnd(size_t id, const Reply& reply, double now) {
    Worker& w = workers_[id];
    if (reply.lease.begin != w.lease.begin || w.lease.empty()) return;  // a stale answer
    if (w.phase != Phase::kComputing && w.phase != Phase::kPaused && w.phase != Phase::kReceiving) {
      return;
    }
    Integrate(w, now);
    w.report_every = reply.report_every_s;
    if (reply.lease.end < w.lease.end) {
      // Never give up the item already begun (running several at once,
      // the items it has begun).
      const uint64_t position = Position(w);
      const bool begun = w.cost_done > cost_.Cost({w.lease.begin, position}) + 1e-9;
      // A lease still arriving, or a worker paused at a boundary, has
      // nothing in progress.
      const bool started = w.phase == Phase::kComputing;
      const uint64_t in_progress = !started              ? 0
                                   : w.at_once.items > 1 ? static_cast<uint64_t>(w.at_once.items)
                                                         : (begun ? 1 : 0);
      const uint64_t keep = std::min(w.lease.end, position + in_progress);
      w.lease.end = std::max(reply.lease.end, keep);
    }
    if (w.phase == Phase::kPaused) SetPhase(w, Phase::kComputing, now);
    if (w.phase == Phase::kReceiving) return;  // the new end applies when it starts
    if (w.cost_done >= LeaseCost(w) - kEpsilon) {
      FinishLease(id, now);
      return;
    }
    ScheduleNext(id, now);
  }

  void OnSignal(size_t id, double now) {
    Worker& w = workers_[id];
    if (w.phase == Phase::kWaiting) {
      SetPhase(w, Phase::kAsking, now);
      SendReport(id, now, Report{0, 0, {}, 0, 0, true});
    } else if (w.phase == Phase::kComputing || w.phase == Phase::kReceiving) {
      Integrate(w, now);
      w.signal_pending = true;
      if (w.phase == Phase::kComputing) ScheduleNext(id, now);
    }
  }

  // The LPT packing of the items' true costs onto the nodes there from the
  // start, at their initial speeds (packing.h); 0 past ScenarioBounds::kMaxItemCosts items.
  double Packing() const {
    if (job_.items > static_cast<uint64_t>(ScenarioBounds::kMaxItemCosts)) return 0;
    std::vector<double> seconds(job_.items);
    for (uint64_t i = 0; i < job_.items; ++i) seconds[i] = cost_.Cost({i, i + 1}) * item_seconds_;
    std::vector<double> speeds;
    for (const NodeSpec& node : scenario_.nodes) {
      if (!node.join_at) speeds.push_back(node.speed);
    }
    return LptMakespan(std::move(seconds), speeds);
  }

  SimResult Result() {
    SimResult result;
    result.policy = label_;
    result.makespan_s = makespan_;
    // A node computes one item at a time at its speed: the largest item
    // takes at least its seconds over the fastest speed any node reaches.
    double fastest = 0;
    for (const NodeSpec& node : scenario_.nodes) {
      fastest = std::max(fastest, node.speed);
      for (const SpeedChange& change : node.changes) fastest = std::max(fastest, change.speed);
    }
    const balance::Limit limit = balance::PhysicalLimit(
        IdealMakespan(scenario_, cost_.Total() * item_seconds_, cost_.MaxItem() * item_seconds_),
        balance::LargestItemSeconds(cost_.MaxItem() * item_seconds_, fastest));
    result.ideal_s = limit.seconds;
    result.ideal_bound = limit.bound;
    result.efficiency = balance::Efficiency(result.ideal_s, makespan_);
    result.messages = messages_;
    const balance::PolicyStats& stats = policy_->stats();
    result.moved_items = stats.moved_items;
    result.steals = stats.steals;
    result.rebalances = stats.rebalances;
    result.duplicate_items = stats.duplicate_items;
    result.start_cost = stats.start_cost;
    result.events = events_;
    result.failed_items = failed_seen_.size();
    result.job_failed = job::FailsAtTheEnd(result.failed_items, std::nullopt);
    result.packing_s = Packing();
    for (Worker& w : workers_) {
      Integrate(w, makespan_);
      SetPhase(w, w.phase, makespan_);
      // Idle while it was in the job: from joining to failing, leaving or the end.
      const double alive_until = std::min(
          {w.node->fail_at.value_or(makespan_), w.node->leave_at.value_or(makespan_), makespan_});
      const double joined = std::min(w.node->join_at.value_or(0), alive_until);
      w.result.idle_s = std::max(0.0, alive_until - joined - w.result.busy_s);
      result.workers.push_back(std::move(w.result));
    }
    return result;
  }

 public:
  std::string label_;

 private:
  const Scenario& scenario_;
  SimOptions options_;
  std::unique_ptr<balance::Policy> policy_;
  TrueCost cost_;
  balance::CostModel declared_;  // what the coordinator counts a worker's work in: the policy's
  double item_seconds_;
  balance::JobInfo job_;
  std::vector<balance::WorkerPrior> priors_;  // one per node, joiners' included
  std::vector<Worker> workers_;               // one per node, in node order
  std::vector<size_t> node_of_;               // the node of each policy id
  std::priority_queue<Event, std::vector<Event>, std::greater<>> queue_;
  uint64_t seq_ = 0;
  uint64_t events_ = 0;
  uint64_t messages_ = 0;
  bool finished_ = false;
  double makespan_ = 0;
  balance::IntervalSet arrived_;      // items whose results reached the coordinator
  balance::IntervalSet failing_;      // the failing items, as dealt
  balance::IntervalSet failed_seen_;  // failed items whose report reached the coordinator
};

}  // namespace

StatusOr<SimResult> Simulate(const Scenario& scenario,
                             const std::vector<balance::WorkerPrior>& priors,
                             const balance::PolicySpec& spec, const SimOptions& options) {
  if (scenario.nodes.empty()) return Status::Invalid("the scenario has no nodes");
  if (const balance::ItemCosts& costs = scenario.workload.item_costs) {
    BALLAST_RETURN_IF_ERROR(balance::CheckItemCosts(*costs, scenario.workload.items));
  }
  if (priors.size() != scenario.nodes.size()) {
    return Status::Invalid(
        fmt::format("{} priors for {} nodes", priors.size(), scenario.nodes.size()));
  }
  std::unique_ptr<balance::Policy> policy = balance::MakePolicy(spec);
  // Items whose costs the policies are told are dealt as a job deals them.
  Scenario dealt_scenario;
  const Scenario* run = &scenario;
  std::vector<size_t> dealt;
  const Workload& workload = scenario.workload;
  const balance::ItemOrder order = balance::EffectiveItemOrder(workload.order, spec.name());
  if (workload.item_costs && workload.split == Split::kCost &&
      order == balance::ItemOrder::kLargestFirst) {
    dealt = balance::DealOrder(*workload.item_costs, order);
    dealt_scenario = scenario;
    dealt_scenario.workload.item_costs =
        std::make_shared<const std::vector<double>>(balance::Dealt(*workload.item_costs, dealt));
    run = &dealt_scenario;
  }
  Simulation simulation(*run, std::move(policy), priors, options, dealt);
  simulation.label_ = spec.display();
  return simulation.Run();
}

double IdealMakespan(const Scenario& scenario, double work_seconds, double max_item_seconds) {
  const double item_seconds = max_item_seconds > 0
                                  ? max_item_seconds
                                  : work_seconds / static_cast<double>(scenario.workload.items);
  // Each node's capacity while it is in the job (from joining to failing or
  // being drained), one span per stretch between its speed changes.
  std::vector<balance::Capacity> spans;
  for (const NodeSpec& node : scenario.nodes) {
    const double from = node.join_at.value_or(0);
    const double until = std::min(node.fail_at.value_or(std::numeric_limits<double>::infinity()),
                                  node.leave_at.value_or(std::numeric_limits<double>::infinity()));
    std::vector<double> times = {from};
    for (const SpeedChange& change : node.changes) {
      if (change.at > from && change.at < until) times.push_back(change.at);
    }
    times.push_back(until);
    const double bytes = node.bytes_per_item.value_or(scenario.workload.bytes_per_item);
    for (size_t i = 0; i + 1 < times.size(); ++i) {
      double speed = SpeedAt(node, times[i]);
      if (bytes > 0 && node.bandwidth > 0 && node.local_items == 0) {
        speed = std::min(speed, node.bandwidth / bytes * item_seconds);
      }
      spans.push_back({times[i], times[i + 1], speed});
    }
  }
  // Within each stretch of constant total speed the limit is
  // balance::IdealSeconds of the work that remains (docs/efficiency.md).
  return balance::IdealSecondsOver(work_seconds, spans);
}

}  // namespace ballast::sim
