// The bookkeeping every policy shares (policy_base.h), and the checks of a
// job every policy makes (policy.h).
#include "core/balance/policy_base.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "core/balance/reserved_shares.h"
#include "core/balance/speed_estimator.h"

namespace ballast::balance {

Status CheckItemCosts(const std::vector<double>& costs, uint64_t items) {
  if (costs.size() != items) {
    return Status::Invalid(
        fmt::format("item_costs: expected one cost per item ({}), got {}", items, costs.size()));
  }
  for (size_t i = 0; i < costs.size(); ++i) {
    // Written so that NaN fails too.
    if (!(costs[i] > 0 && std::isfinite(costs[i]))) {
      return Status::Invalid(
          fmt::format("item_costs[{}]: expected a positive finite cost, got {}", i, costs[i]));
    }
  }
  return Status::Ok();
}

Status CheckPrior(const WorkerPrior& worker) {
  // Written so that NaN fails too.
  if (!(worker.speed >= kMinPriorSpeed && worker.speed <= kMaxPriorSpeed)) {
    return Status::Invalid(
        fmt::format("worker {}: speed {}: expected a finite number in [{:g}, {:g}]", worker.name,
                    worker.speed, kMinPriorSpeed, kMaxPriorSpeed));
  }
  if (!(worker.duty > 0 && worker.duty <= 1)) {
    return Status::Invalid(
        fmt::format("worker {}: duty {}: expected the share of a CPU period it computes, in (0, 1]",
                    worker.name, worker.duty));
  }
  return Status::Ok();
}

Status CheckJob(const JobInfo& job) {
  if (job.items == 0 || job.items > kMaxItems) {
    return Status::Invalid(
        fmt::format("items: expected a whole number in [1, {}], got {}", kMaxItems, job.items));
  }
  if (job.workers.empty()) return Status::Invalid("workers: expected at least one worker");
  if (job.workers.size() > kMaxWorkers) {
    return Status::Invalid(
        fmt::format("workers: expected at most {}, got {}", kMaxWorkers, job.workers.size()));
  }
  for (const WorkerPrior& worker : job.workers) BALLAST_RETURN_IF_ERROR(CheckPrior(worker));
  if (job.item_costs) return CheckItemCosts(*job.item_costs, job.items);
  return Status::Ok();
}

CostModel JobCostModel(const JobInfo& job) {
  return CostModel(job.items, job.cost, job.item_costs);
}

Status PolicyBase::Start(const JobInfo& job, double now) {
  BALLAST_RETURN_IF_ERROR(CheckJob(job));
  job_ = job;
  declared_ = JobCostModel(job);
  learning_ = learn_costs_ && (job.item_costs != nullptr || job.cost != CostShape::kUniform);
  learner_ = StartCostLearner();
  workers_.assign(job.workers.size(), WorkerState{});
  for (auto& worker : workers_) worker.last_contact = worker.position_since = now;
  items_.Reset(job.items, declared_, job.workers.size());
  stats_ = PolicyStats{};
  stats_.learning_costs = learning_;
  for (const Range& range : job.finished.Ranges()) {
    stats_.completed_items += items_.Finish({range.begin, std::min(range.end, job.items)});
  }
  signals_.clear();
  waiting_list_.clear();
  Plan(now);
  return Status::Ok();
}

Reply PolicyBase::OnReport(const Report& report) {
  Reply reply = Decide(report);
  WorkerState& worker = workers_.at(report.worker);
  if (reply.kind != Reply::Kind::kDone) reply.prefetch = std::move(worker.prefetch);
  worker.prefetch.clear();
  return reply;
}

Reply PolicyBase::Decide(const Report& report) {
  Absorb(report);
  WorkerState& worker = workers_.at(report.worker);
  if (Finished()) {
    worker.done = true;
    worker.lease = {};
    return DoneReply();
  }
  if (worker.lost) {
    // Heard from again after it was declared lost: its lease was given back,
    // so it stops at its current item and asks afresh.
    worker.lost = false;
    if (!report.idle)
      return Reply{Reply::Kind::kContinue, {report.position, report.position}, 0, {}};
  }
  if (!report.idle && !worker.lease.empty()) {
    if (auto reply = ContinueLease(report)) return *reply;
  }
  return Reassign(report);
}

void PolicyBase::Absorb(const Report& report) {
  WorkerState& worker = workers_.at(report.worker);
  const double elapsed = report.now - worker.last_contact;
  for (const Range& range : report.completed) {
    const Range clipped{range.begin, std::min(range.end, job_.items)};
    const uint64_t fresh = items_.Finish(clipped);
    stats_.duplicate_items += clipped.size() - fresh;
    stats_.completed_items += fresh;
  }
  if (learning_) Learn(report, elapsed);
  Observe(report, elapsed);
  worker.last_contact = report.now;
  worker.waiting = false;
}

std::optional<Reply> PolicyBase::ContinueLease(const Report& report) {
  WorkerState& worker = workers_.at(report.worker);
  const uint64_t position = std::clamp(report.position, worker.lease.begin, worker.lease.end);
  if (position != worker.position) worker.position_since = report.now;
  worker.position = position;
  worker.running_end = report.running_end;
  if (worker.position >= worker.lease.end) return std::nullopt;
  if (auto own = AfterProgress(report.worker, report.now)) {
    if (own->kind == Reply::Kind::kWait || own->kind == Reply::Kind::kDone) {
      ReleaseToPool(report.worker, Cut(report.worker, worker.position));
      // A run under way cannot stop (Cut keeps it, StopFloor): the worker
      // keeps that run's items, finishes them and asks again.
      if (worker.lease.end > worker.position) {
        return Reply{Reply::Kind::kContinue, worker.lease, worker.report_every_s, {}};
      }
      worker.lease = {};
      if (own->kind == Reply::Kind::kWait) MarkWaiting(report.worker);
    }
    return *own;
  }
  return Reply{Reply::Kind::kContinue, worker.lease, worker.report_every_s, {}};
}

Reply PolicyBase::Reassign(const Report& report) {
  WorkerState& worker = workers_.at(report.worker);
  // An idle worker holds nothing: whatever of its lease it did not report
  // finished (a lease it never received, an answer that crossed its ask, a
  // range it handed in too late) goes back to the pool, so no item is lost.
  // It asks first; what it leaves there wakes the workers waiting for work.
  const bool returned =
      !worker.lease.empty() && ReleaseToPool(report.worker, worker.lease, /*wake=*/false);
  worker.lease = {};
  worker.position = 0;
  worker.running_end = 0;
  Reply reply = Assign(report.worker, report.now);
  if (returned && !pool().empty()) WakeWaiting();
  if (reply.kind == Reply::Kind::kWait) MarkWaiting(report.worker);
  if (reply.kind == Reply::Kind::kDone) worker.done = true;
  return reply;
}

void PolicyBase::Learn(const Report& report, double elapsed) {
  WorkerState& worker = workers_.at(report.worker);
  // As the adaptive policy reads a report (BoundedClaim), since the last sample.
  worker.unsampled_seen_s += std::isfinite(elapsed) ? std::max(0.0, elapsed) : 0.0;
  const double seconds =
      BoundedClaim(report.calc_seconds, worker.unsampled_seen_s, worker.unsampled_s);
  // An idle worker's seconds, and a report with failed items (their
  // declared cost was not computed), say nothing of the items' costs.
  if (worker.lease.empty() || !report.failed.empty()) {
    worker.unsampled_s = worker.unsampled_seen_s = 0;
    return;
  }
  uint64_t items = 0;
  double declared = 0;
  for (const Range& range : report.completed) {
    const Range clipped{range.begin, std::min(range.end, job_.items)};
    if (clipped.empty()) continue;
    items += clipped.size();
    declared += declared_.Cost(clipped);
  }
  worker.unsampled_s += seconds;
  if (items == 0) return;  // the seconds count toward the next sample
  learner_.Add({report.worker, items, declared, worker.unsampled_s});
  worker.unsampled_s = worker.unsampled_seen_s = 0;
  if (!learner_.MaybeRefit()) return;
  stats_.cost_samples = learner_.fit().samples;
  const double learned = learner_.fit().start_cost;
  const double current = cost().start_cost();
  // Only a move by more than a tenth (or to or from none) changes the
  // model: each change costs O(P log P) and resets the sums kept in cost units.
  if (std::fabs(learned - current) > 0.1 * std::max(learned, current)) {
    SetStartCost(learned, report.now);
  }
}

void PolicyBase::SetStartCost(double start_cost, double now) {
  const double old = cost().start_cost();
  items_.SetCost(declared_.WithStartCost(start_cost));
  stats_.start_cost = cost().start_cost();
  AfterCostChanged(old, now);
}

void PolicyBase::OnWorkerLost(WorkerId id, double now) {
  WorkerState& worker = workers_.at(id);
  worker.lost = true;
  worker.waiting = false;
  // The whole lease, not only [position, end): a driver may have refused some
  // of its reported completions (a result it could not merge exactly once),
  // and ReturnToPool skips whatever is finished.
  ReleaseToPool(id, worker.lease);
  worker.lease = {};
  for (const Range& range : items_.DropReserved(id).Ranges()) ReturnToPool(range);
  worker.prefetch.clear();
  // Others may be waiting on this worker even when it returned nothing (its
  // lease was finished by someone else): let them look at the pool again.
  if (!pool().empty()) WakeWaiting();
  AfterLost(id, now);
}

StatusOr<WorkerId> PolicyBase::OnWorkerJoined(const WorkerPrior& prior, double now) {
  BALLAST_RETURN_IF_ERROR(CheckPrior(prior));
  if (workers_.size() >= kMaxWorkers) {
    return Status::Invalid(fmt::format("worker {}: the job has {} workers, the most it may have",
                                       prior.name, kMaxWorkers));
  }
  const auto id = static_cast<WorkerId>(workers_.size());
  job_.workers.push_back(prior);
  workers_.push_back(WorkerState{});
  workers_.back().last_contact = workers_.back().position_since = now;
  items_.AddWorker();
  AfterJoined(id, now);
  return id;
}

std::vector<WorkerId> PolicyBase::TakeSignals() {
  std::vector<WorkerId> out;
  out.swap(signals_);
  return out;
}

Reply PolicyBase::Grant(WorkerId id, Range range, double now, double report_every_s) {
  WorkerState& worker = workers_[id];
  worker.lease = range;
  worker.position = range.begin;
  worker.running_end = 0;
  worker.lease_granted = worker.position_since = now;
  worker.report_every_s = report_every_s;
  return Reply{Reply::Kind::kLease, range, report_every_s, {}};
}

Range PolicyBase::Cut(WorkerId id, uint64_t new_end) {
  WorkerState& worker = workers_[id];
  new_end = std::clamp(new_end, StopFloor(id), worker.lease.end);
  const Range cut{new_end, worker.lease.end};
  worker.lease.end = new_end;
  return cut;
}

void PolicyBase::SetAside(WorkerId id, Range range) {
  if (range.empty()) return;
  items_.SetAside(id, range);
  workers_[id].prefetch.push_back(range);
}

bool PolicyBase::ReleaseToPool(WorkerId worker, Range range, bool wake) {
  const Range shared = SharedLease(worker);
  const Range overlap{std::max(range.begin, shared.begin), std::min(range.end, shared.end)};
  if (overlap.empty()) return ReturnToPool(range, wake);
  const bool before = ReturnToPool({range.begin, overlap.begin}, wake);
  const bool after = ReturnToPool({overlap.end, range.end}, wake);
  return before || after;
}

bool PolicyBase::ReturnToPool(Range range, bool wake) {
  const bool added = items_.ReturnToPool(range);
  if (added && wake) WakeWaiting();
  return added;
}

void PolicyBase::MarkWaiting(WorkerId id) {
  workers_[id].waiting = true;
  waiting_list_.push_back(id);
}

void PolicyBase::WakeWaiting() {
  // Only the workers told to wait since the last wake-up, in id order; a
  // worker that asked again since (or was lost) is no longer waiting.
  std::sort(waiting_list_.begin(), waiting_list_.end());
  for (WorkerId id : waiting_list_) {
    if (workers_[id].waiting && !workers_[id].lost) {
      workers_[id].waiting = false;
      signals_.push_back(id);
    }
  }
  waiting_list_.clear();
}

void PolicyBase::ReserveProportional(const std::vector<double>& shares) {
  items_.Reserve(PlanShares(pool().Ranges(), pool_cost(), cost(), shares));
}

uint64_t PolicyBase::StopFloor(WorkerId id) const {
  const WorkerState& worker = workers_[id];
  const uint64_t position = std::max(worker.position, worker.lease.begin);
  return std::clamp(worker.running_end, position, std::max(position, worker.lease.end));
}

Range PolicyBase::Unfinished(WorkerId id) const {
  const WorkerState& worker = workers_[id];
  if (worker.lease.empty()) return {};
  return {std::max(worker.position, worker.lease.begin), worker.lease.end};
}

}  // namespace ballast::balance
