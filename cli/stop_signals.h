// StopSignals: SIGINT and SIGTERM noted by a thread of their own, for a
// command that stops cleanly (`ballast run`): while one is alive, the first
// such signal is noted (signal()) instead of ending the process, and the
// command winds down and exits with 128 + the signal, as shells report it. A
// second signal ends the process at once with that code. A SIGINT that the
// process was started ignoring (a script's background job) stays ignored.
//
// main() blocks both signals before any thread starts (so that cpprestsdk's
// pool threads never take them) and unblocks them in its own thread: a command
// without a StopSignals ends on them by their default action. The constructor
// blocks them again in the calling thread, and so in every thread started
// after it, and starts a thread that waits for them with sigwait: no work is
// done in a signal handler.
//
// Thread-safety: signal() may be called from any thread; construct and
// destroy on one thread, one at a time in a process, at the end of which the
// process exits.
#pragma once

#include <signal.h>

#include <atomic>
#include <thread>

namespace ballast::cli {

class StopSignals {
 public:
  StopSignals();
  // Stops the waiting thread. The signals stay blocked in the calling
  // thread: one that comes after the command has finished (and printed its
  // output, which a default action would cut off in stdio's buffer) is
  // dropped as the process exits.
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The first SIGINT or SIGTERM received, or 0 while none came.
  int signal() const { return signal_.load(); }

 private:
  void Wait();

  sigset_t set_;
  std::atomic<int> signal_{0};
  std::atomic<bool> closing_{false};
  std::thread waiter_;
};

// Blocks SIGINT and SIGTERM in the calling thread. main() calls it before any
// thread starts, then UnblockStopSignals once the threads it wants deaf to
// them (cpprestsdk's pool) exist.
void BlockStopSignals();
// Unblocks SIGINT and SIGTERM in the calling thread.
void UnblockStopSignals();

}  // namespace ballast::cli
