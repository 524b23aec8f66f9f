// Stopping ballast-worker's loop and its probe on SIGTERM and SIGINT.
//
// CatchStopSignals installs a handler for both (SA_RESTART, nothing else
// blocked while it runs). StopSignalThread serves them for its lifetime: the
// handler runs an async-signal-safe `in_handler` (flag the stop) and posts a
// semaphore; a thread of its own then runs `on_stop` (log, end commands,
// cancel a wait). Not sigwait: OpenBLAS, once the matmul kernel has opened
// it, runs threads of its own with the signals unblocked, so a signal blocked
// in our threads alone could still end the process there. The thread is
// joined when the object goes, before the process ends: a stop being served
// is not cut short, `on_stop` never runs after what it uses is gone, and
// nothing of it runs while the process ends.
//
// Thread-safety: one StopSignalThread per process at a time (the handler's
// state is the process's).
#pragma once

#include <atomic>
#include <functional>
#include <thread>

namespace ballast::worker {

void CatchStopSignals(void (*handler)(int));

class StopSignalThread {
 public:
  // `in_handler` (may be null) runs in the signal handler: async-signal-safe
  // calls only. `on_stop` runs on the object's thread, once per signal.
  StopSignalThread(void (*in_handler)(), std::function<void()> on_stop);
  StopSignalThread(const StopSignalThread&) = delete;
  StopSignalThread& operator=(const StopSignalThread&) = delete;
  ~StopSignalThread();

 private:
  void Serve();

  std::function<void()> on_stop_;
  std::atomic<bool> leaving_{false};
  std::thread thread_;
};

}  // namespace ballast::worker
