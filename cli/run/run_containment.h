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
// escape on purpose, not by accident. What escapes is found another way at
// the run's end (run_orphans.h) and counted apart (ContainmentReport::escaped).
//
// Thread-safety: a value owning the subtree; not shared between threads.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::cli {

// A cgroup of the run that could not be removed, and why: "2 processes
// remain in it", "a cgroup below it remains", or the error of rmdir.
struct LeftGroup {
  std::string dir;
  std::string why;
};

// How a run's processes were contained and what the end of the run left.
struct ContainmentReport {
  bool by_cgroup = false;  // in cgroups: what stays in them cannot slip away unnoticed
  std::string where;       // the run's cgroup, or why there is none
  size_t killed = 0;       // still running at the end in its cgroups (or sessions), killed then
  // Processes found outside them at the end, and killed: what a command run
  // as root moved out of the run's cgroups (or, without cgroups, what left
  // the workers' sessions), found as the run's orphans or in its CPU-quota
  // groups (run_orphans.h).
  size_t escaped = 0;
  size_t remaining = 0;                // processes of the run still running after the kill
  std::vector<LeftGroup> groups_left;  // cgroups of the run that could not be removed

  // True when nothing of the run is known to remain and the run was in
  // cgroups (without them what remains cannot be counted).
  bool clean() const { return by_cgroup && remaining == 0 && groups_left.empty(); }
};

// Removes the cgroup `dir` and the groups below it (cgroup::RemoveTree).
// Returns those that stayed, each with why; none when all are gone or `dir`
// never was.
std::vector<LeftGroup> RemoveGroups(const std::string& dir);

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
  // subtree (escaped is left for the caller). Call once, after the workers
  // have been stopped.
  ContainmentReport KillAll(std::chrono::milliseconds patience);

  // The run's group.
  const std::string& dir() const { return dir_; }

 private:
  explicit RunContainment(std::string dir) : dir_(std::move(dir)) {}

  std::string dir_;
  bool killed_ = false;
};

}  // namespace ballast::cli
