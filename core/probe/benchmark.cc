#include "core/probe/benchmark.h"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>

namespace ballast::probe {

uint64_t RepetitionsPerSample(double unit_seconds, double budget_seconds, int samples,
                              double share) {
  if (!(unit_seconds > 0) || !std::isfinite(unit_seconds) || !(budget_seconds > 0) ||
      !std::isfinite(budget_seconds) || samples < 1 || !(share > 0) || !std::isfinite(share)) {
    return 1;
  }
  const double reps = std::floor(budget_seconds * share / samples / unit_seconds);
  if (!(reps >= 1)) return 1;
  return static_cast<uint64_t>(std::min(reps, 1'000'000.0));
}

StatusOr<BenchmarkScore> ScoreSamples(const std::vector<double>& rates, uint64_t repetitions) {
  if (rates.empty()) return Status::Invalid("benchmark: no samples");
  for (size_t i = 0; i < rates.size(); ++i) {
    if (!(rates[i] > 0) || !std::isfinite(rates[i])) {
      return Status::Invalid(
          fmt::format("benchmark: sample {} is {}, expected a finite positive rate", i, rates[i]));
    }
  }
  std::vector<double> sorted = rates;
  std::sort(sorted.begin(), sorted.end());
  const size_t n = sorted.size();
  BenchmarkScore score;
  score.median = n % 2 == 1 ? sorted[n / 2] : (sorted[n / 2 - 1] + sorted[n / 2]) / 2;
  score.min = sorted.front();
  score.max = sorted.back();
  score.spread = (score.max - score.min) / score.median;
  score.samples = static_cast<int>(n);
  score.repetitions = repetitions;
  score.bucket = BucketScore(score.median);
  return score;
}

std::string BucketScore(double score) {
  if (!(score > 0) || !std::isfinite(score)) return "";
  static constexpr std::array<int, 6> kE6 = {10, 15, 22, 33, 47, 68};  // tenths
  const double clamped = std::clamp(score, 0.001, 1e9);
  // Index on the series: 6 steps per decade, rounded on the log scale.
  const long step = std::lround(std::log10(clamped) * 6);
  const long decade = step >= 0 ? step / 6 : -((-step + 5) / 6);
  const int mantissa = kE6[static_cast<size_t>(step - decade * 6)];  // tenths of 10^decade
  // mantissa * 10^(decade - 1), written without exponent or trailing zeros.
  const long exponent = decade - 1;
  if (exponent >= 0) {
    std::string text = std::to_string(mantissa);
    text.append(static_cast<size_t>(exponent), '0');
    return text;
  }
  std::string digits = std::to_string(mantissa);  // two digits
  const size_t places = static_cast<size_t>(-exponent);
  if (digits.size() <= places) digits.insert(0, places - digits.size() + 1, '0');
  std::string text =
      digits.substr(0, digits.size() - places) + "." + digits.substr(digits.size() - places);
  while (text.back() == '0') text.pop_back();
  if (text.back() == '.') text.pop_back();
  return text;
}

}  // namespace ballast::probe
