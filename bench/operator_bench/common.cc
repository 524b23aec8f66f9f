#include "bench/operator_bench/common.h"

#include <fmt/format.h>
#include <unistd.h>

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <sstream>

namespace ballast::operator_bench {

double Ms(Clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); }

double Percentile(std::vector<double> values, double p) {
  if (values.empty()) return NAN;
  std::sort(values.begin(), values.end());
  const auto rank = static_cast<size_t>(std::ceil(p * static_cast<double>(values.size())));
  return values[std::clamp<size_t>(rank, 1, values.size()) - 1];
}

std::string LoadAverage() {
  std::ifstream in("/proc/loadavg");
  std::string one, five, fifteen;
  in >> one >> five >> fifteen;
  return fmt::format("{} {} {}", one, five, fifteen);
}

double ProcStatus(int pid, const std::string& field) {
  std::ifstream in(fmt::format("/proc/{}/status", pid));
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind(field, 0) == 0) return std::stod(line.substr(field.size()));
  }
  return NAN;
}

double ProcStatusMb(int pid, const std::string& field) { return ProcStatus(pid, field) / 1024; }

double CpuSeconds(int pid) {
  std::ifstream in(fmt::format("/proc/{}/stat", pid));
  std::string stat((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const auto paren = stat.rfind(')');
  if (paren == std::string::npos) return NAN;
  std::istringstream fields(stat.substr(paren + 2));
  std::string field;
  double ticks = 0;
  for (int i = 3; i <= 15 && fields >> field; ++i) {
    if (i >= 14) ticks += std::stod(field);  // utime (14), stime (15)
  }
  return ticks / static_cast<double>(sysconf(_SC_CLK_TCK));
}

json PrimesJob(const std::string& name, uint64_t limit, const std::string& policy,
               const std::string& pool) {
  json spec = {{"workload", {{"primes", {{"limit", limit}, {"method", "trial"}}}}},
               {"policy", policy}};
  if (!pool.empty()) spec["nodeSelector"] = {{kPoolLabel, pool}};
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", name}}},
          {"spec", spec}};
}

std::string Fixed(double value, int decimals) {
  return std::isnan(value) ? "n/a" : fmt::format("{:.{}f}", value, decimals);
}

}  // namespace ballast::operator_bench
