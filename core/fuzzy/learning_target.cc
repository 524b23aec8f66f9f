#include "core/fuzzy/learning_target.h"

#include <algorithm>
#include <cmath>

#include "core/common/stats.h"

namespace ballast::fuzzy {
namespace {

// The runs' figures, one column each.
struct Columns {
  std::vector<double> moved, messages, efficiency;
  void Add(const RunFigures& run) {
    moved.push_back(run.moved);
    messages.push_back(run.messages);
    efficiency.push_back(run.efficiency);
  }
  RunFigures Medians() const { return {Median(moved), Median(messages), Median(efficiency)}; }
};

}  // namespace

Shift LocationShift(const std::vector<double>& first, const std::vector<double>& later) {
  Shift shift;
  if (first.empty() || later.empty()) return shift;
  std::vector<double> differences;
  differences.reserve(first.size() * later.size());
  for (double b : later) {
    for (double a : first) differences.push_back(b - a);
  }
  std::sort(differences.begin(), differences.end());
  const double m = static_cast<double>(first.size());
  const double n = static_cast<double>(later.size());
  const double count = m * n;
  constexpr double kZ95 = 1.959964;
  const double k = std::floor(count / 2 - kZ95 * std::sqrt(count * (m + n + 1) / 12));
  const size_t rank = k >= 1 ? static_cast<size_t>(k) : 1;  // 1-based
  shift.estimate = Median(differences);
  shift.low = differences[rank - 1];
  shift.high = differences[differences.size() - rank];
  shift.known = true;
  return shift;
}

LearningVerdict JudgeLearning(const std::vector<std::vector<RunFigures>>& sequences) {
  Columns first, later;
  for (const std::vector<RunFigures>& runs : sequences) {
    if (runs.size() < 2) continue;
    first.Add(runs[0]);
    for (size_t r = 1; r < runs.size(); ++r) later.Add(runs[r]);
  }
  LearningVerdict verdict;
  verdict.first_runs = first.moved.size();
  verdict.later_runs = later.moved.size();
  if (verdict.first_runs == 0) return verdict;
  verdict.first = first.Medians();
  verdict.later = later.Medians();
  verdict.moved_halved = verdict.later.moved <= 0.5 * verdict.first.moved;
  verdict.messages_halved = verdict.later.messages <= 0.5 * verdict.first.messages;
  verdict.efficiency_kept = verdict.later.efficiency >= verdict.first.efficiency;
  verdict.efficiency_shift = LocationShift(first.efficiency, later.efficiency);
  return verdict;
}

}  // namespace ballast::fuzzy
