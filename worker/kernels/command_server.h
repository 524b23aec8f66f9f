// CommandServer: one long-lived process of an exec command that serves runs
// (`exec.serve: true`, docs/workloads.md), so that a command whose start is
// dear (an interpreter and its libraries: pytest's start is 0.2 CPU s on a
// Pi 4B) pays it once per worker thread rather than once per run.
//
// The contract. The command starts with the worker's environment plus
// BALLAST_REPLY_FD=3, and nothing of a run. For each run the worker writes
// one line to its stdin: a JSON object of the run's variables, each a
// string, as a command run once per range gets them in its environment
// ({"BALLAST_START": "10", "BALLAST_END": "24", "BALLAST_ITEMS_FILE": …}).
// The command does the run and writes the run's exit code, a decimal number
// 0-255 and a newline, to descriptor 3; then it reads the next line. At the
// end of its input (the worker is done with it) it exits. Its stdout and
// stderr go to the worker's log as a run's do (OutputTail), and a failed
// run's record keeps what it wrote since the run's line.
//
// A command that ends without answering, answers what is not an exit code,
// or answers more than one line at once, fails that run (its exit status,
// or 1) and is ended; the next run starts another. One that answered late
// past a run's answer, or ended between runs, is ended and replaced before
// the next run (Ready). StopExecCommands ends a
// command serving a run like any run's (running_commands.h); an idle one
// is not running anything and ends with its server.
//
// The command lives in a CommandGroup of its own for its whole life and
// gets SIGKILL when its launcher's thread ends (ServerLauncher: a step's
// thread ends with the step, so servers are started on one that lasts as
// long as the kernel). Its CPU counts toward this process's children's
// (ChildrenCpuSeconds) while it lives, not only once reaped.
//
// Thread-safety: one run at a time per server; servers may serve at once.
#pragma once

#include <sys/types.h>

#include <condition_variable>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <utility>
#include <vector>

#include "worker/kernels/command_group.h"
#include "worker/kernels/output_tail.h"

namespace ballast::kernels {

// The user and system CPU seconds getrusage reports for `who`
// (RUSAGE_SELF, RUSAGE_CHILDREN).
double RusageSeconds(int who);

// The CPU seconds of this process's children: those reaped
// (RUSAGE_CHILDREN) and the serving commands still alive, read together so
// that a server reaped meanwhile is counted once.
double ChildrenCpuSeconds();

// The exit code a served command's answer line says (without its newline):
// "0" to "255", spaces around and a CR allowed; -1 for anything else.
int ReplyExitCode(std::string_view line);

// A thread that lasts as long as its owner and starts children for other
// threads, so that their parent-death signal ties them to the owner's life
// rather than to a short-lived thread's.
class ServerLauncher {
 public:
  ServerLauncher();
  ~ServerLauncher();
  ServerLauncher(const ServerLauncher&) = delete;
  ServerLauncher& operator=(const ServerLauncher&) = delete;

  // Runs `start` on the launcher's thread and returns what it returned.
  pid_t Run(std::function<pid_t()> start);

 private:
  void Loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::packaged_task<pid_t()>> tasks_;
  bool ending_ = false;
  std::thread thread_;
};

class CommandServer {
 public:
  // What Serve returns for a run ended by StopExecCommands.
  static constexpr int kStopped = -1;

  // Starts `file` with `argv` (null-terminated, argv[0] the command's word)
  // and `env` (the inherited environment; BALLAST_REPLY_FD is added) on
  // `launcher`'s thread. Null, with `why` said, when it cannot start.
  static std::unique_ptr<CommandServer> Start(const std::string& file,
                                              std::vector<std::string> words,
                                              std::vector<std::string> env, LogBudget* budget,
                                              ServerLauncher& launcher, std::string* why);
  // Closes its input, gives it a moment to exit, then ends its group.
  ~CommandServer();
  CommandServer(const CommandServer&) = delete;
  CommandServer& operator=(const CommandServer&) = delete;

  // One run: `request` (one line of JSON, without its newline) out, the
  // exit code back, with what the command wrote meanwhile (its end).
  // kStopped when StopExecCommands ended it. After a run that ended the
  // command (see above), alive() is false.
  std::pair<int, std::string> Serve(const std::string& request);
  bool alive() const { return leader_ > 0; }
  // Before a run: true when it is alive and said nothing since its last
  // answer; else it is ended (an answer a run did not ask for, or an exit
  // between runs, means it is out of step with its runs) and false.
  bool Ready();

 private:
  CommandServer(CommandGroup group, LogBudget* budget)
      : group_(std::move(group)), output_(budget) {}
  // Ends the command (SIGKILL to its group) and reaps it; its exit status.
  int End();
  // The reply line (without its newline), or none when the command closed
  // descriptor 3 or ended.
  std::optional<std::string> ReadReply();

  CommandGroup group_;
  OutputTail output_;
  pid_t leader_ = -1;
  int input_fd_ = -1;  // the command's stdin, our end
  int reply_fd_ = -1;  // its descriptor 3, our end
};

}  // namespace ballast::kernels
