// The worker's CPU budget (worker/cpu_budget.h): a container's CPU limit is a
// quota on its cgroup, and the worker runs one thread (one exec command) per
// started core of it, not one per visible core. The trees below are laid out
// as the kernel shows them: a kubelet's pod and container groups under
// cgroup v2, a container's own cgroup namespace, and cgroup v1.
#include "worker/cpu_budget.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

namespace ballast::worker {
namespace {

namespace fs = std::filesystem;

TEST(CpuBudgetTest, CpuMaxIsAQuotaInCoresOrUnlimited) {
  EXPECT_DOUBLE_EQ(*ParseCpuMax("50000 100000"), 0.5);
  EXPECT_DOUBLE_EQ(*ParseCpuMax("20000 100000\n"), 0.2);
  EXPECT_DOUBLE_EQ(*ParseCpuMax("150000 100000"), 1.5);
  EXPECT_FALSE(ParseCpuMax("max 100000"));
  EXPECT_FALSE(ParseCpuMax(""));
  EXPECT_FALSE(ParseCpuMax("50000"));
  EXPECT_FALSE(ParseCpuMax("50000 0"));
  EXPECT_FALSE(ParseCpuMax("fifty 100000"));
  EXPECT_DOUBLE_EQ(*ParseCfsQuota("25000", "100000"), 0.25);
  EXPECT_FALSE(ParseCfsQuota("-1", "100000"));
}

TEST(CpuBudgetTest, ProcCgroupGivesTheV2PathAndTheV1CpuHierarchy) {
  const CgroupPaths v2 = ParseProcCgroup("0::/kubepods.slice/pod1/cri-containerd-abc.scope\n");
  EXPECT_EQ(v2.v2, "/kubepods.slice/pod1/cri-containerd-abc.scope");
  EXPECT_EQ(v2.v1_cpu, "");
  const CgroupPaths v1 = ParseProcCgroup(
      "12:memory:/docker/x\n4:cpu,cpuacct:/docker/x\n1:name=systemd:/docker/x\n0::/a:b\n");
  EXPECT_EQ(v1.v1_cpu, "/docker/x");
  EXPECT_EQ(v1.v1_cpu_controllers, "cpu,cpuacct");
  EXPECT_EQ(v1.v2, "/a:b") << "a path may hold ':'";
  EXPECT_EQ(ParseProcCgroup("garbage\n\n:\n").v2, "");
}

TEST(CpuBudgetTest, ThreadsAreOnePerStartedCoreOfTheQuotaWithinTheAffinity) {
  CpuBudget budget;
  budget.affinity_cores = 4;
  EXPECT_EQ(budget.Threads(), 4u) << "no quota: every core it may run on";
  for (const auto& [quota, threads] : {std::pair{0.2, 1u},
                                       {0.5, 1u},
                                       {1.0, 1u},
                                       {1.0000001, 1u},
                                       {1.5, 2u},
                                       {2.0, 2u},
                                       {3.2, 4u},
                                       {16.0, 4u}}) {
    budget.quota_cores = quota;
    EXPECT_EQ(budget.Threads(), threads) << "quota " << quota;
  }
}

TEST(CpuBudgetTest, TheNodesDeclaredCpuIsANumberOfCoresAboveZero) {
  EXPECT_EQ(ParseNodeCpu("0.5"), 0.5);
  EXPECT_EQ(ParseNodeCpu("4"), 4.0);
  EXPECT_EQ(ParseNodeCpu("0.2\n"), 0.2);
  for (const char* bad : {"", "0", "-1", "nan", "inf", "1e999", "0.5 cores", "500m", "x",
                          "1111111111111111111111111111111111"}) {
    EXPECT_EQ(ParseNodeCpu(bad), std::nullopt) << bad;
  }
}

// A board of the test bed: the machine's two cores visible, no quota on the
// container's own group, the board's half a core declared by its node.
TEST(CpuBudgetTest, TheNodesDeclaredCpuBindsWhenTighterThanWhatTheContainerSees) {
  CpuBudget budget;
  budget.affinity_cores = 2;
  budget.Tighten(ParseNodeCpu("0.5"), "its node declares 0.5 CPU");
  EXPECT_EQ(budget.Threads(), 1u);
  EXPECT_EQ(budget.quota_source, "its node declares 0.5 CPU");
  // A tighter quota of the container's own stays; a looser declaration does not widen it.
  budget.Tighten(0.2, "cgroup");
  budget.Tighten(ParseNodeCpu("4"), "its node declares 4 CPU");
  EXPECT_EQ(budget.quota_cores, 0.2);
  EXPECT_EQ(budget.quota_source, "cgroup");
  budget.Tighten(std::nullopt, "nothing");
  EXPECT_EQ(budget.quota_source, "cgroup");
}

class CpuBudgetTreeTest : public ::testing::Test {
 protected:
  void SetUp() override {
    root_ = fs::temp_directory_path() /
            ("cpu-budget-" + std::to_string(::getpid()) + "-" +
             ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(root_);
    fs::create_directories(root_);
  }
  void TearDown() override { fs::remove_all(root_); }

  void Write(const fs::path& relative, const std::string& text) {
    fs::create_directories((root_ / relative).parent_path());
    std::ofstream(root_ / relative) << text;
  }
  CpuBudget Read() { return ReadCpuBudget((root_ / "sys").string(), (root_ / "proc").string()); }

  fs::path root_;
};

TEST_F(CpuBudgetTreeTest, AKubeletContainerUnderV2TakesTheTightestQuotaOnItsPath) {
  // The pod's group holds the sum of its containers' limits; the container's
  // its own limit, the tighter.
  Write("sys/cgroup.controllers", "cpuset cpu io memory pids\n");
  Write("sys/cpu.max", "max 100000\n");  // the root has no cpu.max in reality; ignored if so
  Write("sys/kubepods/cpu.max", "max 100000\n");
  Write("sys/kubepods/pod1/cpu.max", "70000 100000\n");
  Write("sys/kubepods/pod1/c1/cpu.max", "50000 100000\n");
  Write("proc", "0::/kubepods/pod1/c1\n");
  const CpuBudget budget = Read();
  ASSERT_TRUE(budget.quota_cores);
  EXPECT_DOUBLE_EQ(*budget.quota_cores, 0.5);
  EXPECT_EQ(budget.Threads(), 1u);
  EXPECT_NE(budget.quota_source.find("cgroup v2 cpu.max 50000 100000"), std::string::npos)
      << budget.quota_source;
  EXPECT_NE(budget.ToString().find("0.5 CPU"), std::string::npos) << budget.ToString();
}

TEST_F(CpuBudgetTreeTest, AnAncestorsQuotaBindsWhenTighter) {
  Write("sys/cgroup.controllers", "cpu\n");
  Write("sys/slice/cpu.max", "20000 100000\n");
  Write("sys/slice/job/cpu.max", "max 100000\n");
  Write("proc", "0::/slice/job\n");
  ASSERT_TRUE(Read().quota_cores);
  EXPECT_DOUBLE_EQ(*Read().quota_cores, 0.2);
}

TEST_F(CpuBudgetTreeTest, AContainersOwnNamespaceShowsItsGroupAtTheMountsRoot) {
  // containerd on cgroup v2: "0::/" and the container's group mounted as the root.
  Write("sys/cgroup.controllers", "cpu\n");
  Write("sys/cpu.max", "150000 100000\n");
  Write("proc", "0::/\n");
  ASSERT_TRUE(Read().quota_cores);
  EXPECT_DOUBLE_EQ(*Read().quota_cores, 1.5);
  // A path the mount does not show (the host's path seen from inside).
  Write("proc", "0::/kubepods/pod9/c9\n");
  ASSERT_TRUE(Read().quota_cores);
  EXPECT_DOUBLE_EQ(*Read().quota_cores, 1.5);
}

TEST_F(CpuBudgetTreeTest, NoQuotaAnywhereIsUnlimited) {
  Write("sys/cgroup.controllers", "cpu\n");
  Write("sys/a/cpu.max", "max 100000\n");
  Write("proc", "0::/a\n");
  EXPECT_FALSE(Read().quota_cores);
  EXPECT_NE(Read().ToString().find("no CPU quota"), std::string::npos);
}

TEST_F(CpuBudgetTreeTest, NothingReadableIsUnlimitedNotAnError) {
  const CpuBudget budget = Read();  // neither file exists
  EXPECT_FALSE(budget.quota_cores);
  EXPECT_GE(budget.Threads(), 1u);
}

TEST_F(CpuBudgetTreeTest, CgroupV1ReadsTheCpuHierarchysQuotaAndPeriod) {
  Write("sys/cpu,cpuacct/cpu.cfs_quota_us", "-1\n");
  Write("sys/cpu,cpuacct/cpu.cfs_period_us", "100000\n");
  Write("sys/cpu,cpuacct/docker/x/cpu.cfs_quota_us", "25000\n");
  Write("sys/cpu,cpuacct/docker/x/cpu.cfs_period_us", "100000\n");
  Write("proc", "4:cpu,cpuacct:/docker/x\n0::/\n");
  const CpuBudget budget = Read();
  ASSERT_TRUE(budget.quota_cores);
  EXPECT_DOUBLE_EQ(*budget.quota_cores, 0.25);
  EXPECT_NE(budget.quota_source.find("cgroup v1"), std::string::npos);
}

TEST(CpuBudgetSelfTest, ThisProcessHasABudgetOfAtLeastOneThread) {
  const CpuBudget budget = ReadCpuBudget();
  EXPECT_GE(budget.Threads(), 1u);
  EXPECT_LE(budget.Threads(), budget.affinity_cores);
}

}  // namespace
}  // namespace ballast::worker
