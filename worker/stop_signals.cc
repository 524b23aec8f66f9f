#include "worker/stop_signals.h"

#include <semaphore.h>
#include <signal.h>

namespace ballast::worker {
namespace {

// The handler's state: set before it is installed, read only by it.
sem_t g_stop;
void (*g_in_handler)() = nullptr;

void OnStopSignal(int) {
  if (g_in_handler != nullptr) g_in_handler();
  sem_post(&g_stop);  // async-signal-safe
}

}  // namespace

void CatchStopSignals(void (*handler)(int)) {
  struct sigaction action {};
  action.sa_handler = handler;
  sigemptyset(&action.sa_mask);
  action.sa_flags = SA_RESTART;
  sigaction(SIGTERM, &action, nullptr);
  sigaction(SIGINT, &action, nullptr);
}

StopSignalThread::StopSignalThread(void (*in_handler)(), std::function<void()> on_stop)
    : on_stop_(std::move(on_stop)) {
  sem_init(&g_stop, 0, 0);
  g_in_handler = in_handler;
  thread_ = std::thread([this] { Serve(); });
  CatchStopSignals(OnStopSignal);
}

StopSignalThread::~StopSignalThread() {
  leaving_ = true;
  sem_post(&g_stop);
  thread_.join();
}

void StopSignalThread::Serve() {
  while (true) {
    if (sem_wait(&g_stop) != 0) continue;  // EINTR
    if (leaving_) return;
    on_stop_();
  }
}

}  // namespace ballast::worker
