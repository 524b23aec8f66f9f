#include "bench/operator_bench/figures.h"

#include <fmt/format.h>

#include <iostream>

#include "bench/operator_bench/common.h"

namespace ballast::operator_bench {
namespace {

// One figure of the closing table.
struct Figure {
  std::string name;
  double value;
  std::string unit;
  double target;
  bool at_most;  // target is a ceiling (else a floor)
  int decimals;
};

}  // namespace

void PrintFigures(const Results& results, int concurrent) {
  const std::string at_once = fmt::format("{} jobs at once: ", concurrent);
  std::vector<Figure> figures = {
      {"apply -> all worker pods, p50", results.apply_p50, "ms", 300, true, 1},
      {at_once + "operator peak RSS", results.peak_rss, "MB", 60, true, 1},
      {at_once + "reconcile p99", results.reconcile_p99_ms, "ms", 100, true, 1},
      {at_once + "API requests / job", results.requests_per_job, "", NAN, true, 1},
      {at_once + "wall time to all Succeeded", results.wall_s, "s", NAN, true, 1},
  };
  for (const auto& [policy, eff] : results.efficiency) {
    figures.push_back({"efficiency, " + policy, eff, "", NAN, false, 3});
  }
  std::cout << "== figures ==\n";
  for (const auto& f : figures) {
    std::string target = "-";
    std::string verdict;
    if (!std::isnan(f.target)) {
      target = fmt::format("{} {:g} {}", f.at_most ? "<=" : ">=", f.target, f.unit);
      if (std::isnan(f.value)) {
        verdict = "not measured";
      } else if (f.at_most ? f.value <= f.target : f.value >= f.target) {
        verdict = "met";
      } else {
        verdict = fmt::format("MISSED by {:.{}f} {} ({:.1f} %)", std::abs(f.value - f.target),
                              f.decimals, f.unit, std::abs(f.value - f.target) / f.target * 100);
      }
    }
    std::cout << fmt::format("  {:<44} {:>9} {:<3} {:<12} {}\n", f.name, Fixed(f.value, f.decimals),
                             f.unit, target, verdict);
  }
  std::cout << std::flush;
}

}  // namespace ballast::operator_bench
