// `ballast run` ended by signals, as `timeout`, Ctrl-C and `kill -9` end it:
// the real binary, its real worker processes and cgroups. Nothing may be left
// behind, and a clean stop says what was done.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "cli/run/local_runner.h"
#include "cli/run/run_cleanup.h"
#include "core/job/job_spec.h"
#include "testbed/child_process.h"
#include "tests/support/run_groups.h"

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// A scratch directory per test, with a job file long enough (about a minute
// on the default cluster) to be stopped midway.
class RunSignalsTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ballast-signals-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
    std::ofstream(dir_ / "long.yaml") << "workload:\n  primes: {limit: 3000000}\n";
    std::ofstream(dir_ / "short.yaml") << "workload:\n  primes: {limit: 1000}\n";
  }
  void TearDown() override {
    if (pid_ > 0) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // Starts `ballast run JOB` with SIGINT and SIGTERM at their defaults, its
  // stdout and stderr into files of the scratch directory.
  pid_t Start(const std::string& job) {
    const std::string out = (dir_ / "out.txt").string();
    const std::string err = (dir_ / "err.txt").string();
    const std::string file = (dir_ / job).string();
    const pid_t pid = fork();
    if (pid == 0) {
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
      execl(BALLAST_BINARY, BALLAST_BINARY, "run", file.c_str(), nullptr);
      _exit(127);
    }
    return pid;
  }

  static int WaitExit(pid_t pid, std::chrono::seconds patience) {
    return testing::WaitExit(pid, patience);
  }

  std::string Read(const std::string& name) const {
    std::ifstream in(dir_ / name);
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path dir_;
  pid_t pid_ = 0;  // killed in TearDown when a failed assertion left it
};

// The running ballast-worker processes whose parent is `parent`.
std::set<pid_t> Workers(pid_t parent) {
  std::set<pid_t> workers;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator("/proc", error)) {
    const std::string name = entry.path().filename().string();
    if (name.find_first_not_of("0123456789") != std::string::npos) continue;
    std::ifstream stat(entry.path() / "stat");
    std::string pid, comm, state;
    pid_t ppid = 0;
    if (!(stat >> pid >> comm >> state >> ppid)) continue;
    if (ppid == parent && comm == "(ballast-worker)" && state != "Z")
      workers.insert(std::stoi(pid));
  }
  return workers;
}

