// Reading one gauge out of a Prometheus text exposition, for tests that
// scrape a process's /metrics.
//
// Thread-safety: pure.
#pragma once

#include <string>

namespace ballast::testing_support {

// The value of the first series of gauge `name` that has labels in
// `metrics` (Prometheus text format); -1 when there is none.
inline double Gauge(const std::string& metrics, const std::string& name) {
  const size_t at = metrics.find("\n" + name + "{");
  if (at == std::string::npos) return -1;
  const size_t space = metrics.find(' ', metrics.find('}', at));
  return std::stod(metrics.substr(space + 1, metrics.find('\n', space) - space - 1));
}

}  // namespace ballast::testing_support
