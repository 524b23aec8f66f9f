#include "core/sim/simulator.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <memory>
#include <optional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

#include "core/job/failure_policy.h"
#include "core/sim/event_queue.h"
#include "core/sim/failing_items.h"
#include "core/sim/input_link.h"
#include "core/sim/sim_outcome.h"
#include "core/sim/sim_worker.h"
#include "core/sim/true_cost.h"

namespace ballast::sim {
namespace {

using balance::Range;
using balance::Reply;
using balance::Report;
using balance::WorkerId;

// One run of one policy: the coordinator's side of the job. It hands the
// policy the workers' reports as they arrive and the workers its replies and
// signals, each after its node's latency; turns the nodes' speed changes,
// failures, joins and drains into events; and counts what arrived
// (OutcomeLedger). The workers' side is SimWorker's.
class Simulation {
 public:
  // `dealt`: the scenario's items were dealt in another order than listed
  // (item i is listed item dealt[i]); empty when they were not. `label`: the
  // policy's display name, for the result.
  Simulation(const Scenario& scenario, std::unique_ptr<balance::Policy> policy,
             const std::vector<balance::WorkerPrior>& priors, const SimOptions& options,
             const std::vector<size_t>& dealt, std::string label)
      : scenario_(scenario),
        options_(options),
        label_(std::move(label)),
        policy_(std::move(policy)),
        failing_(scenario.workload, dealt),
        cost_(balance::CostModel(scenario.workload.items, scenario.workload.cost,
                                 scenario.workload.true_costs ? scenario.workload.true_costs
                                                              : scenario.workload.item_costs),
              scenario.workload.cost_jitter, scenario.seed, dealt, scenario.workload.start_cost,
              FailingItems::Costs(scenario.workload)),
        model_{&cost_, &failing_, options.timeline},
        priors_(priors),
        job_(JobOf(scenario, priors)),
        ledger_(scenario.nodes.size(), balance::JobCostModel(job_)) {
    workers_.reserve(scenario.nodes.size());
    uint64_t local_begin = 0;
    for (size_t i = 0; i < scenario.nodes.size(); ++i) {
      const EmulatedNode& node = scenario.nodes[i];
      workers_.emplace_back(node, scenario.workload, model_,
                            Range{local_begin, local_begin + node.local_items}, priors[i].speed);
      local_begin += node.local_items;
    }
  }