// Waits until `parent` has `count` workers; returns them (fewer on timeout).
std::set<pid_t> WaitForWorkers(pid_t parent, size_t count) {
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  std::set<pid_t> workers;
  while ((workers = Workers(parent)).size() < count && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return workers;
}

using testing::GroupsOf;

// True when none of `pids` runs any more within five seconds.
bool AllEnd(const std::set<pid_t>& pids) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    bool any = false;
    for (pid_t pid : pids) any = any || ProcessRuns(pid);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

// Regression: `ballast run` killed with SIGKILL left its workers computing
// for 65-118 s and its three cgroups for good. The workers now die with it
// (their parent-death signal) and the next run removes the cgroups.
TEST_F(RunSignalsTest, SigkilledRunLeavesNoWorkersAndTheNextRunRemovesItsCgroups) {
  pid_ = Start("long.yaml");
  const std::set<pid_t> workers = WaitForWorkers(pid_, 3);
  ASSERT_EQ(workers.size(), 3u) << Read("err.txt");
  const std::set<std::string> groups = GroupsOf(pid_);  // empty where cgroups are not allowed
  std::printf("cgroups of the run: %zu\n", groups.size());
  kill(pid_, SIGKILL);
  waitpid(pid_, nullptr, 0);
  const pid_t killed = pid_;
  pid_ = 0;
  EXPECT_TRUE(AllEnd(workers));

  pid_ = Start("short.yaml");
  EXPECT_EQ(WaitExit(pid_, std::chrono::seconds(30)), 0) << Read("err.txt");
  pid_ = 0;
  EXPECT_TRUE(GroupsOf(killed).empty());
}

// Regression: SIGTERM (what `timeout` sends) had no handler and left the
// workers running; Ctrl-C failed the run without saying what was done. Both
// now stop the workers, remove the cgroups, print the items finished and the
// partial result, and exit with 128 + the signal, as shells report it.
TEST_F(RunSignalsTest, SigintAndSigtermStopTheJobCleanlyAndExitWith128PlusTheSignal) {
  for (const auto& [signal, name] : {std::pair{SIGTERM, "SIGTERM"}, std::pair{SIGINT, "SIGINT"}}) {
    pid_ = Start("long.yaml");
    const std::set<pid_t> workers = WaitForWorkers(pid_, 3);
    ASSERT_EQ(workers.size(), 3u) << Read("err.txt");
    std::this_thread::sleep_for(std::chrono::milliseconds(300));  // some items done
    kill(pid_, signal);
    EXPECT_EQ(WaitExit(pid_, std::chrono::seconds(20)), 128 + signal) << name << Read("err.txt");
    const pid_t stopped = pid_;
    pid_ = 0;
    const std::string out = Read("out.txt");
    EXPECT_NE(out.find(std::string("stopped by ") + name), std::string::npos) << out;
    EXPECT_NE(out.find("items finished"), std::string::npos) << out;
    EXPECT_NE(out.find("partial result"), std::string::npos) << out;
    EXPECT_TRUE(AllEnd(workers)) << name;
    EXPECT_TRUE(GroupsOf(stopped).empty()) << name;
  }
}

// Regression: an exec command outlived its worker killed with SIGKILL (and
// SIGINT and SIGTERM), and the restarted worker ran the same range beside it.
// The command and what it started now die with the worker.
TEST_F(RunSignalsTest, ExecCommandDiesWithItsKilledWorkerNotBesideItsReplacement) {
  job::JobSpec job;
  job.name = "exec-kill";
  job.workload.kind = workload::WorkloadKind::kExec;
  job.workload.items = 4;
  // The first attempt records its shell and a child of it, and waits; once
  // the worker is killed, the replacement's attempt succeeds at once.
  job.workload.exec.command = {"sh", "-c",
                               "[ -e \"$1/killed\" ] && exit 0\n"
                               "echo $$ >> \"$1/pids\"\n"
                               "sleep 30 &\n"
                               "echo $! >> \"$1/pids\"\n"
                               "wait\n",
                               "sh", dir_.string()};
  job.policy = {balance::AdaptiveOptions{}, ""};
  job.lease_seconds = 10;
  job.backoff_limit = 1;
  auto cluster = job::ParseCluster("nodes:\n  - {name: solo, speed: 1}\n", "cluster.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto profile = fuzzy::BuiltinProfile("raspberry-pi");
  ASSERT_TRUE(profile.ok());
  LocalRunOptions options{job, *cluster, *profile, BALLAST_WORKER_BINARY, true, "", nullptr};
  std::set<pid_t> command;
  options.on_progress = [&](const coordinator::JobView&, const std::map<std::string, pid_t>& pids) {
    if (!command.empty() || pids.count("solo") == 0) return true;
    std::ifstream in(dir_ / "pids");
    std::set<pid_t> seen;
    for (pid_t pid = 0; in >> pid;) seen.insert(pid);
    if (seen.size() < 2) return true;
    command = seen;
    std::ofstream(dir_ / "killed") << "";
    kill(pids.at("solo"), SIGKILL);
    return true;
  };
  auto outcome = RunLocal(options);
  ASSERT_TRUE(outcome.ok()) << outcome.status().ToString();
  ASSERT_EQ(command.size(), 2u);
  EXPECT_EQ(outcome->nodes[0].restarts, 1u);
  EXPECT_EQ(outcome->view.completed, 4u);
  EXPECT_TRUE(outcome->view.result.exec().failures.empty());
  EXPECT_TRUE(AllEnd(command));
}

}  // namespace
}  // namespace ballast::cli
