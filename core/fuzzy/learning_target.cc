#include "fuzzy/learning_target.h"

#include "common/stats.h"

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
  return verdict;
}

}  // namespace ballast::fuzzy