  StatusOr<SimResult> Run() {
    BALLAST_RETURN_IF_ERROR(policy_->Start(job_, 0));
    ScheduleNodes();
    ScheduleTick();
    while (!queue_.empty() && !finished_) {
      if (++events_ > options_.max_events) {
        return Status(StatusCode::kTerminal,
                      fmt::format("policy {} did not finish within {} simulator events",
                                  policy_->name(), options_.max_events));
      }
      if (options_.budget != nullptr && ++options_.budget->spent > options_.budget->max) {
        return Status(
            StatusCode::kTerminal,
            fmt::format("the scenario's runs together took {} simulator events, their budget "
                        "(policy {} stopped with {} of {} items done): each run is within its "
                        "bounds, but not all of them; fewer jobs or policies, fewer items, or "
                        "larger chunks finish within it",
                        options_.budget->max, policy_->name(), policy_->stats().completed_items,
                        job_.items));
      }
      Handle(queue_.Pop());
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
  // What the policy is told of the job: the nodes there from the start, in
  // node order (the others join at their time and get the next ids), and the
  // items' costs only when the scenario splits by cost.
  static balance::JobInfo JobOf(const Scenario& scenario,
                                const std::vector<balance::WorkerPrior>& priors) {
    balance::JobInfo job;
    job.items = scenario.workload.items;
    // Split by count: the policies are told nothing of the costs.
    if (scenario.workload.split == Split::kCost) {
      job.cost = scenario.workload.cost;
      job.item_costs = scenario.workload.item_costs;
    }
    for (size_t i = 0; i < scenario.nodes.size(); ++i) {
      if (!scenario.nodes[i].join_at) job.workers.push_back(priors[i]);
    }
    // Inputs cross a link when some node ships bytes over a bandwidth
    // (adaptive's slow start probes them). Prefetch is modelled for block
    // transfers; streamed inputs already arrive while the lease computes.
    job.inputs_cross_links = std::any_of(
        scenario.nodes.begin(), scenario.nodes.end(),
        [&](const EmulatedNode& node) { return InputLink(node, scenario.workload, {}).carries(); });
    job.inputs_move = scenario.workload.transfer == Transfer::kBlock && job.inputs_cross_links;
    job.repeatable = scenario.workload.repeatable;
    return job;
  }

  // The workers there from the start ask for work, with the ids JobOf gave
  // them; the nodes' joins, speed changes, failures and drains are events.
  void ScheduleNodes() {
    for (size_t node = 0; node < workers_.size(); ++node) {
      const EmulatedNode& spec = workers_[node].node();
      if (spec.join_at) {
        queue_.Push(*spec.join_at, Event::Kind::kJoin, node);
      } else {
        const auto id = static_cast<WorkerId>(node_of_.size());
        node_of_.push_back(node);
        Send(node, 0, workers_[node].Join(id, 0));
      }
      for (const SpeedChange& change : spec.changes) {
        queue_.Push(change.at, Event::Kind::kSpeedChange, node);
      }
      if (spec.fail_at) queue_.Push(*spec.fail_at, Event::Kind::kFail, node);
      if (spec.leave_at) queue_.Push(*spec.leave_at, Event::Kind::kLeave, node);
    }
  }

  void ScheduleTick() {
    const double next = policy_->NextTick();
    if (std::isfinite(next)) queue_.Push(next, Event::Kind::kTick, 0);
  }

  void Handle(const Event& event) {
    const size_t node = event.node;
    SimWorker& w = workers_[node];
    const double now = event.time;
    switch (event.kind) {
      case Event::Kind::kWake:
        if (event.epoch == w.epoch()) Send(node, now, w.Wake(now));
        return;
      case Event::Kind::kSpeedChange:
        Send(node, now, w.SpeedChanged(now));
        return;
      case Event::Kind::kArrive:
        OnArrive(node, std::get<Report>(event.message), now);
        return;
      case Event::Kind::kDeliver:
        Send(node, now, w.Deliver(std::get<Reply>(event.message), now));
        return;
      case Event::Kind::kSignal:
        Send(node, now, w.Signal(now));
        return;
      case Event::Kind::kFail:
        if (w.Fail(now)) queue_.Push(now + scenario_.failure_detection, Event::Kind::kLost, node);
        return;
      case Event::Kind::kLost:
        policy_->OnWorkerLost(w.id(), now);
        DeliverSignals(now);
        return;
      case Event::Kind::kJoin:
        OnJoin(node, now);
        return;
      case Event::Kind::kLeave:
        if (std::optional<Report> last = w.Leave(now)) {
          SendReport(node, now, std::move(*last), Event::Kind::kLeaving);
        }
        return;
      case Event::Kind::kLeaving:
        OnLeaving(node, std::get<Report>(event.message), now);
        return;
      case Event::Kind::kTick:
        policy_->OnTick(now);
        DeliverSignals(now);
        ScheduleTick();
        return;
    }
  }

  // Carries out what node `node`'s worker does next: its report, then its
  // wake-up.
  void Send(size_t node, double now, WorkerStep step) {
    if (step.report) SendReport(node, now, std::move(*step.report));
    if (step.wake) queue_.Push(*step.wake, Event::Kind::kWake, node, workers_[node].epoch());
  }

  // `kind`: kArrive, or kLeaving for a drained worker's last report.
  void SendReport(size_t node, double now, Report report, Event::Kind kind = Event::Kind::kArrive) {
    ++messages_;
    const double arrive = now + workers_[node].node().latency;
    report.now = arrive;
    report.worker = workers_[node].id();
    queue_.Push(arrive, kind, node, 0, std::move(report));
  }

  void OnArrive(size_t node, const Report& report, double now) {
    ledger_.Account(node, report);
    Reply reply = policy_->OnReport(report);
    if (policy_->Finished()) {
      Finish(now);
      return;
    }
    ++messages_;
    queue_.Push(now + workers_[node].node().latency, Event::Kind::kDeliver, node, 0, reply);
    DeliverSignals(now);
  }

  void DeliverSignals(double now) {
    for (WorkerId id : policy_->TakeSignals()) {
      ++messages_;
      const size_t node = node_of_.at(id);
      queue_.Push(now + workers_[node].node().latency, Event::Kind::kSignal, node);
    }
  }

  // The node joins the running job: the policy takes its worker in, and the
  // worker asks for work.
  void OnJoin(size_t node, double now) {
    SimWorker& w = workers_[node];
    if (w.phase() != SimWorker::Phase::kAbsent) return;
    const StatusOr<WorkerId> id = policy_->OnWorkerJoined(priors_[node], now);
    if (!id.ok()) {
      // Its prior was checked with the others' before the start: not reached.
      w.Refuse(now);
      return;
    }
    node_of_.push_back(node);
    Send(node, now, w.Join(*id, now));
  }

  // A drained worker's last report reaches the coordinator, which takes the
  // rest of its lease back at once.
  void OnLeaving(size_t node, const Report& report, double now) {
    ledger_.Account(node, report);
    if (!report.completed.empty()) (void)policy_->OnReport(report);
    policy_->OnWorkerLost(workers_[node].id(), now);
    if (policy_->Finished()) {
      Finish(now);
      return;
    }
    DeliverSignals(now);
  }

  void Finish(double now) {
    finished_ = true;
    makespan_ = now;
  }

  SimResult Result() {
    SimResult result;
    result.policy = label_;
    result.makespan_s = makespan_;
    const balance::Limit limit = ScenarioLimit(scenario_, cost_);
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
    result.failed_items = ledger_.failed_items();
    result.job_failed = job::FailsAtTheEnd(result.failed_items, std::nullopt);
    result.packing_s = PackingSeconds(scenario_, cost_);
    for (size_t node = 0; node < workers_.size(); ++node) {
      WorkerResult worker = workers_[node].Finish(makespan_);
      worker.items = ledger_.items(node);
      worker.cost = ledger_.cost(node);
      worker.speed_samples = ledger_.speed_samples(node);
      result.workers.push_back(std::move(worker));
    }
    return result;
  }

  const Scenario& scenario_;
  SimOptions options_;
  std::string label_;
  std::unique_ptr<balance::Policy> policy_;
  FailingItems failing_;
  TrueCost cost_;
  WorkerModel model_;                         // points at failing_ and cost_
  std::vector<balance::WorkerPrior> priors_;  // one per node, joiners' included
  balance::JobInfo job_;
  OutcomeLedger ledger_;            // counts in the policy's declared costs
  std::vector<SimWorker> workers_;  // one per node, in node order
  std::vector<size_t> node_of_;     // the node of each policy id
  EventQueue queue_;
  uint64_t events_ = 0;
  uint64_t messages_ = 0;
  bool finished_ = false;
  double makespan_ = 0;
};

}  // namespace

StatusOr<SimResult> Simulate(const Scenario& scenario,
                             const std::vector<balance::WorkerPrior>& priors,
                             const balance::PolicySpec& spec, const SimOptions& options) {
  if (scenario.nodes.empty()) return Status::Invalid("the scenario has no nodes");
  if (const balance::ItemCosts& costs = scenario.workload.item_costs) {
    BALLAST_RETURN_IF_ERROR(balance::CheckItemCosts(*costs, scenario.workload.items));
  }
  if (const balance::ItemCosts& costs = scenario.workload.true_costs) {
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
  const balance::ItemOrder order = balance::EffectiveItemOrder(workload.order, spec);
  if (workload.item_costs && workload.split == Split::kCost &&
      order == balance::ItemOrder::kLargestFirst) {
    dealt = balance::DealOrder(*workload.item_costs, order);
    dealt_scenario = scenario;
    dealt_scenario.workload.item_costs =
        std::make_shared<const std::vector<double>>(balance::Dealt(*workload.item_costs, dealt));
    // The true costs move with their items.
    if (workload.true_costs) {
      dealt_scenario.workload.true_costs =
          std::make_shared<const std::vector<double>>(balance::Dealt(*workload.true_costs, dealt));
    }
    run = &dealt_scenario;
  }
  return Simulation(*run, std::move(policy), priors, options, dealt, spec.display()).Run();
}

}  // namespace ballast::sim
