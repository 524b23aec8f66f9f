// Small statistics for the benchmarks' and the bench command's figures.
#pragma once

#include <algorithm>
#include <cmath>
#include <vector>

namespace ballast {

// The median of `values` (the mean of the middle two for an even count); NaN
// when there are none.
inline double Median(std::vector<double> values) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const size_t n = values.size();
  return n % 2 ? values[n / 2] : (values[n / 2 - 1] + values[n / 2]) / 2;
}

}  // namespace ballast
