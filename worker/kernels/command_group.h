// CommandGroup: what one run of an exec command, and everything it starts,
// lives in, so that all of it ends when the command does (exec_kernel.cc).
//
// With a cgroup parent (ballast-worker --exec-cgroup DIR: `ballast run`, as
// root on a machine with cgroup v2, gives each worker its node's group of the
// run) every command gets a cgroup of its own, DIR/cmd-<worker pid>-<n>.
// Nothing the command starts can leave it by a new session, a double fork or
// a daemon; when the command exits (or is ended), cgroup.kill ends whatever
// it left running, and the cgroup is removed.
//
// Without one (a worker pod, whose /sys/fs/cgroup is read-only; a run that
// is not root) the command leads a process group of its own, and SIGKILL to
// that group ends what it left. A process that starts a session or a group
// of its own (`setsid`) escapes it; in a pod it ends with the pod.
//
// Either way the command also leads a process group, which StopExecCommands
// sends SIGTERM first.
//
// Thread-safety: Open and Finish may run concurrently for different
// commands; SetCommandCgroupParent before any runs.
#pragma once

#include <sys/types.h>

#include <string>

namespace ballast::kernels {

// Every command from now on gets a cgroup below `dir` (a cgroup v2 directory
// this process may make groups in); "" turns that off. Returns false, and
// changes nothing, when `dir` has no cgroup.kill (not a cgroup v2 group, or a
// kernel older than 5.14).
bool SetCommandCgroupParent(const std::string& dir);

class CommandGroup {
 public:
  // Before fork: the group of the next command, with its cgroup made and
  // opened when a parent is set. Never fails: a cgroup that cannot be made
  // is logged, and that command runs in its process group only.
  static CommandGroup Open();
  CommandGroup(CommandGroup&& other) noexcept;
  CommandGroup& operator=(CommandGroup&&) = delete;
  CommandGroup(const CommandGroup&) = delete;
  ~CommandGroup();

  // The cgroup's cgroup.procs, open for writing, that the child joins
  // between its start and exec (process::ChildSpec::cgroup_procs_fd; one it
  // cannot join does not run the command, or what it starts could escape);
  // -1 without a cgroup. The child also leads a process group of its own
  // (ChildSpec::Leads::kProcessGroup), which Wait kills.
  int procs_fd() const { return procs_fd_; }

  // Waits for the command's first process `leader` (the forked child) to
  // exit, then, before reaping it (so that its process group id cannot be
  // taken by another process meanwhile), kills what it left running: SIGKILL
  // to its process group, and cgroup.kill of its cgroup, which is then
  // removed once empty (within a second). Logs how many processes the
  // cgroup still held. Returns the leader's exit status as a shell reports
  // it: 128 + the signal when killed, 127 when it cannot be told. Call once.
  int Wait(pid_t leader);

  bool has_cgroup() const { return procs_fd_ >= 0; }

 private:
  CommandGroup(std::string dir, int procs_fd) : dir_(std::move(dir)), procs_fd_(procs_fd) {}
  // Kills what `leader`'s command left; see Wait.
  void EndLeftovers(pid_t leader);

  std::string dir_;    // the command's cgroup; empty without one
  int procs_fd_ = -1;  // its cgroup.procs, open for writing
};

}  // namespace ballast::kernels
