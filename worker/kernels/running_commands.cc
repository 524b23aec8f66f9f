// The exec kernel's commands running in this process (running_commands.h),
// and StopExecCommands (kernel.h), which ends them.
#include "worker/kernels/running_commands.h"

#include <signal.h>

#include <chrono>
#include <mutex>
#include <set>
#include <thread>

#include "worker/kernels/kernel.h"

namespace ballast::kernels {
namespace {

// The process groups of the commands running.
struct RunningCommands {
  std::mutex mutex;
  std::set<pid_t> groups;
  bool stopping = false;
};

RunningCommands& Running() {
  static RunningCommands* running = new RunningCommands;  // outlives every thread
  return *running;
}

// Waits until no command runs, at most `patience`. Returns true when none
// does.
bool WaitForNoCommand(std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (true) {
    {
      std::lock_guard lock(Running().mutex);
      if (Running().groups.empty()) return true;
    }
    if (std::chrono::steady_clock::now() >= deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
}

}  // namespace

bool CommandsStopping() {
  std::lock_guard lock(Running().mutex);
  return Running().stopping;
}

void AddRunningCommand(pid_t group) {
  RunningCommands& running = Running();
  std::lock_guard lock(running.mutex);
  running.groups.insert(group);
  if (running.stopping) kill(-group, SIGTERM);  // a stop came while it started
}

bool RemoveRunningCommand(pid_t group) {
  RunningCommands& running = Running();
  std::lock_guard lock(running.mutex);
  running.groups.erase(group);
  return running.stopping;
}

void StopExecCommands(std::chrono::milliseconds grace) {
  RunningCommands& running = Running();
  {
    std::lock_guard lock(running.mutex);
    running.stopping = true;
    for (pid_t group : running.groups) kill(-group, SIGTERM);
  }
  if (WaitForNoCommand(grace)) return;
  {
    std::lock_guard lock(running.mutex);
    for (pid_t group : running.groups) kill(-group, SIGKILL);
  }
  WaitForNoCommand(std::chrono::seconds(1));
}

}  // namespace ballast::kernels
