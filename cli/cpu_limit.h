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

#include "common/status.h"

namespace ballast::cli {

class CpuLimit {
 public:
  // Creates the cgroup "ballast/<group>" limited to `speed` cores. Returns
  // Unavailable (with the reason) when this machine does not allow it.
  static StatusOr<std::unique_ptr<CpuLimit>> Create(const std::string& group, double speed);
  // Removes the cgroup (it must hold no process any more).
  ~CpuLimit();
  CpuLimit(const CpuLimit&) = delete;
  CpuLimit& operator=(const CpuLimit&) = delete;

  // The file a process id is written to, to move that process into the group.
  const std::string& procs_file() const { return procs_file_; }
  // "cgroup v1 quota 50000/100000 us" — for logs.
  const std::string& description() const { return description_; }

 private:
  CpuLimit(std::string dir, std::string procs_file, std::string description)
      : dir_(std::move(dir)),
        procs_file_(std::move(procs_file)),
        description_(std::move(description)) {}

  std::string dir_;
  std::string procs_file_;
  std::string description_;
};

}  // namespace ballast::cli
