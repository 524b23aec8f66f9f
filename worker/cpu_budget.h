// CpuBudget: how much CPU this process may use, and so how many compute
// threads (or exec commands) a worker runs at once. A container's CPU limit
// is a CFS quota on its cgroup, not fewer visible cores: a pod limited to
// half a core on a four-core board still sees four, and four commands
// time-sliced in half a core cost more than one after the other.
//
//   the cores it may run on (sched_getaffinity: a cpuset, taskset)
//   the tightest CFS quota on its cgroup's path (cgroup v2 cpu.max, or v1
//     cpu.cfs_quota_us / cpu.cfs_period_us), the container's limit
//
//   the CPU its node declares, when the operator passes it (BALLAST_NODE_CPU,
//     from the node's ballast.io/emulated-speed): a board of the test beds is
//     held to its speed by a quota on the node's cgroup, above the pod's,
//     which a container cannot see
//
// The threads are one per started core of the smallest: ceil(quota) (a quota
// of 0.5 runs one command, 1.5 two), as `ballast run` starts an emulated
// node's worker. A job may set its own (exec.concurrency), which wins.
//
// The parsers are pure; ReadCpuBudget reads /proc/self/cgroup and the cgroup
// files, under a root that tests point at a fixture tree.
//
// Thread-safety: no state; callable from any thread.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace ballast::worker {

// cgroup v2's cpu.max ("max 100000", "50000 100000"): the quota in cores, or
// nullopt when unlimited or not understood.
std::optional<double> ParseCpuMax(std::string_view text);
// cgroup v1's cpu.cfs_quota_us ("-1" unlimited) and cpu.cfs_period_us.
std::optional<double> ParseCfsQuota(std::string_view quota, std::string_view period);

// This process's cgroups from /proc/self/cgroup's text: the v2 path (line
// "0::/path") and the v1 path of the hierarchy holding the cpu controller
// ("4:cpu,cpuacct:/path"). Empty when absent.
struct CgroupPaths {
  std::string v2;
  std::string v1_cpu;
  std::string v1_cpu_controllers;  // that hierarchy's name, e.g. "cpu,cpuacct"
};
CgroupPaths ParseProcCgroup(std::string_view text);

// BALLAST_NODE_CPU's value ("0.5", "4"): cores, a finite number > 0, or
// nullopt when empty or anything else.
std::optional<double> ParseNodeCpu(std::string_view text);

struct CpuBudget {
  unsigned affinity_cores = 1;        // cores this process may run on
  std::optional<double> quota_cores;  // the tightest CFS quota, if any
  std::string quota_source;           // "cgroup v2 cpu.max 50000 100000 at /sys/fs/cgroup"
  // Takes `cores` as the quota when it is tighter than the one found, with
  // `source` saying where it came from; nullopt changes nothing.
  void Tighten(std::optional<double> cores, const std::string& source);
  // The compute threads this budget holds: one per started core of the
  // smaller of the two, at least 1.
  unsigned Threads() const;
  // "0.5 CPU (cgroup v2 cpu.max ...)" or "2 cores (no CPU quota)".
  std::string ToString() const;
};

// Reads this process's budget: its affinity and the tightest quota on its
// cgroup's path, from the group up to the root of the mount under
// `cgroup_root` (a group whose path is not under the mount, as in a
// container's own cgroup namespace, is read at the mount's root). Never
// fails: what cannot be read is taken as unlimited.
CpuBudget ReadCpuBudget(const std::string& cgroup_root = "/sys/fs/cgroup",
                        const std::string& proc_cgroup = "/proc/self/cgroup");

}  // namespace ballast::worker
