// The figures the phases of ballast_operator_bench hand to its closing
// table, and the table itself: each figure beside its target.
#pragma once
#include <cmath>
#include <string>
#include <utility>
#include <vector>

namespace ballast::operator_bench {

struct Results {
  double apply_p50 = NAN;  // ms, apply -> all worker pods
  // N at once
  double peak_rss = NAN;  // MB, VmHWM
  double reconcile_p99_ms = NAN;
  double requests_per_job = NAN;
  double wall_s = NAN;                                     // to all Succeeded
  std::vector<std::pair<std::string, double>> efficiency;  // policy, median
};

// Prints "== figures ==" and a line per figure: value, unit, target and
// whether it was met. `concurrent` is the number of jobs at once.
void PrintFigures(const Results& results, int concurrent);

}  // namespace ballast::operator_bench
