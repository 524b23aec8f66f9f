// What an exec command leaves running ends when the command does (issue 30;
// worker/kernels/command_group.h): a plain background child by its process
// group anywhere; a child that starts its own session (`setsid`) by the
// command's cgroup, where the worker has a cgroup v2 parent (root; the tests
// that need one end in AsRoot, label root, and skip elsewhere saying so).
#include "worker/kernels/command_group.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <string>

#include "cgroup/cgroup_tree.h"
#include "tests/support/marked_processes.h"
#include "worker/kernels/kernel.h"

namespace ballast::kernels {
namespace {

namespace fs = std::filesystem;
using std::chrono::milliseconds;

class CommandGroupTest : public ::testing::Test {
 protected:
  void SetUp() override {
    const std::string name = ::testing::UnitTest::GetInstance()->current_test_info()->name();
    dir_ = fs::temp_directory_path() / ("ballast-command-group-" + std::to_string(getpid()));
    fs::create_directories(dir_);
    marker_ = testing::ProcessMarker(name);
    sleep_ = testing::MarkedSleep(dir_, marker_);
  }
  void TearDown() override {
    testing::KillMarked(marker_);
    SetCommandCgroupParent("");
    if (!parent_.empty()) cgroup::KillAndRemove(parent_, 1000);
    fs::remove_all(dir_);
  }

  // Runs `script` (sh -c, $0 the marked sleep) as an exec job of one item.
  workload::Result Run(const std::string& script) const {
    workload::WorkloadSpec spec;
    spec.kind = workload::WorkloadKind::kExec;
    spec.exec.command = {"sh", "-c", script, sleep_};
    spec.exec.retries = 0;
    spec.items = 1;
    auto kernel = MakeKernel(spec);
    EXPECT_TRUE(kernel.ok());
    auto result = (*kernel)->Compute({0, 1});
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : workload::Result::Empty(workload::WorkloadKind::kExec);
  }

  // A cgroup v2 group for the commands' groups; "" (and the reason in
  // `why`) where this machine has none to give.
  std::string MakeParent(std::string* why) {
    const std::string mount = cgroup::V2Mount();
    if (geteuid() != 0 || mount.empty()) {
      *why = "needs root and cgroup v2";
      return "";
    }
    parent_ = mount + "/ballast-test-" + std::to_string(getpid());
    std::error_code error;
    fs::create_directories(parent_, error);
    if (error || !SetCommandCgroupParent(parent_)) {
      *why = "no cgroup v2 group with cgroup.kill (Linux 5.14) can be made here";
      return "";
    }
    return parent_;
  }

  fs::path dir_;
  std::string marker_;
  std::string sleep_;
  std::string parent_;
};

// Regression: a command's `sleep 300 &` ran on after the command succeeded,
// a few hundred of them by the end of a job.
TEST_F(CommandGroupTest, ABackgroundChildOfACommandThatSucceededDiesWithItsProcessGroup) {
  const workload::Result result = Run("\"$0\" 300 & \"$0\" 300 & exit 0");
  EXPECT_EQ(result.exec().succeeded, 1u);
  EXPECT_EQ(testing::WaitNoneMarked(marker_, milliseconds(2000)), 0u);
}

// Regression: `setsid sleep 300 &` left its process group and escaped every
// cleanup. In the command's cgroup it cannot, and the cgroup goes too.
TEST_F(CommandGroupTest, ASetsidChildDiesWithTheCommandsCgroupAsRoot) {
  std::string why;
  const std::string parent = MakeParent(&why);
  if (parent.empty()) GTEST_SKIP() << why;
  const workload::Result result =
      Run("setsid \"$0\" 300 & setsid -f \"$0\" 300; \"$0\" 300 & exit 0");
  EXPECT_EQ(result.exec().succeeded, 1u);
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);  // before Compute returned
  size_t groups = 0;
  for (const auto& entry : fs::directory_iterator(parent)) groups += entry.is_directory();
  EXPECT_EQ(groups, 0u) << "the command's cgroup is removed";
}

TEST_F(CommandGroupTest, AFailingCommandsLeftoversDieTooAndItsFailureIsKeptAsRoot) {
  std::string why;
  const std::string parent = MakeParent(&why);
  if (parent.empty()) GTEST_SKIP() << why;
  const workload::Result result = Run("setsid \"$0\" 300 & exit 3");
  ASSERT_EQ(result.exec().failures.size(), 1u);
  EXPECT_EQ(result.exec().failures[0].exit_code, 3);
  EXPECT_EQ(testing::MarkedProcesses(marker_).size(), 0u);
}

TEST_F(CommandGroupTest, AParentThatIsNotACgroupIsRefused) {
  EXPECT_FALSE(SetCommandCgroupParent(dir_.string()));
  EXPECT_TRUE(SetCommandCgroupParent(""));
}

}  // namespace
}  // namespace ballast::kernels
