#include "core/balance/policy_base.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <numeric>

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
  cost_ = declared_;
  learning_ = learn_costs_ && (job.item_costs != nullptr || job.cost != CostShape::kUniform);
  learner_ = StartCostLearner();
  workers_.assign(job.workers.size(), WorkerState{});
  for (auto& worker : workers_) worker.last_contact = now;
  pool_ = IntervalSet(Range{0, job.items});
  pool_cost_ = cost_.Cost({0, job.items});
  reserved_cost_ = 0;
  done_ = IntervalSet();
  stats_ = PolicyStats{};
  stats_.learning_costs = learning_;
  for (const Range& range : job.finished.Ranges()) {
    const Range clipped{range.begin, std::min(range.end, job.items)};
    stats_.completed_items += done_.Add(clipped);
    PoolRemove(clipped);
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
  WorkerState& worker = workers_.at(report.worker);
  const double elapsed = report.now - worker.last_contact;
  for (const Range& range : report.completed) {
    const Range clipped{range.begin, std::min(range.end, job_.items)};
    const uint64_t fresh = done_.Add(clipped);
    stats_.duplicate_items += clipped.size() - fresh;
    stats_.completed_items += fresh;
    // A finished item may still sit in the pool when its lease had been revoked.
    PoolRemove(clipped);
  }
  if (learning_) Learn(report, elapsed);
  Observe(report, elapsed);
  worker.last_contact = report.now;
  worker.waiting = false;

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
    worker.position = std::clamp(report.position, worker.lease.begin, worker.lease.end);
    if (worker.position < worker.lease.end) {
      if (auto own = AfterProgress(report.worker, report.now)) {
        if (own->kind == Reply::Kind::kWait || own->kind == Reply::Kind::kDone) {
          ReleaseToPool(report.worker, Cut(report.worker, worker.position));
          worker.lease = {};
          if (own->kind == Reply::Kind::kWait) MarkWaiting(report.worker);
        }
        return *own;
      }
      return Reply{Reply::Kind::kContinue, worker.lease, worker.report_every_s, {}};
    }
  }
  // An idle worker holds nothing: whatever of its lease it did not report
  // finished (a lease it never received, an answer that crossed its ask, a
  // range it handed in too late) goes back to the pool, so no item is lost.
  // It asks first; what it leaves there wakes the workers waiting for work.
  const bool returned =
      !worker.lease.empty() && ReleaseToPool(report.worker, worker.lease, /*wake=*/false);
  worker.lease = {};
  worker.position = 0;
  Reply reply = Assign(report.worker, report.now);
  if (returned && !pool_.empty()) WakeWaiting();
  if (reply.kind == Reply::Kind::kWait) MarkWaiting(report.worker);
  if (reply.kind == Reply::Kind::kDone) worker.done = true;
  return reply;
}

