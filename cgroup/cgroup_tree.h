// Operations on a cgroup v2 subtree that `ballast run` and the worker share:
// move a process into it, kill every process in it at once, wait until it is
// empty, remove it.
//
// A cgroup holds every process started inside it, whatever the process does
// with its session or process group (setsid, a double fork, a daemon): only
// a process allowed to write another cgroup's cgroup.procs (root, in general)
// can leave. cgroup.kill (Linux 5.14) sends SIGKILL to the whole subtree,
// processes forking meanwhile included.
//
// The functions above the line are written with system calls only (open,
// read, write, getdents64, rmdir, nanosleep) and fixed buffers: they are
// async-signal-safe, for the run's guard (cli/run/run_guard.h), a forked child of
// a threaded process that never execs. Paths longer than kMaxCgroupPath fail.
//
// Thread-safety: no state; callable from any thread.
#pragma once

#include <sys/types.h>

#include <cstddef>
#include <string>
#include <vector>

namespace ballast::cgroup {

inline constexpr size_t kMaxCgroupPath = 4096;

// Writes "1" to dir/cgroup.kill. Returns false when that fails (no such
// cgroup, or a kernel older than 5.14).
bool Kill(const char* dir);
// True when dir/cgroup.events says "populated 0" (no process in the cgroup
// or below it) or the cgroup does not exist.
bool Empty(const char* dir);
// Waits until Empty(dir), looking every millisecond, at most `timeout_ms`
// of the monotonic clock. Returns Empty(dir) at the end.
bool WaitEmpty(const char* dir, int timeout_ms);
// Sends SIGKILL to every process listed in dir/cgroup.procs: what kills a
// cgroup v1 group, which has no cgroup.kill (a process forking meanwhile
// needs another call). Returns how many were signalled; 0 when the group
// is empty or gone.
int KillListed(const char* dir);
// Removes the cgroup `dir` and every cgroup below it, deepest first (rmdir:
// a cgroup's files go with it). Returns how many cgroups stayed (one still
// holding a process, or deeper than 32 levels); 0 when the whole tree is gone
// or never was.
int RemoveTree(const char* dir);
// Moves the calling process into the cgroup whose cgroup.procs file is
// `procs` (writes its pid there): what a child does before it execs
// (process/child_start.h). Returns false when that fails.
bool JoinProcs(const char* procs);
// The same through `procs_fd`, a cgroup.procs file open for writing (writes
// "0": the writing process).
bool JoinProcsFd(int procs_fd);

// --- not async-signal-safe -------------------------------------------------

// The mount point of the cgroup v2 hierarchy, from /proc/self/mountinfo:
// "/sys/fs/cgroup" on a v2-only machine, "/sys/fs/cgroup/unified" beside v1
// hierarchies; empty when none is mounted.
std::string V2Mount();

// The processes in `dir` and in every cgroup below it (their cgroup.procs);
// empty when the cgroup does not exist.
std::vector<pid_t> Processes(const std::string& dir);

// Kills everything in the cgroup `dir` and below (Kill; where cgroup.kill is
// missing, SIGKILL to each process listed), waits until it is empty, at most
// `timeout_ms`, and removes the tree (RemoveTree). Returns the cgroups that
// stayed.
int KillAndRemove(const std::string& dir, int timeout_ms);

}  // namespace ballast::cgroup
