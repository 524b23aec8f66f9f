// What the end of a local run kills beyond its cgroups (cli/run/run_orphans.h):
// the decision over a process table, then the adapter with real processes —
// an orphan that started a session of its own is found because the run is
// its subreaper, and a child the caller had before is never touched. Neither
// needs root.
#include "cli/run/run_orphans.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <set>
#include <thread>
#include <vector>

#include "cli/run/run_cleanup.h"

namespace ballast::cli::run_orphans_test {
namespace {

using Table = std::vector<ProcessEntry>;

// The run is 100; 101 its worker (reaped by the time of the sweep, so not
// in the table), 102 its guard, 103 a child its caller had before.
constexpr pid_t kRun = 100;
const std::set<pid_t> kKept = {102, 103};

TEST(EscapedToKillTest, TakesTheRunsOrphansAndEverythingBelowThem) {
  const Table table = {
      {1, 0, 'S'},      {kRun, 1, 'S'},   {102, kRun, 'S'},
      {103, kRun, 'S'}, {200, kRun, 'S'},  // an orphan a command left (its shell exited)
      {201, 200, 'S'},  {202, 201, 'R'},   // what the orphan started, and below that
      {300, 1, 'S'},    {301, 300, 'S'},   // processes of someone else
  };
  EXPECT_EQ(EscapedToKill(table, kRun, kKept, {}), (std::vector<pid_t>{200, 201, 202}));
}

TEST(EscapedToKillTest, NeverTakesTheRunItsKeptChildrenTheirDescendantsOrAZombie) {
  const Table table = {
      {kRun, 1, 'S'},   {102, kRun, 'S'}, {103, kRun, 'S'}, {104, 103, 'S'},  // below a kept child
      {200, kRun, 'Z'},                                                       // exited, not reaped
      {201, kRun, 'S'}, {202, 201, 'Z'},
  };
  EXPECT_EQ(EscapedToKill(table, kRun, kKept, {kRun, 102}), (std::vector<pid_t>{201}));
}

TEST(EscapedToKillTest, TakesWhatIsListedInTheQuotaGroupsAndBelowItButNotWhatIsGone) {
  const Table table = {
      {kRun, 1, 'S'},
      {400, 1, 'S'},  // moved itself out of the run's v2 subtree; its parent has exited
      {401, 400, 'S'},
      {500, 1, 'S'},  // an unrelated process
  };
  // 402 was listed but has exited since.
  EXPECT_EQ(EscapedToKill(table, kRun, kKept, {400, 402}), (std::vector<pid_t>{400, 401}));
}

TEST(EscapedToKillTest, AProcessTableWithALoopEnds) {
  const Table table = {{kRun, 1, 'S'}, {200, kRun, 'S'}, {201, 202, 'S'}, {202, 201, 'S'}};
  EXPECT_EQ(EscapedToKill(table, kRun, kKept, {201}), (std::vector<pid_t>{200, 201, 202}));
}

// True when `pid` has stopped running within `patience`.
bool EndsWithin(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = std::chrono::steady_clock::now() + patience;
  while (ProcessRuns(pid)) {
    if (std::chrono::steady_clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A child that starts `sleep 30` in a session of its own and exits at once,
// as a command that leaves a daemon does. Returns the sleep's pid, read from
// a pipe.
pid_t LeaveAnOrphan() {
  int pipe_fds[2];
  if (pipe(pipe_fds) != 0) return -1;
  const pid_t parent = fork();
  if (parent == 0) {
    const pid_t left = fork();
    if (left == 0) {
      setsid();
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      execlp("sleep", "sleep", "30", nullptr);
      _exit(127);
    }
    (void)!write(pipe_fds[1], &left, sizeof(left));
    _exit(0);
  }
  close(pipe_fds[1]);
  pid_t left = -1;
  if (read(pipe_fds[0], &left, sizeof(left)) != static_cast<ssize_t>(sizeof(left))) left = -1;
  close(pipe_fds[0]);
  waitpid(parent, nullptr, 0);
  return left;
}

TEST(RunOrphansTest, KillsAnOrphanThatLeftItsSessionAndSparesTheCallersChild) {
  // The caller's own child, from before the run: never touched.
  const pid_t callers = fork();
  if (callers == 0) {
    execlp("sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  std::set<pid_t> reaped;
  {
    RunOrphans orphans;
    if (!orphans.adopting()) {
      kill(callers, SIGKILL);
      waitpid(callers, nullptr, 0);
      GTEST_SKIP() << "prctl(PR_SET_CHILD_SUBREAPER) is refused here";
    }
    const pid_t orphan = LeaveAnOrphan();
    ASSERT_GT(orphan, 0);
    // Its parent has exited: it is this process's child now, in no session of ours.
    bool adopted = false;
    for (int i = 0; i < 200 && !adopted; ++i) {
      for (const ProcessEntry& e : ReadProcessTable()) {
        if (e.pid == orphan) adopted = e.parent == getpid();
      }
      if (!adopted) std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    ASSERT_TRUE(adopted);

    const RunOrphans::Sweep sweep = orphans.KillEscaped({}, std::chrono::seconds(2));
    EXPECT_EQ(sweep.killed, 1u);
    EXPECT_EQ(sweep.remaining, 0u);
    EXPECT_TRUE(EndsWithin(orphan, std::chrono::seconds(5)));
    // Reaped: no zombie of the run is left.
    EXPECT_EQ(kill(orphan, 0), -1);
    EXPECT_TRUE(ProcessRuns(callers));
  }
  // The caller's child still runs, and is still the caller's to reap.
  EXPECT_TRUE(ProcessRuns(callers));
  kill(callers, SIGKILL);
  EXPECT_EQ(waitpid(callers, nullptr, 0), callers);
}

TEST(RunOrphansTest, ReapsExitedOrphansAndLeavesAWorkersExitForTheRunner) {
  RunOrphans orphans;
  if (!orphans.adopting()) GTEST_SKIP() << "prctl(PR_SET_CHILD_SUBREAPER) is refused here";
  const pid_t worker = fork();
  if (worker == 0) _exit(3);
  ASSERT_TRUE(EndsWithin(worker, std::chrono::seconds(5)));  // a zombie now
  EXPECT_EQ(orphans.ReapExited({worker}), 0u);
  int status = 0;
  ASSERT_EQ(waitpid(worker, &status, 0), worker);  // still the runner's to reap
  EXPECT_EQ(WEXITSTATUS(status), 3);

  const pid_t orphan = LeaveAnOrphan();
  ASSERT_GT(orphan, 0);
  kill(orphan, SIGKILL);
  ASSERT_TRUE(EndsWithin(orphan, std::chrono::seconds(5)));
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
  size_t reaped = 0;
  while (reaped == 0 && std::chrono::steady_clock::now() < deadline) {
    reaped = orphans.ReapExited({});
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  EXPECT_EQ(reaped, 1u);
  EXPECT_EQ(kill(orphan, 0), -1);  // gone, not a zombie
}

}  // namespace
}  // namespace ballast::cli::run_orphans_test