void PolicyBase::Learn(const Report& report, double elapsed) {
  WorkerState& worker = workers_.at(report.worker);
  // As the adaptive policy reads a report: its seconds bounded by the time
  // seen to pass since the previous one; a NaN or infinite claim is nothing.
  const double observed = std::isfinite(elapsed) ? std::max(0.0, elapsed) : 0.0;
  const double seconds =
      std::isfinite(report.calc_seconds) ? std::clamp(report.calc_seconds, 0.0, observed) : 0.0;
  // An idle worker's seconds, and a report with failed items (their
  // declared cost was not computed), say nothing of the items' costs.
  if (worker.lease.empty() || !report.failed.empty()) {
    worker.unsampled_s = 0;
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
  worker.unsampled_s = 0;
  if (!learner_.MaybeRefit()) return;
  stats_.cost_samples = learner_.fit().samples;
  const double learned = learner_.fit().start_cost;
  const double current = cost_.start_cost();
  // Only a move by more than a tenth (or to or from none) changes the
  // model: each change costs O(P log P) and resets the sums kept in cost units.
  if (std::fabs(learned - current) > 0.1 * std::max(learned, current)) {
    SetStartCost(learned, report.now);
  }
}

void PolicyBase::SetStartCost(double start_cost, double now) {
  const double old = cost_.start_cost();
  cost_ = declared_.WithStartCost(start_cost);
  stats_.start_cost = cost_.start_cost();
  pool_cost_ = CostIn(pool_, {0, job_.items});
  reserved_cost_ = 0;
  for (WorkerState& worker : workers_) {
    worker.reserved_cost = 0;
    for (const Range& range : worker.reserved.Ranges()) worker.reserved_cost += cost_.Cost(range);
    reserved_cost_ += worker.reserved_cost;
  }
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
  for (const Range& range : worker.reserved.Ranges()) ReturnToPool(range);
  reserved_cost_ -= worker.reserved_cost;
  worker.reserved = IntervalSet();
  worker.reserved_cost = 0;
  worker.prefetch.clear();
  // Others may be waiting on this worker even when it returned nothing (its
  // lease was finished by someone else): let them look at the pool again.
  if (!pool_.empty()) WakeWaiting();
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
  workers_.back().last_contact = now;
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
  worker.lease_granted = now;
  worker.report_every_s = report_every_s;
  return Reply{Reply::Kind::kLease, range, report_every_s, {}};
}

Range PolicyBase::Cut(WorkerId id, uint64_t new_end) {
  WorkerState& worker = workers_[id];
  new_end = std::clamp(new_end, worker.position, worker.lease.end);
  const Range cut{new_end, worker.lease.end};
  worker.lease.end = new_end;
  return cut;
}

Range PolicyBase::TakeReserved(WorkerId id) {
  WorkerState& worker = workers_[id];
  // Each pass removes at least one reserved range: bounded by their number.
  while (!worker.reserved.empty()) {
    // Items set aside may since have been finished by a worker that had
    // been declared lost and was not: those are dropped, not leased.
    const Range first = worker.reserved.First();
    const Range open = FirstOpenPart(first);
    Unreserve(id, {first.begin, open.empty() ? first.end : open.end});
    if (!open.empty()) return open;
  }
  return {};
}

Range PolicyBase::FirstOpenPart(Range range) const {
  range = SkipFinished(range);
  const Range finished = done_.FirstAtOrAfter(range.begin);
  if (!finished.empty() && finished.begin < range.end) range.end = finished.begin;
  return range;
}

Range PolicyBase::LastOpenPart(Range range) const {
  // One pass per open stretch of `range`: bounded by its finished ranges + 1.
  Range last;
  for (Range open = FirstOpenPart(range); !open.empty();
       open = FirstOpenPart({open.end, range.end})) {
    last = open;
  }
  return last;
}

void PolicyBase::SetAside(WorkerId id, Range range) {
  if (range.empty()) return;
  WorkerState& worker = workers_[id];
  worker.reserved.Add(range);
  worker.reserved_cost += cost_.Cost(range);
  reserved_cost_ += cost_.Cost(range);
  worker.prefetch.push_back(range);
}

void PolicyBase::Unreserve(WorkerId id, Range range) {
  WorkerState& worker = workers_[id];
  const double removed = CostIn(worker.reserved, range);
  worker.reserved.Remove(range);
  worker.reserved_cost = worker.reserved.empty() ? 0 : worker.reserved_cost - removed;
  reserved_cost_ -= removed;
}

Range PolicyBase::TakeFromPool(uint64_t count) {
  const Range first = pool_.First();
  const Range taken{first.begin,
                    first.begin + std::min<uint64_t>(std::max<uint64_t>(count, 1), first.size())};
  PoolRemove(taken);
  return taken;
}

Range PolicyBase::TakeCostFromPool(double cost) {
  const Range first = pool_.First();
  if (first.empty()) return {};
  uint64_t end = cost_.Advance(first.begin, first.end, cost);
  end = std::max(end, first.begin + 1);
  const Range taken{first.begin, end};
  PoolRemove(taken);
  return taken;
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
  // Only unfinished items go back; walk the finished ranges that overlap.
  // Each pass moves `at` past one finished range or one gap between them, so
  // the loop is bounded by twice the finished ranges inside `range`.
  bool added = false;
  uint64_t at = range.begin;
  while (at < range.end) {
    const Range finished = done_.FirstAtOrAfter(at);
    if (!finished.empty() && finished.begin <= at) {
      at = finished.end;
      continue;
    }
    const uint64_t stop = finished.empty() ? range.end : std::min(range.end, finished.begin);
    added = PoolAdd({at, stop}) || added;
    at = stop;
  }
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
  double total = 0;
  for (double share : shares) total += std::max(share, 0.0);
  // Walk the pool in order (all of [0, N) unless the job resumed with
  // finished items), handing each worker its share of the pool's cost.
  const std::vector<Range> ranges = pool_.Ranges();
  const double whole = pool_cost();
  const size_t count = workers_.size();
  std::vector<double> target(count);
  for (WorkerId id = 0; id < count; ++id) {
    target[id] = total > 0 ? std::max(shares[id], 0.0) / total * whole : whole / count;
  }
  const std::vector<WorkerId> walk = ReserveOrder(shares);
  std::vector<IntervalSet> reserved(count);
  std::vector<double> got(count, 0.0);
  PoolCursor cursor{ranges, 0, ranges.empty() ? 0 : ranges.front().begin};
  if (cost_.per_item()) SpreadLargeItems(cursor, target, walk, reserved, got);
  // The rest of the pool in contiguous shares: what each worker still lacks
  // of its target, in proportion (all of it when no item was large).
  double lacking = 0;
  double spread = 0;
  for (WorkerId id = 0; id < count; ++id) {
    lacking += std::max(0.0, target[id] - got[id]);
    spread += got[id];
  }
  // What earlier workers got short of (or, with per-item costs, beyond)
  // their share, by whole items.
  double owed = 0;
  for (size_t n = 0; n < walk.size(); ++n) {
    const WorkerId id = walk[n];
    const bool last = n + 1 == walk.size();
    double want = owed;
    if (spread == 0) {
      want += target[id];
    } else if (lacking > 0) {
      want += std::max(0.0, target[id] - got[id]) / lacking * (whole - spread);
    }
    while (cursor.index < ranges.size() && (last || want > 0)) {
      const Range rest{std::max(cursor.at, ranges[cursor.index].begin), ranges[cursor.index].end};
      const uint64_t end = last ? rest.end : ShareEnd(rest, want);
      if (end > rest.begin) reserved[id].Add({rest.begin, end});
      want -= cost_.Cost({rest.begin, end});
      cursor.at = end;
      if (end < rest.end) break;
      ++cursor.index;
    }
    owed = cost_.per_item() ? want : std::max(0.0, want);
  }
  for (WorkerId id = 0; id < count; ++id) {
    workers_[id].reserved_cost = 0;
    for (const Range& range : reserved[id].Ranges()) {
      workers_[id].reserved_cost += cost_.Cost(range);
      PoolRemove(range);
    }
    reserved_cost_ += workers_[id].reserved_cost;
    workers_[id].reserved = std::move(reserved[id]);
  }
}

void PolicyBase::SpreadLargeItems(PoolCursor& cursor, const std::vector<double>& target,
                                  const std::vector<WorkerId>& walk,
                                  std::vector<IntervalSet>& reserved,
                                  std::vector<double>& got) const {
  double whole = 0;
  size_t takers = 0;
  for (double wanted : target) {
    whole += wanted;
    if (wanted > 0) ++takers;
  }
  if (takers < 2) return;
  // Items of at least this cost are large: at most kLargeItemShares x
  // takers of them, and at most kMaxSpreadItems are spread, each weighed
  // against every worker once a job.
  const double large = whole / (kLargeItemShares * static_cast<double>(takers));
  const std::vector<Range>& ranges = cursor.ranges;
  // Only a pool dealt largest first leads with its large items: one that
  // does not (items as listed) is cut in contiguous shares as it comes.
  if (ranges.empty()) return;
  const double front = cost_.Cost({ranges.front().begin, ranges.front().begin + 1});
  if (front < large) return;
  for (const Range& range : ranges) {
    for (uint64_t item = range.begin; item < range.end; ++item) {
      if (cost_.Cost({item, item + 1}) > front) return;
    }
  }
  for (size_t spread = 0; cursor.index < ranges.size() && spread < kMaxSpreadItems;) {
    const uint64_t item = std::max(cursor.at, ranges[cursor.index].begin);
    if (item >= ranges[cursor.index].end) {
      ++cursor.index;
      continue;
    }
    const double cost = cost_.Cost({item, item + 1});
    if (cost < large) return;
    // The worker it leaves least full against its target (ties in walk
    // order): the one that would finish it first, as LPT places an item.
    std::optional<WorkerId> best;
    double best_fill = 0;
    for (WorkerId id : walk) {
      if (!(target[id] > 0) || cost > 0.5 * target[id]) continue;
      const double fill = (got[id] + cost) / target[id];
      if (!best || fill < best_fill) {
        best = id;
        best_fill = fill;
      }
    }
    if (!best) return;
    reserved[*best].Add({item, item + 1});
    got[*best] += cost;
    cursor.at = item + 1;
    ++spread;
  }
}

std::vector<WorkerId> PolicyBase::ReserveOrder(const std::vector<double>& shares) const {
  std::vector<WorkerId> order(workers_.size());
  std::iota(order.begin(), order.end(), WorkerId{0});
  if (cost_.per_item()) {
    std::stable_sort(order.begin(), order.end(),
                     [&](WorkerId a, WorkerId b) { return shares[a] > shares[b]; });
  }
  return order;
}

uint64_t PolicyBase::ShareEnd(Range rest, double want) const {
  const uint64_t end = cost_.Advance(rest.begin, rest.end, want);
  if (!cost_.per_item() || end >= rest.end) return end;
  const double under = want - cost_.Cost({rest.begin, end});
  const double over = cost_.Cost({rest.begin, end + 1}) - want;
  return over < under ? end + 1 : end;
}

bool PolicyBase::PoolAdd(Range range) {
  const double before = CostIn(pool_, range);
  if (pool_.Add(range) == 0) return false;
  pool_cost_ += cost_.Cost(range) - before;
  return true;
}

void PolicyBase::PoolRemove(Range range) {
  const double removed = CostIn(pool_, range);
  if (pool_.Remove(range) == 0) return;
  pool_cost_ -= removed;
  if (pool_.empty()) pool_cost_ = 0;  // no rounding left behind
}

double PolicyBase::CostIn(const IntervalSet& set, Range range) const {
  double total = 0;
  uint64_t at = range.begin;
  while (at < range.end) {
    const Range piece = set.FirstAtOrAfter(at);
    if (piece.empty() || piece.begin >= range.end) break;
    const uint64_t end = std::min(piece.end, range.end);
    total += cost_.Cost({std::max(piece.begin, at), end});
    at = end;
  }
  return total;
}

Range PolicyBase::SkipFinished(Range range) const {
  while (!range.empty() && done_.Contains(range.begin)) {
    const Range finished = done_.FirstAtOrAfter(range.begin);
    range.begin = std::min(range.end, finished.end);
  }
  return range;
}

Range PolicyBase::Unfinished(WorkerId id) const {
  const WorkerState& worker = workers_[id];
  if (worker.lease.empty()) return {};
  return {std::max(worker.position, worker.lease.begin), worker.lease.end};
}

}  // namespace ballast::balance
