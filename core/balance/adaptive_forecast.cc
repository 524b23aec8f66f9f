#include "core/balance/adaptive_forecast.h"

#include <algorithm>

namespace ballast::balance {
namespace {

// A worker's lead over its predictions (ObserveLead) is measured over
// silences of at least this many report floors.
constexpr double kLeadWindowFloors = 10;

}  // namespace

void AdaptiveForecast::Observe(const Report& report, double elapsed) {
  const WorkerState& worker = state(report.worker);
  if (worker.lease.empty()) {
    speeds_.DropPending(report.worker);  // idle, not slow
    return;
  }
  SpeedSample sample;
  sample.lease_start = worker.last_contact == worker.lease_granted;
  ObserveLead(report, elapsed);
  for (const Range& range : report.completed) {
    sample.cost += cost().Cost(range);
    sample.items += static_cast<double>(range.size());
  }
  for (const Range& range : report.failed) {
    sample.cost -= cost().Cost(range);
    sample.items -= static_cast<double>(range.size());
  }
  sample.elapsed = elapsed;
  sample.calc_seconds = report.calc_seconds;
  if (!speeds_.Observe(report.worker, sample)) return;
  Recount(report.worker);
  RefreshBlended(report.worker, report.now);
}

void AdaptiveForecast::ObserveLead(const Report& report, double elapsed) {
  const WorkerState& worker = state(report.worker);
  if (report.idle || !speeds_.IsMeasured(report.worker) ||
      !(elapsed >= kLeadWindowFloors * ReportFloor(report.now))) {
    return;
  }
  const uint64_t reached = std::clamp<uint64_t>(report.position, worker.position, job().items);
  speeds_.ObserveLead(report.worker, cost().Cost({worker.position, reached}), elapsed);
}

void AdaptiveForecast::AfterCostChanged(double old_start_cost, double now) {
  speeds_.RestateCosts(cost().start_cost() - old_start_cost, JobCostScale(old_start_cost));
  for (WorkerId id = 0; id < worker_count(); ++id) Track(id, now);
  ResyncSpeedSums();
}

double AdaptiveForecast::JobCostScale(double old_start_cost) const {
  const double delta = cost().start_cost() - old_start_cost;
  const double job_cost = cost().Cost({0, job().items});
  const double old_job_cost = job_cost - delta * static_cast<double>(job().items);
  return old_job_cost > 0 ? job_cost / old_job_cost : 1.0;
}

void AdaptiveForecast::AfterJoined(WorkerId worker, double now) {
  (void)speeds_.Add(job().workers[worker]);
  counted_.push_back(Counted{});
  busy_.push_back(false);
  predicted_reserve_.push_back(0);
  (void)finish_.Add();
  const double before = TotalSpeed();
  const double load = TotalLoad(now);
  Recount(worker);
  const double speed = speeds_.ScaledPrior(worker);
  speeds_.SetPlannedCost(worker, before + speed > 0 ? load * speed / (before + speed) : load);
  Predict(worker, now);
}

void AdaptiveForecast::StartForecast() {
  speeds_.Reset(job().workers);
  finish_ = FinishTimes(worker_count());
  counted_.assign(worker_count(), Counted{});
  busy_.assign(worker_count(), false);
  busy_count_ = 0;
  predicted_reserve_.assign(worker_count(), 0);
  predicted_reserve_sum_ = 0;
  alive_speed_sum_ = alive_prior_sum_ = 0;
  for (WorkerId id = 0; id < worker_count(); ++id) Recount(id);
}

double AdaptiveForecast::Speed(WorkerId id) const {
  // Only an unmeasured worker's speed is bounded by the item it is on.
  if (speeds_.IsMeasured(id)) return speeds_.MeasuredOrBlended(id);
  return speeds_.Speed(id, OpenItemCost(id));
}

std::optional<double> AdaptiveForecast::OpenItemCost(WorkerId id) const {
  const Range left = Unfinished(id);
  if (left.empty()) return std::nullopt;
  return cost().Cost({left.begin, left.begin + 1});
}

void AdaptiveForecast::RefreshBlended(WorkerId measured, double now) {
  if (!speeds_.AnyCredible()) return;
  for (WorkerId id = 0; id < worker_count(); ++id) {
    if (id != measured && speeds_.IsMeasured(id) && speeds_.Credibility(id) > 0) Track(id, now);
  }
}

void AdaptiveForecast::Predict(WorkerId id, double now) {
  const Range left = Unfinished(id);
  const bool busy = Alive(id) && !left.empty();
  busy_count_ += static_cast<int64_t>(busy) - static_cast<int64_t>(busy_[id]);
  busy_[id] = busy;
  predicted_reserve_sum_ -= predicted_reserve_[id];
  predicted_reserve_[id] = 0;
  if (!Alive(id) || (!busy && !reserved(id).empty())) {
    finish_.Clear(id);
    return;
  }
  const double speed = Speed(id);
  const double since = std::min(state(id).last_contact, now);
  if (busy) {
    predicted_reserve_[id] = reserved_cost(id);
    predicted_reserve_sum_ += predicted_reserve_[id];
  }
  finish_.Set(id, busy ? since + LeftAtContact(id, speed) + predicted_reserve_[id] / speed : since,
              speed);
}

double AdaptiveForecast::LeftAtContact(WorkerId id, double speed) const {
  const WorkerState& worker = state(id);
  const Range left = Unfinished(id);
  if (left.empty()) return 0;
  if (!(speed > 0)) return kNever;
  const uint64_t run_end = std::min(left.end, StopFloor(id));
  if (run_end <= left.begin + 1) return cost().Cost(left) / speed;
  const double run = cost().Cost({left.begin, run_end}) / speed;
  const double in_run = std::max(0.0, worker.last_contact - worker.position_since);
  return (in_run <= run ? run - in_run : run) + cost().Cost({run_end, left.end}) / speed;
}

void AdaptiveForecast::Recount(WorkerId id) {
  Counted& counted = counted_[id];
  if (counted.in) (counted.measured ? alive_speed_sum_ : alive_prior_sum_) -= counted.value;
  counted = Counted{};
  if (Alive(id)) {
    const bool measured = speeds_.IsMeasured(id);
    counted =
        Counted{true, measured, measured ? speeds_.MeasuredOrBlended(id) : speeds_.PriorOf(id)};
    (counted.measured ? alive_speed_sum_ : alive_prior_sum_) += counted.value;
  }
  if (++recounts_ > 4 * worker_count() + 64) ResyncSpeedSums();
}

void AdaptiveForecast::ResyncSpeedSums() {
  alive_speed_sum_ = alive_prior_sum_ = 0;
  for (const Counted& counted : counted_) {
    if (counted.in) (counted.measured ? alive_speed_sum_ : alive_prior_sum_) += counted.value;
  }
  recounts_ = 0;
}

double AdaptiveForecast::Remaining(WorkerId id, double now) const {
  const Range left = Unfinished(id);
  if (left.empty()) return 0;
  const double speed = Speed(id);
  if (!(speed > 0)) return cost().Cost(left) + reserved_cost(id);
  const double since = std::max(0.0, now - state(id).last_contact);
  return std::max(0.0, speed * (LeftAtContact(id, speed) - since)) + reserved_cost(id);
}

double AdaptiveForecast::ReportFloor(double now) const {
  // Before any worker is measured the job's length is unknown, and the
  // first reports come at the fastest cadence (one report per worker).
  if (speeds_.NoneMeasured()) return cadence_.Floor(worker_count(), std::nullopt);
  return cadence_.Floor(worker_count(), CommonRemainingTime(now));
}

double AdaptiveForecast::Cadence(WorkerId worker, double remaining, double now) const {
  const double floor = ReportFloor(now);
  const SpeedEstimate& e = speeds_.estimate(worker);
  // Unmeasured (no item finished yet): its speed has no scale, so it backs
  // off from the floor (its reports carry no measurement, and losing a
  // worker does not wait on them).
  if (!e.measured) {
    return ReportCadence::First(floor, speeds_.Credibility(worker), e.pending_calc,
                                state(worker).report_every_s);
  }
  const double speed = Speed(worker);
  return ReportCadence::Measured(
      floor, remaining / speed, ReportCadence::ReportsPerLease(speeds_, worker),
      CommonRemainingTime(now), Remaining(worker, now) / speed, e.evidence_s);
}

}  // namespace ballast::balance
