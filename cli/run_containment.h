// RunContainment: the cgroup v2 subtree that holds every process of a local
// run, so that all of them can be killed at once, whatever left its session
// or process group (`setsid`, a double fork, a daemon):
//
//   <v2>/ballast/run<pid>-<job id>/             the run (OwnedGroupName); no process of its own
//   <v2>/ballast/run<pid>-<job id>/<node>/      a node's worker; on a v2-only machine also
//                                               its CPU quota (cpu_limit.h)
//   <v2>/ballast/run<pid>-<job id>/<node>/cmd-<worker pid>-<n>/
//                                               each exec command, made by the worker
//                                               (--exec-cgroup, worker/kernels/command_group.h)
//
// <v2> is where cgroup v2 is mounted: /sys/fs/cgroup, or /sys/fs/cgroup/unified
// beside cgroup v1 hierarchies. It needs root (or a delegated hierarchy) and
// cgroup.kill (Linux 5.14); where either is missing, Create says why and the
// run falls back to sessions and process groups (local_runner.h), and says so.
//
// A process in these groups can leave them only by writing its pid into
// another cgroup's cgroup.procs, which takes root: a command run as root can
// escape on purpose, not by accident.
//
// Thread-safety: a value owning the subtree; not shared between threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>

#include "core/common/status.h"

namespace ballast::cli {

// How a run's processes were contained and what the end of the run left.
struct ContainmentReport {
  bool by_cgroup = false;  // in cgroups: nothing can have slipped away unnoticed
  std::string where;       // the run's cgroup, or why there is none
  size_t killed = 0;       // processes still running at the end, killed then
  size_t remaining = 0;    // processes still in the run's cgroups after the kill
  int groups_left = 0;     // cgroups of the run that could not be removed

  // True when nothing of the run is known to remain, and nothing could
  // have escaped unseen.
  bool clean() const { return by_cgroup && remaining == 0 && groups_left == 0; }
};

class RunContainment {
 public:
  // Makes the run's group "<v2>/ballast/<group>". Returns Unavailable, with
  // the reason, when cgroup v2 is not mounted, the group cannot be made (not
  // root), or it has no cgroup.kill.
  static StatusOr<std::unique_ptr<RunContainment>> Create(const std::string& group);
  // KillAll, unless it ran.
  ~RunContainment();
  RunContainment(const RunContainment&) = delete;
  RunContainment& operator=(const RunContainment&) = delete;

  // Makes the group of a node, `name` a file name (BoundedFileName). Returns
  // its directory, or Unavailable naming it.
  StatusOr<std::string> AddNode(const std::string& name);

  // After a node's worker has died: kills what it left in `node_dir` (its
  // commands and what they started) and removes the groups below it, so that
  // a restarted worker never runs beside its predecessor's commands. Returns
  // how many processes were killed.
  size_t ClearNode(const std::string& node_dir);

  // Kills every process of the run's subtree at once, waits until it is
  // empty (at most `patience`), counts what remains and removes the
  // subtree. Call once, after the workers have been stopped.
  ContainmentReport KillAll(std::chrono::milliseconds patience);

  // The run's group.
  const std::string& dir() const { return dir_; }

 private:
  explicit RunContainment(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
  bool killed_ = false;
};

}  // namespace ballast::cli
