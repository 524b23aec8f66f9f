// RunOrphans: finds what a local run's processes left outside the run's
// cgroups (or, without cgroups, outside the workers' sessions), so that the
// run's end kills it too, as a process supervisor does.
//
// A command run as root can write its pid into another cgroup's cgroup.procs
// and so leave the run's cgroup v2 subtree, where cgroup.kill no longer
// reaches it (run_containment.h). Two things still find what it leaves:
// - its CPU-quota group, where cgroup v1 holds the quotas: a process that
//   moved itself out of the v2 subtree alone stays in it (cpu_limit.h);
// - its parentage. While a run lasts, RunLocal's process is the child
//   subreaper (PR_SET_CHILD_SUBREAPER) of everything it starts: a process
//   whose parent exits is handed to it rather than to init, whatever its
//   session or cgroup. So every process the workers started, directly or
//   not, stays a descendant of the run: a child of the run that is not a
//   worker (nor the guard, nor a child the caller had before) is one of the
//   run's orphans, and everything below it is the run's too.
//
// What neither finds: a process started on a command's behalf by a process
// outside the run (a service manager, a container runtime), and, once the
// run itself was killed with SIGKILL, the orphans, which then go to init
// (the guard, run_guard.h, still empties the run's CPU-quota groups).
//
// The decision (EscapedToKill) is a function of a process table; the rest
// reads /proc and signals.
//
// Thread-safety: EscapedToKill is pure. A RunOrphans is used from the thread
// that runs RunLocal; one per process at a time (it reaps child processes
// it did not start).
#pragma once

#include <sys/types.h>

#include <chrono>
#include <set>
#include <string>
#include <vector>

namespace ballast::cli {

// One process of /proc: its id, its parent's, and its state ('Z': a zombie,
// which runs no more).
struct ProcessEntry {
  pid_t pid = 0;
  pid_t parent = 0;
  char state = 'R';
};

// Every process in /proc, read now (a process that ends while it is read is
// left out).
std::vector<ProcessEntry> ReadProcessTable();

// The processes the end of a run kills beyond its cgroups: the children of
// `self` not in `keep` (the run's orphans), the processes in `listed` (what
// remains in the run's CPU-quota groups), and every descendant of those, by
// `table`. Never `self`, a process in `keep`, a zombie, or a pid `table`
// does not hold (gone). Returns them sorted.
std::vector<pid_t> EscapedToKill(const std::vector<ProcessEntry>& table, pid_t self,
                                 const std::set<pid_t>& keep, const std::vector<pid_t>& listed);

class RunOrphans {
 public:
  // What the run killed outside its cgroups (or sessions): processes
  // signalled by KillInGroup and KillEscaped, each counted once, and those
  // still running at KillEscaped's end (in uninterruptible sleep, say).
  struct Sweep {
    size_t killed = 0;
    size_t remaining = 0;
  };

  // Makes this process the child subreaper of what it starts from now on,
  // and remembers the children it has now: they are the caller's, never
  // touched. adopting() is false when prctl refuses (then only `listed`
  // processes are found).
  RunOrphans();
  // Puts back the subreaper setting this process had before.
  ~RunOrphans();
  RunOrphans(const RunOrphans&) = delete;
  RunOrphans& operator=(const RunOrphans&) = delete;

  bool adopting() const { return adopting_; }

  // A child of this process the run keeps (its guard): never killed nor reaped here.
  void Keep(pid_t pid) { keep_.insert(pid); }

  // Reaps the orphans that have exited, so that none stays a zombie of the
  // run. Leaves every other exited child, and stops at the first of them
  // (the runner reaps its workers itself, in the same loop): `workers` are
  // the workers' pids. Returns how many it reaped.
  size_t ReapExited(const std::set<pid_t>& workers);

  // After a node's worker has exited: kills the processes in its CPU-quota
  // group `dir` where that is a group of its own (cgroup v1), which moved
  // themselves out of the node's group of the run, or left the worker's
  // session. Returns how many were signalled.
  size_t KillInGroup(const std::string& dir);

  // After the workers have been reaped and the run's cgroups killed: kills
  // EscapedToKill of the process table and of the processes in the groups
  // `quota_dirs` (their cgroup.procs), again until none is left or
  // `patience` has passed, reaping what it adopted. Returns what it and
  // KillInGroup did.
  Sweep KillEscaped(const std::vector<std::string>& quota_dirs, std::chrono::milliseconds patience);

 private:
  std::set<pid_t> keep_;       // the caller's children from before, and the guard
  std::set<pid_t> signalled_;  // every process killed here
  int was_subreaper_ = 0;
  bool adopting_ = false;
};

}  // namespace ballast::cli
