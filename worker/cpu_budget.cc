#include "worker/cpu_budget.h"

#include <fmt/format.h>
#include <sched.h>

#include <algorithm>
#include <charconv>
#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>
#include <vector>

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;

// A cgroup file's first line, at most a few hundred bytes; "" when absent.
std::string ReadSmall(const fs::path& file) {
  std::ifstream in(file);
  std::string line;
  if (!in || !std::getline(in, line)) return "";
  return line.substr(0, 256);
}

std::optional<long long> ParseInteger(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  long long value = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), value);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  return value;
}

std::optional<double> Cores(long long quota, long long period) {
  if (quota <= 0 || period <= 0) return std::nullopt;
  return static_cast<double>(quota) / static_cast<double>(period);
}

// The directories from `mount`/`path` up to `mount`, deepest first; only
// `mount` when the path is not a directory under it (a cgroup namespace
// shows the process's own group at the mount's root).
std::vector<fs::path> GroupsUp(const fs::path& mount, const std::string& path) {
  std::vector<fs::path> groups;
  fs::path at = (mount / fs::path(path).relative_path()).lexically_normal();
  std::error_code error;
  const fs::path relative = at.lexically_relative(mount);
  if (path.empty() || relative.empty() || *relative.begin() == ".." ||
      !fs::is_directory(at, error)) {
    return {mount};
  }
  while (true) {
    groups.push_back(at);
    if (at == mount || !at.has_parent_path()) break;
    at = at.parent_path();
  }
  return groups;
}

unsigned AffinityCores() {
  cpu_set_t set;
  if (sched_getaffinity(0, sizeof(set), &set) == 0) return std::max(1, CPU_COUNT(&set));
  return std::max(1u, std::thread::hardware_concurrency());
}

}  // namespace

std::optional<double> ParseCpuMax(std::string_view text) {
  const size_t space = text.find(' ');
  if (space == std::string_view::npos) return std::nullopt;
  const auto quota = ParseInteger(text.substr(0, space));  // "max": nullopt, unlimited
  const auto period = ParseInteger(text.substr(space + 1));
  if (!quota || !period) return std::nullopt;
  return Cores(*quota, *period);
}

std::optional<double> ParseCfsQuota(std::string_view quota, std::string_view period) {
  const auto q = ParseInteger(quota);
  const auto p = ParseInteger(period);
  if (!q || !p) return std::nullopt;
  return Cores(*q, *p);
}

CgroupPaths ParseProcCgroup(std::string_view text) {
  CgroupPaths paths;
  std::istringstream lines{std::string(text)};
  std::string line;
  while (std::getline(lines, line)) {
    // hierarchy-ID:controller-list:path; the path may hold ':' itself.
    const size_t first = line.find(':');
    const size_t second = first == std::string::npos ? first : line.find(':', first + 1);
    if (second == std::string::npos) continue;
    const std::string id = line.substr(0, first);
    const std::string controllers = line.substr(first + 1, second - first - 1);
    const std::string path = line.substr(second + 1);
    if (id == "0" && controllers.empty()) {
      paths.v2 = path;
      continue;
    }
    std::istringstream names(controllers);
    std::string name;
    while (std::getline(names, name, ',')) {
      if (name == "cpu") {
        paths.v1_cpu = path;
        paths.v1_cpu_controllers = controllers;
      }
    }
  }
  return paths;
}

std::optional<double> ParseNodeCpu(std::string_view text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.remove_suffix(1);
  if (text.empty() || text.size() > 32) return std::nullopt;
  double cores = 0;
  const auto [end, error] = std::from_chars(text.data(), text.data() + text.size(), cores);
  if (error != std::errc() || end != text.data() + text.size()) return std::nullopt;
  if (!std::isfinite(cores) || cores <= 0) return std::nullopt;
  return cores;
}

void CpuBudget::Tighten(std::optional<double> cores, const std::string& source) {
  if (cores && (!quota_cores || *cores < *quota_cores)) {
    quota_cores = cores;
    quota_source = source;
  }
}

unsigned CpuBudget::Threads() const {
  if (!quota_cores) return affinity_cores;
  // One per started core; a hair under a whole number (a quota rounded by
  // the runtime) does not start another.
  const double started = std::ceil(*quota_cores - 1e-6);
  return static_cast<unsigned>(std::clamp(started, 1.0, static_cast<double>(affinity_cores)));
}

std::string CpuBudget::ToString() const {
  if (!quota_cores) return fmt::format("{} cores (no CPU quota)", affinity_cores);
  return fmt::format("{:g} CPU of {} cores ({})", *quota_cores, affinity_cores, quota_source);
}

CpuBudget ReadCpuBudget(const std::string& cgroup_root, const std::string& proc_cgroup) {
  CpuBudget budget;
  budget.affinity_cores = AffinityCores();
  std::ifstream in(proc_cgroup);
  std::stringstream text;
  text << in.rdbuf();
  const CgroupPaths paths = ParseProcCgroup(text.str().substr(0, 64 * 1024));
  const fs::path root(cgroup_root);
  auto consider = [&](std::optional<double> cores, const std::string& source) {
    budget.Tighten(cores, source);
  };
  if (!paths.v1_cpu.empty()) {
    // cgroup v1: the cpu hierarchy is mounted under its controllers' name
    // ("cpu,cpuacct"), often also as "cpu".
    for (const fs::path& mount : {root / paths.v1_cpu_controllers, root / "cpu"}) {
      if (!fs::exists(mount / "cpu.cfs_quota_us")) continue;
      for (const fs::path& group : GroupsUp(mount, paths.v1_cpu)) {
        const std::string quota = ReadSmall(group / "cpu.cfs_quota_us");
        const std::string period = ReadSmall(group / "cpu.cfs_period_us");
        consider(ParseCfsQuota(quota, period),
                 fmt::format("cgroup v1 cpu.cfs_quota_us {} / cpu.cfs_period_us {} at {}", quota,
                             period, group.string()));
      }
      break;
    }
  } else if (!paths.v2.empty() || fs::exists(root / "cgroup.controllers")) {
    for (const fs::path& group : GroupsUp(root, paths.v2)) {
      const std::string max = ReadSmall(group / "cpu.max");
      consider(ParseCpuMax(max), fmt::format("cgroup v2 cpu.max {} at {}", max, group.string()));
    }
  }
  return budget;
}

}  // namespace ballast::worker
