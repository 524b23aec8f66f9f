// Tests of the exec kernel: the command runs with the range (or item) in its
// environment, a failure is retried and then reported with its exit code, and
// the merged result does not depend on how the items were split.
#include <gtest/gtest.h>
#include <pthread.h>
#include <unistd.h>

#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>
#include <string>

#include "tests/worker/kernels/split_helpers.h"
#include "worker/kernels/kernel.h"

namespace ballast::kernels {
namespace {

using workload::ExecFailure;
using workload::Result;
using workload::WorkloadKind;
using workload::WorkloadSpec;

// A scratch directory removed at the end of the test.
class ExecKernelTest : public ::testing::Test {
 protected:
  void SetUp() override {
    dir_ = std::filesystem::temp_directory_path() /
           ("ballast-exec-test-" + std::to_string(getpid()) + "-" +
            ::testing::UnitTest::GetInstance()->current_test_info()->name());
    std::filesystem::create_directories(dir_);
  }
  void TearDown() override { std::filesystem::remove_all(dir_); }

  WorkloadSpec Exec(const std::string& script, uint64_t items, bool per_item = false,
                    uint32_t retries = 2) const {
    WorkloadSpec spec;
    spec.kind = WorkloadKind::kExec;
    spec.exec.command = {"sh", "-c", script, "sh", dir_.string()};
    spec.exec.per_item = per_item;
    spec.exec.retries = retries;
    spec.items = items;
    return spec;
  }

  Result Run(const WorkloadSpec& spec, balance::Range items) const {
    auto kernel = MakeKernel(spec);
    EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
    auto result = (*kernel)->Compute(items);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : Result::Empty(WorkloadKind::kExec);
  }

  // The lines the commands appended to `name` in the scratch directory.
  std::multiset<std::string> Lines(const std::string& name) const {
    std::ifstream in(dir_ / name);
    std::multiset<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.insert(line);
    return lines;
  }

  std::filesystem::path dir_;
};

TEST_F(ExecKernelTest, ARangeRunsOnceWithItsBoundsInTheEnvironment) {
  const WorkloadSpec spec =
      Exec(R"(echo "$BALLAST_START $BALLAST_END ${BALLAST_ITEM-none}" >> "$1/runs")", 10);
  EXPECT_EQ(Run(spec, {2, 7}), Result::ExecSucceeded(5));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"2 7 none"}));
}

TEST_F(ExecKernelTest, PerItemRunsOncePerItem) {
  const WorkloadSpec spec =
      Exec(R"(echo "$BALLAST_ITEM $BALLAST_START $BALLAST_END" >> "$1/runs")", 10, true);
  EXPECT_EQ(Run(spec, {3, 6}), Result::ExecSucceeded(3));
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"3 3 4", "4 4 5", "5 5 6"}));
}

TEST_F(ExecKernelTest, TheWorkersOwnBallastVariablesAreNotPassedOn) {
  setenv("BALLAST_ITEM", "99", 1);
  const WorkloadSpec spec = Exec(R"(echo "${BALLAST_ITEM-none}" >> "$1/runs")", 4);
  Run(spec, {0, 4});
  unsetenv("BALLAST_ITEM");
  EXPECT_EQ(Lines("runs"), (std::multiset<std::string>{"none"}));
}

TEST_F(ExecKernelTest, AFailureIsRetriedThenReportedWithItsExitCode) {
  const WorkloadSpec spec = Exec(R"(echo try >> "$1/tries"; exit 3)", 10, false, 2);
  const Result result = Run(spec, {4, 9});
  EXPECT_EQ(result, Result::ExecFailed({4, 9}, 3, 3));
  EXPECT_EQ(Lines("tries").size(), 3u);
}

TEST_F(ExecKernelTest, ASecondAttemptThatSucceedsCountsAsSuccess) {
  // Fails the first time (no marker yet), succeeds the second.
  const WorkloadSpec spec =
      Exec(R"(if [ -e "$1/marker" ]; then exit 0; fi; touch "$1/marker"; exit 1)", 5, false, 1);
  EXPECT_EQ(Run(spec, {0, 5}), Result::ExecSucceeded(5));
}

TEST_F(ExecKernelTest, PerItemFailuresAreReportedPerItemAndJoined) {
  // Items 2, 3 and 6 fail with exit code 10 + item % 2.
  const WorkloadSpec spec =
      Exec(R"(case $BALLAST_ITEM in 2|3|6) exit $((10 + BALLAST_ITEM % 2));; esac)", 8, true, 0);
  const Result result = Run(spec, {0, 8});
  EXPECT_EQ(result.exec().succeeded, 5u);
  EXPECT_EQ(result.exec().failures,
            (std::vector<ExecFailure>{{{2, 3}, 10, 1}, {{3, 4}, 11, 1}, {{6, 7}, 10, 1}}));
  // The same items, split and threaded differently, give the same result.
  std::mt19937_64 random(testing::PrintedSeed("PerItemFailuresAreReportedPerItemAndJoined"));
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ(
      testing::ComputeAll(**kernel, WorkloadKind::kExec, testing::RandomSplit(8, 3, random), 2),
      result);
}

TEST_F(ExecKernelTest, ACommandThatCannotStartOrIsKilledIsReported) {
  WorkloadSpec missing = Exec("", 2, false, 1);
  missing.exec.command = {"ballast-no-such-command-here"};
  EXPECT_EQ(Run(missing, {0, 2}), Result::ExecFailed({0, 2}, 127, 2));
  const WorkloadSpec killed = Exec("kill -9 $$", 2, false, 0);
  EXPECT_EQ(Run(killed, {0, 1}), Result::ExecFailed({0, 1}, 128 + 9, 1));
}

TEST_F(ExecKernelTest, TheChildDoesNotInheritBlockedOrIgnoredSignals) {
  // A worker may block SIGTERM in its threads and ignore SIGPIPE; the command
  // must still start with nothing blocked or ignored. awk is run directly (a
  // shell would reset its own mask) and reads its masks from /proc.
  sigset_t term;
  sigemptyset(&term);
  sigaddset(&term, SIGTERM);
  sigset_t previous;
  pthread_sigmask(SIG_BLOCK, &term, &previous);
  auto old_pipe = signal(SIGPIPE, SIG_IGN);
  WorkloadSpec spec = Exec("", 1, false, 0);
  // Bit 14 of SigBlk is SIGTERM (15), bit 12 of SigIgn SIGPIPE (13): both in
  // the fourth hex digit from the right.
  spec.exec.command = {"awk", R"(
      function digit(mask) { return index("0123456789abcdef", substr(mask, length(mask) - 3, 1)) - 1 }
      /^SigBlk:/ && int(digit($2) / 4) % 2 == 1 { bad = 1 }
      /^SigIgn:/ && digit($2) % 2 == 1 { bad = 1 }
      END { exit bad })",
                       "/proc/self/status"};
  const Result result = Run(spec, {0, 1});
  signal(SIGPIPE, old_pipe);
  pthread_sigmask(SIG_SETMASK, &previous, nullptr);
  EXPECT_EQ(result, Result::ExecSucceeded(1));
}

}  // namespace
}  // namespace ballast::kernels
