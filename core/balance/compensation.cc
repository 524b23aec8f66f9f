#include "core/balance/compensation.h"

#include <algorithm>
#include <cmath>

namespace ballast::balance {

double CompensatingFactor(double compute_rate, double transfer_rate, double idle_in,
                          double transfer_time) {
  if (!std::isfinite(transfer_rate) || transfer_time <= 0 || idle_in >= transfer_time) return 1.0;
  const double ratio = std::clamp(std::max(0.0, idle_in) / transfer_time, 0.0, 1.0);
  if (transfer_rate <= 0) return ratio;  // the limit of eq. 3-45 as the link stalls
  if (compute_rate <= 0) return 1.0;
  const double l = compute_rate;
  const double rl = transfer_rate;
  const double d = 2 * l * l + 2 * rl * l + 2 * rl * rl;
  const double k = (2 * rl * rl + rl * l) / d + (2 * l * l + rl * l) / d * ratio;
  return std::clamp(k, 0.0, 1.0);
}

}  // namespace ballast::balance
