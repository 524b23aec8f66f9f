#include "stop_signals.h"

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

}  // namespace

void BlockStopSignals() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_BLOCK, &set, nullptr);
}

void UnblockStopSignals() {
  const sigset_t set = StopSet();
  pthread_sigmask(SIG_UNBLOCK, &set, nullptr);
}

StopSignals::StopSignals() : set_(StopSet()) {
  pthread_sigmask(SIG_BLOCK, &set_, &old_mask_);
  waiter_ = std::thread([this] { Wait(); });
}

StopSignals::~StopSignals() {
  closing_ = true;
  // Wakes the waiter: a signal directed at that thread alone.
  pthread_kill(waiter_.native_handle(), SIGTERM);
  waiter_.join();
  pthread_sigmask(SIG_SETMASK, &old_mask_, nullptr);
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
