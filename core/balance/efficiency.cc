#include "core/balance/efficiency.h"

#include <utility>

namespace ballast::balance {

double IdealSecondsOver(double work, const std::vector<Capacity>& spans) {
  if (!std::isfinite(work) || work <= 0) return 0;
  // Each span adds its speed at `from` and takes it away at `until`; between
  // two such instants the total speed is constant.
  std::vector<std::pair<double, double>> steps;
  for (const Capacity& span : spans) {
    if (!(span.speed > 0) || !std::isfinite(span.speed) || !(span.until > span.from)) continue;
    steps.emplace_back(std::max(0.0, span.from), span.speed);
    if (std::isfinite(span.until)) steps.emplace_back(span.until, -span.speed);
  }
  std::sort(steps.begin(), steps.end());
  double remaining = work;
  double speed = 0;
  for (size_t i = 0; i < steps.size(); ++i) {
    speed += steps[i].second;
    const double next =
        i + 1 < steps.size() ? steps[i + 1].first : std::numeric_limits<double>::infinity();
    const double stretch = next - steps[i].first;
    // A sum of speeds that rounding left a hair above zero holds nothing.
    if (speed > 1e-12 && remaining <= speed * stretch) return steps[i].first + remaining / speed;
    if (speed > 1e-12) remaining -= speed * stretch;
  }
  return std::numeric_limits<double>::infinity();
}

}  // namespace ballast::balance
