// What a local run must not leave behind, piece by piece, with real
// processes and real cgroups: the owner in a group's name, the processes a
// dead worker's session left, and the groups of a run that died.
#include "cli/run/run_cleanup.h"

#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <fstream>
#include <thread>
#include <vector>

#include "cli/run/cpu_limit.h"
#include "cli/run/run_containment.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// True when `pid` has stopped running within `patience`.
bool EndsWithin(pid_t pid, std::chrono::milliseconds patience) {
  const auto deadline = Clock::now() + patience;
  while (ProcessRuns(pid)) {
    if (Clock::now() > deadline) return false;
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  }
  return true;
}

// A process id that is not in use: a child's, once it is reaped.
pid_t DeadPid() {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  waitpid(child, nullptr, 0);
  return child;
}

TEST(RunCleanupTest, GroupOwnerReadsOnlyNamesThatOwnedGroupNameMade) {
  EXPECT_EQ(GroupOwner(OwnedGroupName(4242, "primes-1b50de-pi4b-master")), 4242);
  EXPECT_EQ(GroupOwner(OwnedGroupName(1, "a")), 1);
  for (const char* other : {"primes-300000-1b50de-pi4b-master",  // a run of an older version
                            "run", "run-12-a", "run12", "run12a", "run0-a", "runx-a", "cpu.shares",
                            "run99999999999999999999-a"}) {
    EXPECT_EQ(GroupOwner(other), 0) << other;
  }
}

TEST(RunCleanupTest, ProcessRunsIsFalseForAZombieAndAReapedChild) {
  const pid_t child = fork();
  if (child == 0) _exit(0);
  // Not reaped yet: a zombie, which runs no more.
  ASSERT_TRUE(EndsWithin(child, std::chrono::seconds(5)));
  EXPECT_EQ(kill(child, 0), 0);  // the zombie still exists
  waitpid(child, nullptr, 0);
  EXPECT_FALSE(ProcessRuns(child));
  EXPECT_TRUE(ProcessRuns(getpid()));
}

// Regression: an exec command's children outlived their worker killed with
// SIGKILL and ran on beside the worker that replaced it.
TEST(RunCleanupTest, KillSessionKillsWhatADeadSessionLeaderLeft) {
  int pipe_fds[2];
  ASSERT_EQ(pipe(pipe_fds), 0);
  const pid_t leader = fork();
  if (leader == 0) {
    setsid();
    const pid_t left = fork();  // the process the leader leaves behind
    if (left == 0) {
      close(pipe_fds[0]);
      close(pipe_fds[1]);
      execlp("sleep", "sleep", "30", nullptr);
      _exit(127);
    }
    (void)!write(pipe_fds[1], &left, sizeof(left));
    pause();
    _exit(0);
  }
  close(pipe_fds[1]);
  pid_t left = 0;
  ASSERT_EQ(read(pipe_fds[0], &left, sizeof(left)), static_cast<ssize_t>(sizeof(left)));
  close(pipe_fds[0]);
  kill(leader, SIGKILL);
  waitpid(leader, nullptr, 0);
  ASSERT_TRUE(ProcessRuns(left));

  EXPECT_EQ(KillSession(leader), 1);
  EXPECT_TRUE(EndsWithin(left, std::chrono::seconds(5)));
  EXPECT_EQ(KillSession(leader), 0);  // nothing left
}

// Regression: `ballast run` killed with SIGKILL left its three cgroups for
// good. The next run removes the groups whose owner is gone (and kills what
// is still in them) and never a live run's.
TEST(RunCleanupTest, RemoveStaleGroupsRemovesADeadRunsGroupAndKeepsALiveRuns) {
  const pid_t dead = DeadPid();
  auto stale = CpuLimit::Create(OwnedGroupName(dead, "cleanup-test"), 0.5);
  if (!stale.ok()) GTEST_SKIP() << "no cgroup here: " << stale.status().message();
  auto live = CpuLimit::Create(OwnedGroupName(getpid(), "cleanup-test"), 0.5);
  ASSERT_TRUE(live.ok()) << live.status().message();
  // A process the dead run left in its group.
  const pid_t orphan = fork();
  if (orphan == 0) {
    execlp("sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  std::ofstream((*stale)->procs_file()) << orphan;
  const fs::path stale_dir = fs::path((*stale)->procs_file()).parent_path();
  const fs::path live_dir = fs::path((*live)->procs_file()).parent_path();

  const std::vector<std::string> removed = RemoveStaleGroups(RunGroupParents());
  int status = 0;
  waitpid(orphan, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  // (A run started meanwhile by a test running beside this one may have
  // removed the stale group first; it must never remove the live one.)
  EXPECT_EQ(std::find(removed.begin(), removed.end(), live_dir.string()), removed.end());
  EXPECT_FALSE(fs::exists(stale_dir));
  EXPECT_TRUE(fs::exists(live_dir));
  live->reset();
  EXPECT_FALSE(fs::exists(live_dir));
}

// A run whose guard was killed with it leaves its cgroup v2 subtree: the
// next run kills what is in it, in any of its groups, and removes them all.
TEST(RunCleanupTest, RemoveStaleGroupsRemovesADeadRunsWholeSubtreeAsRoot) {
  const pid_t dead = DeadPid();
  auto run = RunContainment::Create(OwnedGroupName(dead, "cleanup-subtree"));
  if (!run.ok()) GTEST_SKIP() << "no cgroups here: " << run.status().message();
  auto node = (*run)->AddNode("node");
  ASSERT_TRUE(node.ok());
  const fs::path command = fs::path(*node) / "cmd-1-0";
  fs::create_directory(command);
  const pid_t orphan = fork();
  if (orphan == 0) {
    setsid();
    execlp("sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  std::ofstream(command / "cgroup.procs") << orphan;
  const std::string dir = (*run)->dir();
  run->release();  // as a killed run leaves it

  RemoveStaleGroups(RunGroupParents());
  int status = 0;
  waitpid(orphan, &status, 0);
  EXPECT_TRUE(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
  EXPECT_FALSE(fs::exists(dir));
}

// Regression (issue 46): a run's end said nothing of the groups it could
// not remove. RemoveGroups names each, deepest first, with why.
TEST(RunCleanupTest, RemoveGroupsNamesEachGroupThatStaysAndWhyAsRoot) {
  auto run = RunContainment::Create(OwnedGroupName(getpid(), "cleanup-left"));
  if (!run.ok()) GTEST_SKIP() << "no cgroups here: " << run.status().message();
  auto node = (*run)->AddNode("node");
  ASSERT_TRUE(node.ok());
  const pid_t held = fork();
  if (held == 0) {
    execlp("sleep", "sleep", "30", nullptr);
    _exit(127);
  }
  std::ofstream(fs::path(*node) / "cgroup.procs") << held;

  const std::vector<LeftGroup> left = RemoveGroups((*run)->dir());
  ASSERT_EQ(left.size(), 2u);
  EXPECT_EQ(left[0].dir, *node);
  EXPECT_EQ(left[0].why, "1 process remains in it");
  EXPECT_EQ(left[1].dir, (*run)->dir());
  EXPECT_EQ(left[1].why, "a cgroup below it remains");

  kill(held, SIGKILL);
  waitpid(held, nullptr, 0);
  ASSERT_TRUE(WaitGroupEmpty(*node + "/cgroup.procs", std::chrono::seconds(5)));
  EXPECT_TRUE(RemoveGroups((*run)->dir()).empty());
  EXPECT_FALSE(fs::exists((*run)->dir()));
}

}  // namespace
}  // namespace ballast::cli
