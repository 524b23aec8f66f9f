#include "core/balance/speed_estimator.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace ballast::balance {
namespace {

constexpr double kSmoothing = 0.5;  // weight of the newest measurement
// An unfinished first item bounds a worker's speed at this many times its
// declared cost over the time computed (CensoredSpeed): items' true costs
// scatter about the declared ones, and a worker merely on a costly item is
// not taken for a slow one.
constexpr double kCensoredMargin = 2;
// A lead over the predictions (ObserveLead) counts up to this much.
constexpr double kMaxLead = 0.5;
// A prior at full credibility counts as much as measuring this fraction of
// the worker's planned share.
constexpr double kPriorShareWorth = 0.25;

}  // namespace

SpeedEstimator::Prior SpeedEstimator::PriorFrom(const WorkerPrior& worker) {
  return Prior{std::max(worker.speed, 1e-9), std::clamp(worker.credibility, 0.0, 1.0)};
}

void SpeedEstimator::Reset(const std::vector<WorkerPrior>& workers) {
  estimates_.assign(workers.size(), SpeedEstimate{});
  priors_.clear();
  for (const WorkerPrior& worker : workers) priors_.push_back(PriorFrom(worker));
  planned_cost_.assign(workers.size(), 0);
  measured_speed_sum_ = measured_prior_sum_ = 0;
  any_credible_ = std::ranges::any_of(
      workers, [](const WorkerPrior& worker) { return worker.credibility > 0; });
}

WorkerId SpeedEstimator::Add(const WorkerPrior& prior) {
  estimates_.push_back(SpeedEstimate{});
  priors_.push_back(PriorFrom(prior));
  planned_cost_.push_back(0);
  any_credible_ = any_credible_ || priors_.back().credibility > 0;
  return static_cast<WorkerId>(estimates_.size() - 1);
}

void SpeedEstimator::SetPlannedCost(WorkerId id, double cost) { planned_cost_[id] = cost; }

void SpeedEstimator::DropPending(WorkerId id) {
  SpeedEstimate& e = estimates_[id];
  e.pending_calc = e.pending_exe = e.pending_cost = e.pending_items = 0;
}

bool SpeedEstimator::Observe(WorkerId id, const SpeedSample& sample) {
  SpeedEstimate& e = estimates_[id];
  if (e.pending_exe == 0) e.pending_lease_start = sample.lease_start;
  const double cost_done = std::max(0.0, sample.cost);
  const double items_done = std::max(0.0, sample.items);
  const double observed = std::isfinite(sample.elapsed) ? std::max(0.0, sample.elapsed) : 0.0;
  e.pending_exe += observed;
  const double calc_seconds = BoundedClaim(sample.calc_seconds, e.pending_exe, e.pending_calc);
  e.pending_calc += calc_seconds;
  e.pending_cost += cost_done;
  e.pending_items += items_done;
  e.evidence_cost += cost_done;
  e.evidence_items += items_done;
  e.evidence_s += calc_seconds;
  if (e.pending_cost <= 0) return false;
  const double calc = std::min(e.pending_calc / e.pending_cost, kMaxSecondsPerCost);
  const double comm =
      std::min(std::max(0.0, e.pending_exe - e.pending_calc) / e.pending_cost, kMaxSecondsPerCost);
  const double alpha = e.measured ? kSmoothing : 1.0;
  // Keep the sums behind PriorScale() current: take this worker out, then back in.
  if (e.measured) Uncount(id);
  e.calc_per_cost += alpha * (calc - e.calc_per_cost);
  // A rise in communication is believed at once: it means the worker's
  // inputs have begun to cross its link, and a receiver sized by the old
  // figure waits for data while others wait for it. A fall is smoothed.
  e.comm_per_cost += (comm > e.comm_per_cost ? 1.0 : alpha) * (comm - e.comm_per_cost);
  if (e.pending_lease_start) {
    e.overhead_s += alpha * (std::max(0.0, e.pending_exe - e.pending_calc) - e.overhead_s);
  }
  e.measured = true;
  Count(id);
  DropPending(id);
  return true;
}

void SpeedEstimator::Uncount(WorkerId id) {
  if (!(PerCost(estimates_[id]) > 0)) return;
  measured_speed_sum_ -= 1.0 / PerCost(estimates_[id]);
  measured_prior_sum_ -= PriorOf(id);
}

void SpeedEstimator::Count(WorkerId id) {
  if (!(PerCost(estimates_[id]) > 0)) return;
  measured_speed_sum_ += 1.0 / PerCost(estimates_[id]);
  measured_prior_sum_ += PriorOf(id);
}

void SpeedEstimator::ObserveLead(WorkerId id, double reached_cost, double elapsed) {
  SpeedEstimate& e = estimates_[id];
  const double predicted = MeasuredOrBlended(id) * elapsed;
  const double ahead = std::clamp(reached_cost / predicted - 1, 0.0, kMaxLead);
  e.lead += (ahead > e.lead ? 1.0 : kSmoothing) * (ahead - e.lead);
}

void SpeedEstimator::RestateCosts(double delta, double job_scale) {
  for (SpeedEstimate& e : estimates_) {
    const double restated = e.evidence_cost + delta * e.evidence_items;
    if (e.evidence_cost > 0 && restated > 0) {
      const double scale = e.evidence_cost / restated;
      e.calc_per_cost *= scale;
      e.comm_per_cost *= scale;
      e.evidence_cost = restated;
    }
    e.pending_cost = std::max(0.0, e.pending_cost + delta * e.pending_items);
  }
  for (double& planned : planned_cost_) planned *= job_scale;
  measured_speed_sum_ = measured_prior_sum_ = 0;
  for (WorkerId id = 0; id < estimates_.size(); ++id) {
    if (IsMeasured(id)) {
      measured_speed_sum_ += 1.0 / PerCost(estimates_[id]);
      measured_prior_sum_ += PriorOf(id);
    }
  }
}

double SpeedEstimator::Speed(WorkerId id, std::optional<double> open_item_cost) const {
  return IsMeasured(id) ? MeasuredOrBlended(id)
                        : std::min(ScaledPrior(id), CensoredSpeed(id, open_item_cost));
}

double SpeedEstimator::CensoredSpeed(WorkerId id, std::optional<double> open_item_cost) const {
  const SpeedEstimate& e = estimates_[id];
  if (e.measured || !(e.pending_calc > 0) || !open_item_cost) {
    return std::numeric_limits<double>::infinity();
  }
  return kCensoredMargin * *open_item_cost / e.pending_calc;
}

double SpeedEstimator::MeasuredOrBlended(WorkerId id) const {
  const double measured = MeasuredSpeed(id);
  const double trust = Credibility(id) * kPriorShareWorth * planned_cost_[id];
  if (!(trust > 0)) return measured;
  const double evidence = estimates_[id].evidence_cost;
  const double w = evidence / (evidence + trust);
  return std::exp(w * std::log(measured) + (1 - w) * std::log(ScaledPrior(id)));
}

double SpeedEstimator::PerCost(const SpeedEstimate& e) {
  const double seconds = e.calc_per_cost + e.comm_per_cost;
  return seconds > 0 ? std::max(seconds, kMinSecondsPerCost) : 0;
}

}  // namespace ballast::balance
