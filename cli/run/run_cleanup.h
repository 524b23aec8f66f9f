// What a local run (`ballast run`, RunLocal) must not leave behind: the
// processes a worker started that outlived it, and the cgroups of runs whose
// owner is gone.
//
// Where the run has cgroups (run_containment.h) they hold everything but
// what a command run as root moves out of them (run_orphans.h), and its
// guard (run_guard.h) kills and removes them however the run ends. What is
// here is the rest:
// - without cgroups, every worker leads a session of its own (setsid
//   between fork and exec), so its session id finds what it left behind that
//   stayed in that session (KillSession); a process that started a session
//   of its own is not found;
// - every cgroup a run makes is named after the run's process id
//   (OwnedGroupName), so that a later run removes the groups of a run whose
//   guard could not (it was killed too); a live run's groups are never
//   touched.
//
// Thread-safety: functions keep no state; they read /proc and the cgroup
// file systems, and may run from any thread.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <string>
#include <vector>

namespace ballast::cli {

// The name of the cgroup that process `owner` makes for `name`:
// "run<owner>-<name>".
std::string OwnedGroupName(pid_t owner, const std::string& name);

// The owner of a group that OwnedGroupName named; 0 for any other name.
pid_t GroupOwner(const std::string& group);

// True while process `pid` exists and is not a zombie.
bool ProcessRuns(pid_t pid);

// Sends SIGKILL to every process of session `session`: what a dead worker
// left. Returns how many processes were signalled (0 when none were left).
int KillSession(pid_t session);

// Waits until the cgroup whose process list is `procs_file` holds no process,
// at most `patience`. Returns true when it is empty (or gone), false when
// processes remain at the end.
bool WaitGroupEmpty(const std::string& procs_file, std::chrono::milliseconds patience);

// Removes the cgroups directly under each of `parents` that OwnedGroupName
// named for a process that no longer runs, and the groups below them, after
// killing any process still in them. Returns the paths removed; a group that
// cannot be removed is left in place and logged. A missing parent is skipped.
std::vector<std::string> RemoveStaleGroups(const std::vector<std::string>& parents);

// The directories under which a run makes its groups (CpuLimit, cpu_limit.h;
// RunContainment, run_containment.h): cgroup v1's cpu hierarchy and the
// cgroup v2 hierarchy (at /sys/fs/cgroup, or where it is mounted beside v1),
// each under "ballast".
std::vector<std::string> RunGroupParents();

}  // namespace ballast::cli
