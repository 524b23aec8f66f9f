// Whether history paid off over runs of one job on the same nodes: issue
// 15's target, judged the same way by `ballast bench --history` (real
// processes) and by bench/scenario_figures (the simulator's multi-job
// scenarios). Each sequence of runs starts from the fuzzy weights; its first
// run is the job without history, its later runs the job with it. The later
// runs' median moved items and messages must be at most half the first
// runs' median, and their median efficiency not lower (docs/efficiency.md,
// "History as the prior"). With one sequence the first runs' median is its
// first run; with several, a first run that happened to be quiet or noisy
// weighs less.
//
// A machine's noise moves one run's efficiency by about a percent, as much as
// history can gain on it, so the verdict also gives the later runs' shift in
// efficiency against the first runs with a distribution-free 95 % interval
// (LocationShift): "not lower" is then read beside how well it is known.
//
// Thread-safety: pure functions.
#pragma once

#include <cstddef>
#include <vector>

namespace ballast::fuzzy {

struct RunFigures {
  double moved = 0;  // items moved from one worker's lease to another's
  double messages = 0;
  double efficiency = 0;
};

// How far the values of `later` lie above those of `first` (Hodges–Lehmann:
// the median of every difference later_j - first_i), with the interval of
// the differences ranked k and mn + 1 - k, k the Mann–Whitney critical count
// for a two-sided 95 % interval (normal approximation, rounded down: never
// narrower than the exact one by more than a rank). With too few values for
// such an interval (m n / 2 - 1.96 sd < 1) the interval is every difference.
struct Shift {
  double estimate = 0;
  double low = 0;
  double high = 0;
  bool known = false;  // false when either side is empty
};
Shift LocationShift(const std::vector<double>& first, const std::vector<double>& later);

struct LearningVerdict {
  RunFigures first;  // medians over the sequences' first runs
  RunFigures later;  // medians over every later run of every sequence
  size_t first_runs = 0;
  size_t later_runs = 0;
  bool moved_halved = false;
  bool messages_halved = false;
  bool efficiency_kept = false;
  Shift efficiency_shift;  // later runs against first runs
  bool met() const { return moved_halved && messages_halved && efficiency_kept; }
};

// The verdict over `sequences`, each a job's runs in order. A sequence of
// fewer than two runs says nothing and is left out; with none left, nothing
// is met (first_runs 0).
LearningVerdict JudgeLearning(const std::vector<std::vector<RunFigures>>& sequences);

}  // namespace ballast::fuzzy
