#include "fuzzy/learning_target.h"

#include "common/stats.h"

namespace ballast::fuzzy {

LearningVerdict JudgeLearning(const std::vector<std::vector<RunFigures>>& sequences) {
  std::vector<double> first[3], later[3];
  auto add = [](std::vector<double>* into, const RunFigures& run) {
    into[0].push_back(run.moved);
    into[1].push_back(run.messages);
    into[2].push_back(run.efficiency);
  };
  for (const std::vector<RunFigures>& runs : sequences) {
    if (runs.size() < 2) continue;
    add(first, runs[0]);
    for (size_t r = 1; r < runs.size(); ++r) add(later, runs[r]);
  }
  LearningVerdict verdict;
  verdict.first_runs = first[0].size();
  verdict.later_runs = later[0].size();
  if (verdict.first_runs == 0) return verdict;
  verdict.first = {Median(first[0]), Median(first[1]), Median(first[2])};
  verdict.later = {Median(later[0]), Median(later[1]), Median(later[2])};
  verdict.moved_halved = verdict.later.moved <= 0.5 * verdict.first.moved;
  verdict.messages_halved = verdict.later.messages <= 0.5 * verdict.first.messages;
  verdict.efficiency_kept = verdict.later.efficiency >= verdict.first.efficiency;
  return verdict;
}

}  // namespace ballast::fuzzy
