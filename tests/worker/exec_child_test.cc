// An exec workload's command dies with its worker: ballast-worker as a
// process against a real coordinator, stopped with SIGTERM or SIGINT, or
// killed with SIGKILL, while its command runs, whether the command runs once
// per range or serves the worker's runs (exec.serve).
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "coordinator/server.h"

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;
using Clock = std::chrono::steady_clock;

// True while `pid` exists and is not a zombie.
bool Runs(pid_t pid) {
  std::ifstream stat("/proc/" + std::to_string(pid) + "/stat");
  std::string line;
  if (!std::getline(stat, line)) return false;
  const size_t close = line.rfind(')');
  return close != std::string::npos && close + 2 < line.size() && line[close + 2] != 'Z';
}

// True when none of `pids` runs any more within five seconds.
bool AllEnd(const std::set<pid_t>& pids) {
  const auto deadline = Clock::now() + std::chrono::seconds(5);
  while (Clock::now() < deadline) {
    bool any = false;
    for (pid_t pid : pids) any = any || Runs(pid);
    if (!any) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return false;
}

class ExecChildTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = fs::temp_directory_path() /
           ("ballast-exec-child-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(dir_);
    fs::create_directories(dir_);
  }
  void TearDown() override {
    if (worker_ > 0) {
      kill(worker_, SIGKILL);
      waitpid(worker_, nullptr, 0);
    }
    fs::remove_all(dir_);
  }

  // A job of 4 items whose command runs `script` (with the scratch
  // directory as $1), served when `serve`, for one worker "w0".
  coordinator::JobConfig Job(const std::string& script, bool serve = false) const {
    coordinator::JobConfig config;
    config.id = "exec-child-job";
    config.token = "right-token";
    config.workload.kind = workload::WorkloadKind::kExec;
    config.workload.items = 4;
    config.workload.exec.command = {"sh", "-c", script, "sh", dir_.string()};
    config.workload.exec.retries = 0;
    config.workload.exec.serve = serve;
    config.policy = {balance::WeightedOptions{}, ""};
    config.workers = {{"w0", 1.0}};
    return config;
  }

  // Starts ballast-worker for the job with signals at their defaults.
  void StartWorker(const std::string& url) {
    const std::string log = (dir_ / "worker.log").string();
    worker_ = fork();
    if (worker_ == 0) {
      signal(SIGINT, SIG_DFL);
      signal(SIGTERM, SIG_DFL);
      freopen(log.c_str(), "w", stderr);
      freopen(log.c_str(), "a", stdout);
      close_range(3, ~0U, 0);
      execl(BALLAST_WORKER_BINARY, BALLAST_WORKER_BINARY, "--coordinator", url.c_str(), "--job",
            "exec-child-job", "--name", "w0", "--token", "right-token", "--threads", "1", nullptr);
      _exit(127);
    }
  }

  // The pids the command wrote to $1/pids, once there are `count` of them
  // (fewer after 20 s).
  std::set<pid_t> WaitForPids(size_t count) const {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    std::set<pid_t> pids;
    while (Clock::now() < deadline) {
      std::ifstream in(dir_ / "pids");
      pids.clear();
      for (pid_t pid = 0; in >> pid;) pids.insert(pid);
      if (pids.size() >= count) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return pids;
  }

  // The worker's exit code as a shell reports it; -1 (and SIGKILL) when it
  // has not ended within 20 s.
  int WaitWorker() {
    const auto deadline = Clock::now() + std::chrono::seconds(20);
    while (Clock::now() < deadline) {
      int status = 0;
      if (waitpid(worker_, &status, WNOHANG) == worker_) {
        worker_ = 0;
        return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    return -1;
  }

  std::string Log() const {
    std::ifstream in(dir_ / "worker.log");
    return std::string((std::istreambuf_iterator<char>(in)), {});
  }

  fs::path dir_;
  pid_t worker_ = 0;
};

// The command: its shell and a child of the shell record their pids and wait.
constexpr char kWaitingCommand[] =
    "echo $$ >> \"$1/pids\"\nsleep 30 &\necho $! >> \"$1/pids\"\nwait\n";

// Regression: an exec command outlived SIGINT and SIGTERM of its worker. Now
// the worker ends the command's process group and hands the range back: the
// items are neither finished nor recorded as failed.
TEST_F(ExecChildTest, StoppedWorkerEndsItsCommandAndWhatItStartedAndHandsTheRangeBack) {
  for (const bool serve : {false, true}) {
    for (int signal : {SIGTERM, SIGINT}) {
      SCOPED_TRACE(std::string(strsignal(signal)) + (serve ? ", served" : ""));
      fs::remove(dir_ / "pids");
      auto server = coordinator::Server::Start({});
      ASSERT_TRUE(server.ok());
      ASSERT_TRUE((*server)->AddJob(Job(kWaitingCommand, serve)).ok());
      StartWorker((*server)->url());
      const std::set<pid_t> command = WaitForPids(2);
      ASSERT_EQ(command.size(), 2u) << Log();
      kill(worker_, signal);
      EXPECT_EQ(WaitWorker(), 0) << Log();
      EXPECT_TRUE(AllEnd(command));
      const auto view = (*server)->View("exec-child-job");
      EXPECT_EQ(view->completed, 0u);
      EXPECT_TRUE(view->result.exec().failures.empty());
      EXPECT_NE(Log().find("stopped on request"), std::string::npos) << Log();
    }
  }
}

// Regression: an exec command outlived its worker killed with SIGKILL. Its
// parent-death signal now takes it along. (What the command itself started
// is in the command's process group and the worker's session: `ballast run`
// kills that session, a pod's container takes it along.)
TEST_F(ExecChildTest, CommandDiesWithItsWorkerKilledWithSigkill) {
  for (const bool serve : {false, true}) {
    SCOPED_TRACE(serve ? "served" : "once per range");
    fs::remove(dir_ / "pids");
    auto server = coordinator::Server::Start({});
    ASSERT_TRUE(server.ok());
    ASSERT_TRUE((*server)->AddJob(Job("echo $$ >> \"$1/pids\"\nexec sleep 30\n", serve)).ok());
    StartWorker((*server)->url());
    const std::set<pid_t> command = WaitForPids(1);
    ASSERT_EQ(command.size(), 1u) << Log();
    kill(worker_, SIGKILL);
    EXPECT_EQ(WaitWorker(), 128 + SIGKILL);
    EXPECT_TRUE(AllEnd(command));
  }
}

// A served command (exec.serve) does every run of the worker in one process,
// each run's items read from the line the worker wrote, and ends when the
// worker is done with it: the worker leaves at the job's end without waiting
// on it.
TEST_F(ExecChildTest, AServedCommandDoesEveryRunInOneProcessAndEndsWithTheJob) {
  auto server = coordinator::Server::Start({});
  ASSERT_TRUE(server.ok());
  const std::string serving =
      "while IFS= read -r line; do\n"
      "  start=${line#*'\"BALLAST_START\":\"'}; echo \"$$ ${start%%'\"'*}\" >> \"$1/runs\"\n"
      "  echo 0 >&3\n"
      "done\n";
  ASSERT_TRUE((*server)->AddJob(Job(serving, /*serve=*/true)).ok());
  StartWorker((*server)->url());
  EXPECT_EQ(WaitWorker(), 0) << Log();
  const auto view = (*server)->View("exec-child-job");
  EXPECT_EQ(view->completed, 4u);
  std::ifstream in(dir_ / "runs");
  std::set<pid_t> pids;
  std::set<uint64_t> starts;
  for (pid_t pid = 0; in >> pid;) {
    uint64_t start = 0;
    in >> start;
    pids.insert(pid);
    starts.insert(start);
  }
  EXPECT_EQ(pids.size(), 1u) << "one process served every run";
  EXPECT_EQ(starts.count(0), 1u) << "the first run began at item 0";
  EXPECT_TRUE(AllEnd(pids));
}

}  // namespace
}  // namespace ballast::worker
