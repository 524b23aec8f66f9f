#include "core/sim/packing.h"

#include <algorithm>
#include <functional>
#include <limits>

namespace ballast::sim {

double LptMakespan(std::vector<double> item_seconds, const std::vector<double>& speeds) {
  if (item_seconds.empty()) return 0;
  std::vector<double> usable;
  for (double speed : speeds) {
    if (speed > 0) usable.push_back(speed);
  }
  if (usable.empty()) return std::numeric_limits<double>::infinity();
  std::ranges::sort(item_seconds, std::greater<>());
  std::vector<double> finish(usable.size(), 0.0);
  for (double seconds : item_seconds) {
    size_t best = 0;
    double best_end = std::numeric_limits<double>::infinity();
    for (size_t n = 0; n < usable.size(); ++n) {
      const double end = finish[n] + seconds / usable[n];
      if (end < best_end) {
        best_end = end;
        best = n;
      }
    }
    finish[best] = best_end;
  }
  return *std::ranges::max_element(finish);
}

}  // namespace ballast::sim
