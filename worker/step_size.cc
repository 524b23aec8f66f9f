#include "worker/step_size.h"

#include <algorithm>
#include <cmath>

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

}  // namespace ballast::worker
