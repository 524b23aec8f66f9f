// CpuLimit: makes a process as slow as an emulated node by a CPU quota — a
// cgroup whose CFS quota is `speed` cores (cgroup v1's cpu controller, or v2's
// cpu.max) and whose CPU weight is high, so that the node gets its quota even
// when other processes keep the machine busy. Where no cgroup can be made (not root, no cpu
// controller), the caller falls back to the worker's own duty cycle (ballast-worker --speed).
//
// Thread-safety: a value owning one cgroup; not shared between threads.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::cli {

// The CFS bandwidth that holds a share of the CPU: `quota_us` of CPU time in
// every `period_us`. The kernel takes quotas from 1000 us and periods from
// 1000 us to 1 s (cgroup v1's cfs_quota_us and cfs_period_us, v2's cpu.max).
struct CpuQuota {
  long quota_us = 0;
  long period_us = 0;
};

inline constexpr long kDefaultPeriodUs = 100000;
inline constexpr long kMaxPeriodUs = 1000000;
inline constexpr long kMinQuotaUs = 1000;
// The smallest share a quota can hold: 1000 us in a period of 1 s.
inline constexpr double kMinQuotaCores = static_cast<double>(kMinQuotaUs) / kMaxPeriodUs;

// Returns the quota that holds `speed` cores, within 0.05 % of it: the
// default period of 100 ms, lengthened (up to 1 s) when `speed` is below 0.01
// core, where 100 ms would need a quota under the kernel's minimum. A 0.003
// core node gets 1000 us every 333334 us, not the 0.01 core that a 1000 us
// floor in a 100 ms period gave. Invalid for a speed that is not finite or
// lies below kMinQuotaCores (no quota holds it).
StatusOr<CpuQuota> QuotaFor(double speed);

// The compute threads of an emulated node's worker: one per started core.
int WorkerThreads(double speed);

// The share of each CPU period the node's worker threads compute
// (balance::WorkerPrior::duty): speed / threads when something holds the
// node's speed (`held`: a quota, or the worker's duty cycle below one core),
// 1 for a node of whole cores or an unheld one, which computes steadily.
double NodeDuty(double speed, bool held);

// The cores a node's worker (and its commands) can compute with: its
// `speed` under a CPU quota (`quota`), else the most of one core, its speed
// and this machine's `machine_cores` (a duty cycle throttles the worker's own
// steps, not what an exec command starts). What the coordinator bounds its
// reported CPU seconds by.
double WorkerCores(double speed, bool quota, unsigned machine_cores);

// When nodes of `speeds` sum to more cores than the machine's
// `machine_cores` (0: unknown, never), the note the run's output gives beside
// its figures (the workers compete and do not get their speeds); empty
// otherwise.
std::string OversubscriptionNote(const std::vector<double>& speeds, unsigned machine_cores);

class CpuLimit {
 public:
  // Limits a node to `speed` cores (QuotaFor): in the cgroup v1 group
  // "ballast/<group>" of the cpu hierarchy where there is one; else, in
  // cgroup v2, in `v2_dir` when given (the node's group of the run's
  // subtree, run_containment.h, which the caller makes and removes; the
  // groups above it get the cpu controller), or in a group "ballast/<group>"
  // of its own. Returns Invalid for a speed QuotaFor refuses, and
  // Unavailable (with the reason) when this machine does not allow a cgroup.
  static StatusOr<std::unique_ptr<CpuLimit>> Create(const std::string& group, double speed,
                                                    const std::string& v2_dir = "");
  // Removes the cgroup it made (it must hold no process any more).
  ~CpuLimit();
  CpuLimit(const CpuLimit&) = delete;
  CpuLimit& operator=(const CpuLimit&) = delete;

  // The group's directory, and the file a process id is written to, to move
  // that process into the group.
  const std::string& dir() const { return dir_; }
  const std::string& procs_file() const { return procs_file_; }
  // "cgroup v1 cpu quota 50000/100000 us" — for logs and the run's output.
  const std::string& description() const { return description_; }

 private:
  CpuLimit(std::string dir, std::string procs_file, std::string description, bool owned)
      : dir_(std::move(dir)),
        procs_file_(std::move(procs_file)),
        description_(std::move(description)),
        owned_(owned) {}

  std::string dir_;
  std::string procs_file_;
  std::string description_;
  bool owned_;  // made here, removed by the destructor
};

}  // namespace ballast::cli
