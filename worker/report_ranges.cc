#include "worker/report_ranges.h"

#include <algorithm>

namespace ballast::worker {

std::vector<std::pair<size_t, size_t>> ReportGroups(size_t steps) {
  std::vector<std::pair<size_t, size_t>> groups;
  size_t end = steps;
  size_t length = 1;  // kSingleSteps times 1, then 2, 4, 8, … going back
  while (end > 0) {
    const size_t begin = end - std::min(length, end);
    groups.emplace_back(begin, end);
    end = begin;
    if (groups.size() >= kSingleSteps) length *= 2;
  }
  std::reverse(groups.begin(), groups.end());
  return groups;
}

}  // namespace ballast::worker
