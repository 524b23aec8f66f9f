#include "cli/stop_signals.h"

#include <pthread.h>
#include <unistd.h>

namespace ballast::cli {
namespace {

sigset_t StopSet() {
  sigset_t set;
  sigemptyset(&set);
  sigaddset(&set, SIGINT);
  sigaddset(&set, SIGTERM);
  return set;
}

// SIGTERM, and SIGINT unless this process was started ignoring it (a shell
// ignores SIGINT for the background jobs of a script): it then stays ignored,
// as programs conventionally leave it. (Blocked, an ignored signal would be
// queued for sigwait all the same.)
sigset_t HeededSet() {
  sigset_t set = StopSet();
  struct sigaction current {};
  if (sigaction(SIGINT, nullptr, &current) == 0 && current.sa_handler == SIG_IGN) {
    sigdelset(&set, SIGINT);
  }
  return set;
}

}  // namespace

void BlockStopSignals() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void UnblockStopSignals() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

StopSignals::StopSignals() : set_(HeededSet()) {
  pthread_sigmask(SIG_BLOCK, &set_, nullptr);
  waiter_ = std::thread([this] { Wait(); });
}

StopSignals::~StopSignals() {
  closing_ = true;
  // Wakes the waiter: a signal directed at that thread alone.
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
}

void StopSignals::Wait() {
  while (true) {
    int received = 0;
    if (sigwait(&set_, &received) != 0) continue;
    if (closing_) return;
    int none = 0;
    if (!signal_.compare_exchange_strong(none, received)) {
      // The second signal: the user does not want to wait for the wind-down.
      // The workers still die with this process (their parent-death signal).
      _exit(128 + received);
    }
  }
}

}  // namespace ballast::cli
