// RunGuard: the process that makes sure nothing of a local run outlives it,
// however the run ends — SIGKILL included, which no code of the run itself
// can answer.
//
// `ballast run` forks the guard before it starts any worker. The guard leads a
// session of its own (a kill of the run's process group, as `timeout -s KILL`
// or a shell's `kill -9 %1` sends, does not reach it), sits outside the run's
// cgroups, ignores the terminal's signals, and blocks reading a socket whose
// only other end is the run's (a socket pair: see Release). When the run ends, however it ends, the
// kernel closes that end and the guard wakes: it kills every process of the run's cgroup v2 subtree
// at once (cgroup.kill: the workers, their commands and whatever those started, in any session) and
// every process in the run's other cgroups (cgroup v1 CPU quotas, which hold what a command run as
// root moved out of the subtree), waits until they are empty (10 s at most, in all), removes them,
// and exits. After a clean stop the run has done all of that itself, and says so (Release): the
// guard exits at once, without waiting for what the run could not kill (the run reports it; the
// next run removes the groups, run_cleanup.h).
//
// Why not less: a parent-death signal reaches only the run's direct children
// (the workers), and only a process that obeys it; what the workers' commands
// start in sessions of their own is nobody's child. Killing by session finds
// nothing that called setsid. Cleaning up at the start of the next run leaves
// everything running until then, which may be never. The guard is the one
// process that outlives the run by design, and it lives only until the run's
// cgroups are gone.
//
// The guard is a forked child of a threaded process that never execs, so it
// runs only async-signal-safe code (worker/cgroup_tree.h), on copies of the
// paths made before fork.
//
// Thread-safety: construct and destroy on one thread; one guard per run.
#pragma once

#include <sys/types.h>

#include <memory>
#include <string>
#include <vector>

#include "core/common/status.h"

namespace ballast::cli {

class RunGuard {
 public:
  // Forks the guard for the run's cgroup v2 subtree `kill_dir` and its other
  // cgroups `remove_dirs`. Returns Unavailable when the socket pair or the fork
  // fails.
  static StatusOr<std::unique_ptr<RunGuard>> Start(const std::string& kill_dir,
                                                   const std::vector<std::string>& remove_dirs);
  // Tells the guard that the run has stopped its processes and removed its
  // cgroups itself, as far as it could: the guard then exits at once. Call
  // once, after that cleanup; without it the guard does the cleanup.
  void Release();
  // Lets go of the guard (unless Release did: it kills and removes whatever
  // is left) and waits for it to exit.
  ~RunGuard();
  RunGuard(const RunGuard&) = delete;
  RunGuard& operator=(const RunGuard&) = delete;

  pid_t pid() const { return pid_; }

 private:
  RunGuard(pid_t pid, int release_fd) : pid_(pid), release_fd_(release_fd) {}

  pid_t pid_;
  // The run's end of the socket pair: closing it wakes the guard; -1 once released.
  int release_fd_;
};

}  // namespace ballast::cli
