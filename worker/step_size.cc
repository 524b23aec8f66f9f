#include "worker/step_size.h"

#include <algorithm>
#include <cmath>
#include <utility>

namespace ballast::worker {

uint64_t NextStepEnd(const balance::CostModel& cost, balance::Range rest, unsigned threads,
                     double step_seconds, const StepMeasure& last) {
  const uint64_t minimum = std::min(rest.end, rest.begin + std::max(threads, 1u));
  if (!(last.seconds_per_cost > 0) || !std::isfinite(last.seconds_per_cost)) return minimum;
  uint64_t limit = rest.end;
  if (last.items > 0 && last.items <= (rest.end - rest.begin) / kMaxStepGrowth) {
    limit = rest.begin + kMaxStepGrowth * last.items;
  }
  const double aimed = step_seconds / last.seconds_per_cost * std::max(threads, 1u);
  // At most the cost up to the limit, so that a tiny measurement stays finite.
  const double bounded = std::min(aimed, cost.Cost({rest.begin, limit}));
  return std::max(minimum, cost.Advance(rest.begin, limit, bounded));
}

void RunStartLearner::Add(double seconds, double cost) {
  if (!(seconds > 0) || !std::isfinite(seconds) || !(cost > 0) || !std::isfinite(cost)) return;
  learner_.Add({.worker = 0, .items = 1, .declared = cost, .seconds = seconds});
  seconds_ += seconds;
  cost_ += cost;
  ++runs_;
  learner_.MaybeRefit();
  // The fit's test (its estimate less three standard errors) says whether
  // there is a start; its estimate sizes the runs (too long a run costs a
  // coarser cut, bounded by kMaxRunSeconds; too short one, starts). Runs
  // sized alike since show nothing new (their costs no longer differ): the
  // start last learned stands.
  const balance::StartCostFit& fit = learner_.fit();
  if (fit.trusted()) start_cost_ = fit.estimate;
  if (start_cost_ <= 0) return;
  const double start_cost = start_cost_;
  // t ~ s (a + c) for each run: s over every run, with the fitted a.
  start_ = {start_cost, seconds_ / (static_cast<double>(runs_) * start_cost + cost_)};
}

StepAim AimRun(double step_seconds, const RunStart& start, const StepMeasure& last) {
  if (!start.learned()) return {step_seconds, last};
  const double longest = std::max(step_seconds, kMaxRunSeconds);
  const double run = std::clamp(start.seconds() / kRunStartShare, step_seconds, longest);
  return {std::max(run - start.seconds(), 0.0), {start.seconds_per_cost, last.items}};
}

uint64_t ExploreEnd(uint64_t end, balance::Range rest, unsigned threads, const RunStart& start,
                    uint64_t runs) {
  if (start.learned() || runs >= kExploreRuns || runs % 2 == 0) return end;
  const uint64_t two_each = rest.begin + 2 * static_cast<uint64_t>(std::max(threads, 1u));
  return std::max(end, std::min(rest.end, two_each));
}

uint64_t GuidedEnd(const balance::CostModel& cost, balance::Range rest, const StepMeasure& last) {
  if (rest.empty() || !(last.seconds_per_cost > 0)) return rest.begin;
  const double share = cost.Cost(rest) * kRunShareOfLease;
  const uint64_t end = cost.Advance(rest.begin, rest.end, share);
  // Advance stops at or below the share; the item that reaches it belongs in.
  if (end < rest.end && (end == rest.begin || cost.Cost({rest.begin, end}) < share * (1 - 1e-9))) {
    return end + 1;
  }
  return end;
}

StepPlanner::StepPlanner(balance::CostModel cost, unsigned threads, double step_seconds,
                         bool one_run_per_step)
    : cost_(std::move(cost)),
      threads_(std::max(threads, 1u)),
      step_seconds_(step_seconds),
      one_run_per_step_(one_run_per_step) {}

balance::Range StepPlanner::Next(balance::Range rest) const {
  const StepAim aim = AimRun(step_seconds_, learner_.start(), last_);
  const uint64_t end = NextStepEnd(cost_, rest, threads_, aim.step_seconds, aim.last);
  if (!one_run_per_step_) return {rest.begin, end};
  const uint64_t explored = ExploreEnd(end, rest, threads_, learner_.start(), runs_);
  return {rest.begin, std::max(explored, GuidedEnd(cost_, rest, last_))};
}

void StepPlanner::Done(balance::Range range, double seconds) {
  const double cost = cost_.Cost(range);
  last_ = {seconds / std::max(cost, 1e-12), range.size()};
  if (!one_run_per_step_ || range.empty()) return;
  // Each thread ran one command for its share of the step's items.
  const uint64_t runs = std::min<uint64_t>(threads_, range.size());
  learner_.Add(seconds, cost / static_cast<double>(runs));
  runs_ += runs;
}

}  // namespace ballast::worker
