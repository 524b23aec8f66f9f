// What a local run (`ballast run`, RunLocal) must not leave behind: the
// processes a worker started that outlived it, and the cgroups of runs whose
// owner is gone.
//
// Every worker of a local run leads a session of its own (setsid between fork
// and exec), and everything it starts stays in that session (the exec
// kernel's commands get process groups of their own, in the same session), so
// its session id finds all it left behind once it is gone. Every cgroup a run
// makes is named after the run's process id (OwnedGroupName), so that a later
// run removes the groups of a run that was killed with SIGKILL and could not
// remove them itself; a live run's groups are never touched.
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
// named for a process that no longer runs, after killing any process still
// in them. Returns the paths removed; a group that cannot be removed is left
// in place and logged. A missing parent is skipped.
std::vector<std::string> RemoveStaleGroups(const std::vector<std::string>& parents);

// The directories under which CpuLimit (cpu_limit.h) makes its groups: cgroup
// v1's cpu hierarchy and the v2 root, each under "ballast".
std::vector<std::string> CpuLimitParents();

}  // namespace ballast::cli
