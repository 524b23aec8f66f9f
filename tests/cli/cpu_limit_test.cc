// Tests of the CPU quota that holds an emulated node's speed (cli/run/cpu_limit.h):
// the quota and period chosen for each speed, and, where this machine allows
// cgroups, the values the kernel was given.
#include "cli/run/cpu_limit.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace ballast::cli {
namespace {

namespace fs = std::filesystem;

// Regression: a 1000 us floor on the quota in a fixed 100 ms period gave
// each of 500 nodes at 0.003 core 0.01 core, more than three times their
// speed, and the run's figures were computed from speeds not applied. The
// period now lengthens (up to the kernel's 1 s) until the quota holds the
// speed.
TEST(CpuLimitTest, FiveHundredNodesAtThreeThousandthsOfACoreGetTheirSpeedNotTheFloor) {
  const std::vector<double> speeds = {0.001, 0.0015, 0.003, 0.005, 0.0099, 0.01,
                                      0.1,   0.5,    0.95,  1.5,   63.9};
  for (double speed : speeds) {
    SCOPED_TRACE(speed);
    auto quota = QuotaFor(speed);
    ASSERT_TRUE(quota.ok()) << quota.status().ToString();
    EXPECT_GE(quota->quota_us, kMinQuotaUs);
    EXPECT_GE(quota->period_us, kDefaultPeriodUs);
    EXPECT_LE(quota->period_us, kMaxPeriodUs);
    const double cores = static_cast<double>(quota->quota_us) / quota->period_us;
    EXPECT_NEAR(cores, speed, 0.0005 * speed);
  }
  // The default period wherever it suffices; the shortest longer one below.
  EXPECT_EQ(QuotaFor(0.5)->period_us, kDefaultPeriodUs);
  EXPECT_EQ(QuotaFor(0.01)->period_us, kDefaultPeriodUs);
  EXPECT_EQ(QuotaFor(0.003)->quota_us, 1000);
  EXPECT_EQ(QuotaFor(0.003)->period_us, 333334);
  EXPECT_EQ(QuotaFor(0.001)->period_us, kMaxPeriodUs);
}

// A held node computes speed / threads of each period: the emulated Pi 3B
// (0.06 core, one thread) 6 %, a node of 1.5 cores (two threads) 75 %. A
// node of whole cores, or one nothing holds, computes steadily.
TEST(CpuLimitTest, ANodesDutyIsItsSpeedPerThreadWhenItIsHeld) {
  EXPECT_EQ(WorkerThreads(0.06), 1);
  EXPECT_EQ(WorkerThreads(1.5), 2);
  EXPECT_EQ(WorkerThreads(4), 4);
  EXPECT_EQ(WorkerThreads(NAN), 1);
  EXPECT_DOUBLE_EQ(NodeDuty(0.06, true), 0.06);
  EXPECT_DOUBLE_EQ(NodeDuty(1.5, true), 0.75);
  EXPECT_DOUBLE_EQ(NodeDuty(2, true), 1);
  EXPECT_DOUBLE_EQ(NodeDuty(0.06, false), 1);
  EXPECT_DOUBLE_EQ(NodeDuty(NAN, true), 1);
}

TEST(CpuLimitTest, AWorkersCoresAreItsQuotaOrWhatTheMachineCanGiveIt) {
  EXPECT_EQ(WorkerCores(0.5, /*quota=*/true, 8), 0.5);
  // Unheld, or held by its own duty cycle: its commands may use the machine.
  EXPECT_EQ(WorkerCores(0.5, false, 8), 8);
  EXPECT_EQ(WorkerCores(12, false, 8), 12);
  EXPECT_EQ(WorkerCores(0.5, false, 0), 1);  // the machine's cores unknown
}

TEST(CpuLimitTest, NodesFasterThanTheMachineAreNoted) {
  EXPECT_EQ(OversubscriptionNote({0.5, 0.5, 0.1}, 2), "");
  EXPECT_EQ(OversubscriptionNote({1, 1}, 2), "");  // exactly the machine
  EXPECT_EQ(OversubscriptionNote({2, 1}, 0), "");  // unknown machine
  EXPECT_EQ(OversubscriptionNote({2, 1.5}, 2),
            "but the nodes' speeds sum to 3.5 cores on a machine of 2: they compete, and the "
            "ideal and efficiency assume speeds the nodes did not get");
}

TEST(CpuLimitTest, ASpeedNoQuotaCanHoldIsRefused) {
  for (double speed : std::vector<double>{0.0009, 0.0, -1.0, NAN, INFINITY}) {
    auto quota = QuotaFor(speed);
    ASSERT_FALSE(quota.ok()) << speed;
    EXPECT_EQ(quota.status().code(), StatusCode::kInvalid);
    EXPECT_NE(quota.status().message().find("a CPU quota holds at least 0.001 core"),
              std::string::npos)
        << quota.status().message();
  }
}

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// On a machine that allows cgroups (root, a cpu controller), the kernel holds
// what QuotaFor chose.
TEST(CpuLimitTest, TheKernelIsGivenTheLongerPeriod) {
  const std::string group = "cpu-limit-test-" + std::to_string(getpid());
  auto limit = CpuLimit::Create(group, 0.003);
  if (!limit.ok()) GTEST_SKIP() << "no cgroup here: " << limit.status().ToString();
  const fs::path dir = fs::path((*limit)->procs_file()).parent_path();
  std::cout << (*limit)->description() << "\n";
  if (fs::exists(dir / "cpu.max")) {
    EXPECT_EQ(ReadText(dir / "cpu.max"), "1000 333334\n");
  } else {
    EXPECT_EQ(ReadText(dir / "cpu.cfs_quota_us"), "1000\n");
    EXPECT_EQ(ReadText(dir / "cpu.cfs_period_us"), "333334\n");
  }
}

}  // namespace
}  // namespace ballast::cli
