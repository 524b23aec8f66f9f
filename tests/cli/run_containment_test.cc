// Whatever an exec command starts dies with `ballast run` (issue 30): a job
// whose command starts `setsid sleep 300 &` and `sleep 300 &`, run by the real
// binary with its real workers, cgroups and guard, ended by a normal finish,
// by SIGTERM and by SIGKILL. Afterwards no process carrying the test's marker
// runs and no cgroup of the run remains, and the printout says so; without
// cgroups it says what it cannot know. A command run as root may move itself
// out of the run's cgroups (issue 46): what it leaves is killed all the same,
// the run does not stall at its end, and the printout says what escaped. The
// cgroup tests need root and cgroup v2 with cgroup.kill (names ending in
// AsRoot, label root) and skip, saying so, elsewhere.
#include "cli/run/run_containment.h"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cgroup/cgroup_tree.h"
#include "cli/run/run_cleanup.h"
#include "testbed/child_process.h"
#include "tests/support/marked_processes.h"
#include "tests/support/run_groups.h"

namespace ballast::cli::run_containment_test {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;
using std::chrono::seconds;

// A node with a CPU quota and one of a whole core, which has none.
constexpr char kCluster[] = "nodes:\n  - {name: quota, speed: 0.5}\n  - {name: whole, speed: 1}\n";

// Why this machine cannot contain a run in cgroups; empty when it can.
std::string WhyNoCgroups() {
  if (geteuid() != 0) return "needs root";
  auto probe = RunContainment::Create("containment-probe-" + std::to_string(getpid()));
  return probe.ok() ? "" : probe.status().message();
}

using testing::GroupsOf;

// The start of a command's script (sh, the marked sleep as $0): a marked
// sleep in a session of its own, waited for until it is in it (its session
// is its pid), so that the end of the command's process group, when the
// command exits, cannot catch it before it got there (then nothing would be
// left to find).
constexpr char kOwnSession[] =
    "setsid \"$0\" 300 & p=$!; "
    "until [ ! -e /proc/$p ] || [ \"$(cut -d\" \" -f6 /proc/$p/stat)\" = \"$p\" ]; do :; done; ";

// Three nodes, each with a CPU quota: on cgroup v1 each quota is a group of
// its own, outside the run's cgroup v2 subtree.
constexpr char kQuotaCluster[] =
    "nodes:\n  - {name: a, speed: 0.3}\n  - {name: b, speed: 0.3}\n  - {name: c, speed: 0.3}\n";

// The cgroup.procs of the root of cgroup v2: where a command moves itself to
// leave the run's subtree.
std::string V2RootProcs() { return cgroup::V2Mount() + "/cgroup.procs"; }

// The cgroup.procs of the root of cgroup v1's cpu hierarchy, where the run's
// CPU quotas are; empty where there is none (cgroup v2 alone).
std::string V1CpuRootProcs() {
  const std::string procs = "/sys/fs/cgroup/cpu/cgroup.procs";
  return fs::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us") ? procs : "";
}

class RunContainmentTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("ballast-contain-" + std::to_string(getpid()) + "-" + name);
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    marker_ = testing::ProcessMarker(name);
    sleep_ = testing::MarkedSleep(dir_, marker_);
    std::ofstream(dir_ / "cluster.yaml") << kCluster;
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    testing::KillMarked(marker_);
    fs::remove_all(dir_);
  }

  // Writes an exec job of `items` whose command starts a marked sleep in a
  // session of its own and one in the background, then runs `tail` (shell).
  void WriteJob(int items, const std::string& tail) {
    std::ofstream(dir_ / "job.yaml")
        << "items: " << items << "\n"
        << "workload:\n  exec:\n    retries: 0\n    command:\n      - sh\n      - -c\n"
        << "      - '" << kOwnSession << "\"$0\" 300 & " << tail << "'\n"
        << "      - " << sleep_ << "\n";
  }

  // Starts `ballast run` on the job with `flags`, its stdout and stderr
  // into files of the scratch directory, SIGINT and SIGTERM at their defaults.
  void Start(const std::vector<std::string>& flags = {}) {
    const std::string out = (dir_ / "out.txt").string();
    const std::string err = (dir_ / "err.txt").string();
    std::vector<std::string> args = {BALLAST_BINARY, "run", (dir_ / "job.yaml").string(),
                                     "--cluster", (dir_ / "cluster.yaml").string()};
    args.insert(args.end(), flags.begin(), flags.end());
    std::vector<char*> argv;
    for (auto& arg : args) argv.push_back(arg.data());
    argv.push_back(nullptr);
    pid_ = fork();
    if (pid_ == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      sigset_t none;
      sigemptyset(&none);
      sigprocmask(SIG_SETMASK, &none, nullptr);
      const int out_fd = open(out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      const int err_fd = open(err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
      dup2(out_fd, STDOUT_FILENO);
      dup2(err_fd, STDERR_FILENO);
      close_range(3, ~0U, 0);
      execv(argv[0], argv.data());
      _exit(127);
    }
  }

  // Waits for the run's exit; returns its code (and forgets the pid).
  int Exit(seconds patience) {
    const int code = testing::WaitExit(pid_, patience);
    pid_ = 0;
    return code;
  }

  // Writes an exec job of `items` whose command first moves itself into
  // each cgroup whose cgroup.procs `leave_to` names (it runs as root), then
  // starts a marked sleep in a session of its own and one in the
  // background, then runs `tail`; and a cluster of three nodes with CPU
  // quotas.
  void WriteEscapingJob(int items, const std::vector<std::string>& leave_to,
                        const std::string& tail) {
    std::string moves;
    for (const std::string& procs : leave_to) moves += "echo $$ > " + procs + " || exit 99; ";
    std::ofstream(dir_ / "job.yaml")
        << "items: " << items << "\n"
        << "workload:\n  exec:\n    retries: 0\n    command:\n      - sh\n      - -c\n"
        << "      - '" << moves << kOwnSession << "\"$0\" 300 & " << tail << "'\n"
        << "      - " << sleep_ << "\n";
    std::ofstream(dir_ / "cluster.yaml") << kQuotaCluster;
  }

  // The "processes" object of the run's JSON output (-o json).
  nlohmann::json Processes() const {
    const nlohmann::json out = nlohmann::json::parse(Read("out.txt"), nullptr, false);
    return out.is_object() && out.contains("processes") ? out["processes"] : nlohmann::json();
  }

  std::string Read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path dir_;
  std::string marker_;
  std::string sleep_;
  pid_t pid_ = 0;
};

// Regression: a normal finish left over 200 such processes and the run's
// cgroups behind, and said nothing.
TEST_F(RunContainmentTest, NothingACommandStartedOutlivesANormalFinishAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  WriteJob(40, "exit 0");
  Start();
  const pid_t run = pid_;
  ASSERT_EQ(Exit(seconds(60)), 0) << Read("err.txt") << Read("out.txt");
  const std::string out = Read("out.txt");
  EXPECT_NE(out.find("result: 40 items succeeded, 0 failed"), std::string::npos) << out;
  EXPECT_NE(out.find("none remain, and its cgroups are removed"), std::string::npos) << out;
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
  EXPECT_TRUE(GroupsOf(run).empty());
}

// Regression: SIGTERM printed that everything was stopped while 156 such
// processes remained.
TEST_F(RunContainmentTest, NothingACommandStartedOutlivesSigtermAndThePrintoutSaysSoAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  WriteJob(4, "wait");
  Start();
  const pid_t run = pid_;
  // A command runs, with its two sleeps (and its shell).
  ASSERT_GE(testing::WaitForMarked(marker_, 3, milliseconds(20000)), 3u) << Read("err.txt");
  kill(pid_, SIGTERM);
  ASSERT_EQ(Exit(seconds(30)), 128 + SIGTERM) << Read("err.txt");
  const std::string out = Read("out.txt");
  EXPECT_NE(out.find("stopped by SIGTERM"), std::string::npos) << out;
  EXPECT_NE(out.find("none remain, and its cgroups are removed"), std::string::npos) << out;
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
  EXPECT_TRUE(GroupsOf(run).empty());
}

// Regression: after SIGKILL of `ballast run` even plain background children
// survived until the next run. The run's guard kills them all, and removes
// the cgroups, with no next run.
TEST_F(RunContainmentTest, NothingACommandStartedOutlivesSigkillOfTheRunAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  WriteJob(4, "wait");
  Start();
  const pid_t run = pid_;
  ASSERT_GE(testing::WaitForMarked(marker_, 3, milliseconds(20000)), 3u) << Read("err.txt");
  ASSERT_FALSE(GroupsOf(run).empty());
  const auto killed_at = std::chrono::steady_clock::now();
  kill(pid_, SIGKILL);
  Exit(seconds(5));
  EXPECT_EQ(testing::WaitNoneMarked(marker_, milliseconds(5000)), 0u);
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (!GroupsOf(run).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(GroupsOf(run).empty());
  std::printf("everything gone %.2f s after SIGKILL\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - killed_at).count());
}

// Regression (issue 46): a command run as root that moved itself out of the
// run's cgroup v2 subtree, leaving sleeps behind, made `ballast run` stall
// 25-48 s at its end (its guard waited 10 s for each CPU-quota group that
// still held them) and then print `clean: true, remaining: 0` while the
// sleeps and three quota groups remained. Now they are killed in the quota
// groups, at once, and the printout says they had escaped.
TEST_F(RunContainmentTest, ACommandThatLeavesTheRunsCgroupIsKilledAndTheRunDoesNotStallAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  WriteEscapingJob(6, {V2RootProcs()}, "exit 0");
  const auto started = std::chrono::steady_clock::now();
  Start({"-o", "json"});
  const pid_t run = pid_;
  // A run of six trivial items ends within a second or two; the stall was
  // ten seconds for each quota group. 20 s tells one from the other.
  ASSERT_EQ(Exit(seconds(20)), 0) << Read("err.txt") << Read("out.txt");
  std::printf("the run took %.2f s\n",
              std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count());
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
  EXPECT_TRUE(GroupsOf(run).empty());
  const nlohmann::json processes = Processes();
  ASSERT_TRUE(processes.is_object()) << Read("out.txt");
  EXPECT_GE(processes.value("escaped", 0), 1) << processes.dump();
  EXPECT_EQ(processes.value("remaining", -1), 0) << processes.dump();
  EXPECT_EQ(processes.value("cgroups_left", -1), 0) << processes.dump();
  EXPECT_TRUE(processes.value("clean", false)) << processes.dump();
}

// Regression (issue 46): a command run as root that moved itself out of
// every cgroup of the run (the v2 subtree and, where cgroup v1 holds the
// quotas, its quota group) left its sleeps running after a run that printed
// `clean: true`. The run is their subreaper: they are its orphans, found and
// killed at its end.
TEST_F(RunContainmentTest, ACommandThatLeavesEveryCgroupIsFoundAsTheRunsOrphanAndKilledAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  std::vector<std::string> leave_to = {V2RootProcs()};
  if (const std::string v1 = V1CpuRootProcs(); !v1.empty()) leave_to.push_back(v1);
  WriteEscapingJob(6, leave_to, "exit 0");
  Start({"-o", "json"});
  const pid_t run = pid_;
  ASSERT_EQ(Exit(seconds(20)), 0) << Read("err.txt") << Read("out.txt");
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
  EXPECT_TRUE(GroupsOf(run).empty());
  const nlohmann::json processes = Processes();
  ASSERT_TRUE(processes.is_object()) << Read("out.txt");
  EXPECT_GE(processes.value("escaped", 0), 1) << processes.dump();
  EXPECT_EQ(processes.value("remaining", -1), 0) << processes.dump();
  EXPECT_TRUE(processes.value("clean", false)) << processes.dump();
}

// Regression (issue 46): after SIGKILL of a run whose commands had moved
// themselves out of its cgroup v2 subtree, the guard waited 10 s for each
// CPU-quota group that still held them, and left them running. It kills
// what is in those groups (cgroup v1 has no cgroup.kill) and removes them.
TEST_F(RunContainmentTest, WhatLeftTheRunsSubtreeDiesInItsQuotaGroupsAfterSigkillAsRoot) {
  if (const std::string why = WhyNoCgroups(); !why.empty()) GTEST_SKIP() << why;
  if (V1CpuRootProcs().empty()) {
    GTEST_SKIP() << "the CPU quotas are in the run's cgroup v2 subtree here (no cgroup v1 cpu "
                    "hierarchy): there are no groups of their own to hold what leaves it";
  }
  WriteEscapingJob(3, {V2RootProcs()}, "wait");
  Start();
  const pid_t run = pid_;
  ASSERT_GE(testing::WaitForMarked(marker_, 2, milliseconds(20000)), 2u) << Read("err.txt");
  kill(pid_, SIGKILL);
  Exit(seconds(5));
  EXPECT_EQ(testing::WaitNoneMarked(marker_, milliseconds(5000)), 0u);
  const auto deadline = std::chrono::steady_clock::now() + seconds(5);
  while (!GroupsOf(run).empty() && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(milliseconds(10));
  }
  EXPECT_TRUE(GroupsOf(run).empty());
}

// Without cgroups the run cannot know what left its sessions, and must not
// claim it stopped everything. What a command started in a session of its
// own outlives the command, but not the run: the run is its subreaper, and
// kills it as its orphan at its end.
TEST_F(RunContainmentTest, WithoutCgroupsThePrintoutDoesNotClaimEverythingStopped) {
  WriteJob(4, "exit 0");
  Start({"--no-cgroups"});
  ASSERT_EQ(Exit(seconds(60)), 0) << Read("err.txt");
  const std::string out = Read("out.txt");
  EXPECT_EQ(out.find("none remain"), std::string::npos) << out;
  EXPECT_NE(out.find("had left its workers' sessions and "), std::string::npos) << out;
  EXPECT_NE(out.find(" found (as the run's orphans, or in its CPU-quota groups) and killed"),
            std::string::npos)
      << out;
  EXPECT_NE(out.find("a process that started a session of its own runs on until the run ends, "
                     "and one handed to a process outside the run cannot be found, and may still "
                     "run"),
            std::string::npos)
      << out;
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
}

}  // namespace
}  // namespace ballast::cli::run_containment_test
