#include "cli/run/cpu_limit.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <filesystem>
#include <fstream>

#include "cgroup/cgroup_tree.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// CPU weights far above the default (1024 in v1, 100 in v2): a node's worker
// wins the CPU from other processes up to its quota, so its speed holds.
constexpr long kHighShares = 65536;
constexpr long kHighWeight = 5000;

bool WriteValue(const fs::path& file, const std::string& value) {
  std::ofstream out(file);
  out << value;
  out.flush();
  return static_cast<bool>(out);
}

bool HasCpuController(const fs::path& controllers) {
  std::ifstream in(controllers);
  std::string name;
  while (in >> name) {
    if (name == "cpu") return true;
  }
  return false;
}

// Turns the cpu controller on for `dir`: "+cpu" in the cgroup.subtree_control
// of each group from the v2 root `mount` down to dir's parent, and a high CPU
// weight on each group below the root (each level competes with its
// siblings), dir included. Returns false when a controller cannot be turned on.
bool EnableCpuAbove(const fs::path& mount, const fs::path& dir) {
  fs::path at = mount;
  for (const fs::path& part : dir.lexically_relative(mount)) {
    if (!WriteValue(at / "cgroup.subtree_control", "+cpu")) return false;
    at /= part;
    WriteValue(at / "cpu.weight", std::to_string(kHighWeight));
  }
  return true;
}

}  // namespace

StatusOr<CpuQuota> QuotaFor(double speed) {
  if (!(speed >= kMinQuotaCores) || !std::isfinite(speed)) {
    return Status::Invalid(
        fmt::format("speed {}: a CPU quota holds at least {} core ({} us every {} us)", speed,
                    kMinQuotaCores, kMinQuotaUs, kMaxPeriodUs));
  }
  // The shortest period at which the quota is at least the minimum: short
  // periods keep a throttled worker's pauses short.
  const auto needed = static_cast<long>(std::ceil(kMinQuotaUs / speed));
  const long period = std::clamp(needed, kDefaultPeriodUs, kMaxPeriodUs);
  const long quota = std::max(kMinQuotaUs, std::lround(speed * static_cast<double>(period)));
  return CpuQuota{quota, period};
}

int WorkerThreads(double speed) {
  return std::isfinite(speed) && speed > 1 ? static_cast<int>(std::min(std::ceil(speed), 1e6)) : 1;
}

double NodeDuty(double speed, bool held) {
  if (!held || !(speed > 0)) return 1;
  return std::min(1.0, speed / WorkerThreads(speed));
}

double WorkerCores(double speed, bool quota, unsigned machine_cores) {
  if (quota) return speed;
  return std::max({1.0, speed, static_cast<double>(machine_cores)});
}

std::string OversubscriptionNote(const std::vector<double>& speeds, unsigned machine_cores) {
  double cores = 0;
  for (const double speed : speeds) cores += speed;
  if (machine_cores == 0 || cores <= machine_cores + 1e-9) return "";
  return fmt::format(
      "but the nodes' speeds sum to {:.3g} cores on a machine of {}: they compete, and the "
      "ideal and efficiency assume speeds the nodes did not get",
      cores, machine_cores);
}

StatusOr<std::unique_ptr<CpuLimit>> CpuLimit::Create(const std::string& group, double speed,
                                                     const std::string& v2_dir) {
  BALLAST_ASSIGN_OR_RETURN(const CpuQuota cpu, QuotaFor(speed));
  const long quota = cpu.quota_us;
  const long period = cpu.period_us;
  std::error_code error;
  // cgroup v1: a cpu hierarchy of its own.
  const fs::path v1 = "/sys/fs/cgroup/cpu";
  if (fs::exists(v1 / "cpu.cfs_quota_us")) {
    const fs::path dir = v1 / "ballast" / group;
    fs::create_directories(dir, error);
    if (!error && WriteValue(dir / "cpu.cfs_period_us", std::to_string(period)) &&
        WriteValue(dir / "cpu.cfs_quota_us", std::to_string(quota))) {
      // A high weight (the parent's competes with the machine's other
      // processes), so the node gets its whole quota on a busy machine.
      WriteValue(v1 / "ballast" / "cpu.shares", std::to_string(kHighShares));
      WriteValue(dir / "cpu.shares", std::to_string(kHighShares));
      return std::unique_ptr<CpuLimit>(
          new CpuLimit(dir, (dir / "cgroup.procs").string(),
                       fmt::format("cgroup v1 cpu quota {}/{} us", quota, period), true));
    }
    fs::remove(dir, error);
  }
  // cgroup v2: cpu.max, when the cpu controller is on.
  const std::string mount = cgroup::V2Mount();
  if (!mount.empty() && HasCpuController(fs::path(mount) / "cgroup.controllers")) {
    const bool owned = v2_dir.empty();
    const fs::path dir = owned ? fs::path(mount) / "ballast" / group : fs::path(v2_dir);
    if (owned) fs::create_directories(dir, error);
    if (!error && EnableCpuAbove(mount, dir) &&
        WriteValue(dir / "cpu.max", fmt::format("{} {}", quota, period))) {
      return std::unique_ptr<CpuLimit>(
          new CpuLimit(dir, (dir / "cgroup.procs").string(),
                       fmt::format("cgroup v2 cpu.max {} {}", quota, period), owned));
    }
    if (owned) fs::remove(dir, error);
  }
  return Status::Unavailable("no cgroup with a cpu controller can be made here");
}

CpuLimit::~CpuLimit() {
  if (!owned_) return;
  std::error_code error;
  fs::remove(dir_, error);  // rmdir; fails harmlessly while a process remains
}

}  // namespace ballast::cli
