#include "worker/step_size.h"

#include <algorithm>
#include <cmath>

namespace ballast::worker {

uint64_t NextStepEnd(const balance::CostModel& cost, balance::Range rest, unsigned threads,
                     double step_seconds, const StepMeasure& last) {
  const uint64_t minimum = std::min(rest.end, rest.begin + std::max(threads, 1u));
  if (!(last.seconds_per_cost > 0) || !std::isfinite(last.seconds_per_cost)) return minimum;
  const double aimed = step_seconds / last.seconds_per_cost * std::max(threads, 1u);
  const double capped = last.cost > 0 ? std::min(aimed, kMaxStepGrowth * last.cost) : aimed;
  return std::max(minimum, cost.Advance(rest.begin, rest.end, capped));
}

}  // namespace ballast::worker
