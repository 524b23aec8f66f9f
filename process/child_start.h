// StartChild: the one way Ballast's programs start another program — the
// worker's exec kernel the user's command (worker/kernels/exec_kernel.cc),
// `ballast run` each emulated node's worker (cli/run/worker_launch.h), the
// test bed a real Prometheus (testbed/real_prometheus.h).
//
// Between its start and exec a child of a threaded process may only make
// async-signal-safe calls, so everything it does there is said before, in a
// ChildSpec, and done in this order:
//   1. with a parent-death signal, it gets that signal when the thread that
//      started it ends, however this process ends; a parent that died before
//      the child could ask for it makes the child exit 127;
//   2. it leads a process group or a session of its own, when asked;
//   3. it joins the cgroups named (by an open cgroup.procs, then by paths);
//      one it cannot join makes it exit 127 (what it started would not be
//      contained);
//   4. with `share_memory` or `default_signals`, every signal this process
//      catches is set to its default (no handler of this process runs in
//      the child, least of all in its memory); with `default_signals` also
//      the usual stop signals and SIGPIPE, even when ignored;
//   5. it unblocks every signal;
//   6. its stdout and stderr go to `output` (stdout to this process's
//      stderr when none), its stdin is `input` when one is given, and
//      `reply` becomes its descriptor 3 when one is given; a failed dup2
//      makes it exit 127;
//   7. with `close_other_fds`, it closes every descriptor above stderr (and
//      above 3 with a `reply`);
//   8. it execs `file`, or exits 127.
//
// With `share_memory` the child shares this process's memory until it execs
// (clone with CLONE_VM | CLONE_VFORK, as posix_spawn does; the starting
// thread waits meanwhile): a fork would copy the page tables of a worker,
// its threads' stacks and heaps, and every page the worker writes after it
// would fault once to be copied or made writable again, which on a small
// board's CPU quota is a share of each range's time. Every signal is
// blocked across the clone, so none reaches a handler in the child before
// step 4. Under a sanitizer it is a plain fork (their interceptors must not
// run in a child sharing memory). Without `share_memory`, a fork.
//
// Thread-safety: StartChild and ResolveCommand may run on any thread; the
// spec's strings and arrays must live until StartChild returns.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

namespace ballast::process {

// The descriptor a child's `reply` becomes.
inline constexpr int kReplyFd = 3;

struct ChildSpec {
  const char* file = nullptr;   // the program's path (ResolveCommand finds one in PATH)
  char* const* argv = nullptr;  // null-terminated
  char* const* envp = nullptr;  // null-terminated
  int parent_death_signal = 0;  // 1.; 0: none
  enum class Leads { kNothing, kProcessGroup, kSession };
  Leads leads = Leads::kNothing;                    // 2.
  int cgroup_procs_fd = -1;                         // 3.: a cgroup.procs open for writing; -1: none
  const char* const* cgroup_procs_files = nullptr;  // 3.: null-terminated paths; null: none
  bool default_signals = false;                     // 4.
  int output = -1;                                  // 6.: a descriptor; -1: this process's stderr
  int input = -1;                                   // 6.: its stdin; -1: this process's stdin
  int reply = -1;                                   // 6.: its descriptor 3; -1: none
  bool close_other_fds = false;                     // 7.
  bool share_memory = false;                        // clone rather than fork
};

// Starts the child `spec` describes. Returns its pid, or -1 (errno set)
// when it could not be started; a child that starts but cannot exec exits
// 127.
pid_t StartChild(const ChildSpec& spec);

// The file `command` names, searched in PATH (/usr/local/bin:/usr/bin:/bin
// when unset) when it has no slash, as execvp does, but before the child
// starts: the search allocates. Empty when none is found; `command` itself
// when it has a slash.
std::string ResolveCommand(const std::string& command);

// `strings` as a null-terminated array of pointers into them (for argv and
// envp); valid while `strings` is unchanged.
std::vector<char*> PointersTo(std::vector<std::string>& strings);

}  // namespace ballast::process
