// A board throttled mid-job, end to end (docs/operator.md, "A node below its
// own baseline"; docs/probe.md, "Node conditions"): `ballast operator` with
// a Prometheus history of seed 000's boards, the Node's condition
// BallastBoardUnderVoltage written as the node probe writes it, and pi4b-1's
// CPU quota (its emulated speed, the node agent's cgroup) cut from 0.5 to 0.1
// of a core once the job runs. The job succeeds with the exact result, names
// pi4b-1 slow with the figures and what its probe saw, and its status says
// so. Root only (the cgroup); CTest names: health_e2e_HealthTest.<Test>,
// label e2e.
#include <unistd.h>

#include <cctype>
#include <cstdlib>
#include <fstream>

#include "core/probe/board_conditions.h"
#include "testbed/real_prometheus.h"
#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

const kube::ResourceRef kNodeObjects = {"", "v1", "nodes", false, "", ""};

// The node agent's CPU cgroup of `node` (docs/testenv.md, "Emulated speed"),
// for the port base in the test bed's env file; "" when it has none.
std::string NodeCpuGroup(const std::string& node) {
  std::ifstream env(TestenvDir() + "/env");
  std::string line;
  constexpr std::string_view kKey = "BALLAST_TESTENV_PORT_BASE=";
  while (std::getline(env, line)) {
    const size_t at = line.find(kKey);
    if (at == std::string::npos) continue;
    std::string base;
    for (size_t i = at + kKey.size(); i < line.size() && std::isdigit(line[i]); ++i) {
      base += line[i];
    }
    const std::string group = "/sys/fs/cgroup/cpu/ballast-testenv-" + base + "/" + node;
    return fs::exists(group + "/cpu.cfs_quota_us") ? group : "";
  }
  return "";
}

std::string ReadQuota(const std::string& group) {
  std::ifstream in(group + "/cpu.cfs_quota_us");
  std::string quota;
  in >> quota;
  return quota;
}

bool WriteQuota(const std::string& group, const std::string& quota) {
  std::ofstream out(group + "/cpu.cfs_quota_us");
  out << quota << "\n";
  out.close();
  return ReadQuota(group) == quota;
}

class HealthTest : public OperatorTest {
 protected:
  void TearDown() override {
    if (!group_.empty() && !quota_.empty()) {
      EXPECT_TRUE(WriteQuota(group_, quota_)) << "pi4b-1's quota not restored: " << group_;
    }
    // The probe's field manager applies no condition: the API server
    // removes the ones it wrote.
    if (conditioned_) {
      kube::ApplyOptions as_probe{"ballast-probe", true, "status"};
      (void)client_->Apply(kNodeObjects.Named("pi4b-1"),
                           probe::BoardConditionsApplyObject("pi4b-1", {}, "now"), as_probe);
    }
    OperatorTest::TearDown();
  }
  std::string group_;
  std::string quota_;
  bool conditioned_ = false;
};

constexpr uint64_t kLimit = 300000;  // seed 000's job: about 20 s on the three boards

TEST_F(HealthTest, ABoardThrottledMidJobIsNamedWithWhatItsProbeSaw) {
  if (geteuid() != 0) GTEST_SKIP() << "the node agent's cgroups need root";
  // Three earlier jobs, as the coordinator's gauge was scraped: the boards at
  // their emulated speeds, 0.5 / 0.5 / 0.2.
  const double now = static_cast<double>(std::time(nullptr));
  const std::string samples =
      testing::EarlierPrimesJobs({{"pi4b-0", 50}, {"pi4b-1", 50}, {"pi3b-0", 20}}, now);
  std::string why;
  auto prometheus = testing::RealPrometheus::Start(samples, &why);
  ASSERT_TRUE(prometheus) << why;
  ASSERT_NO_FATAL_FAILURE(RestartWith({"--prometheus-url", prometheus->url()}));

  // pi4b-1's probe reads a sagging supply (tests/probe/trees/pi4b-8gb's
  // get_throttled 0x50005), as the probe writes it.
  probe::Facts facts;
  facts.throttled = probe::Throttled{0x50005};
  const auto wanted = probe::BoardConditions(facts);
  const probe::BoardConditionDecision decision =
      probe::DecideBoardConditions({}, wanted, "2026-11-27T08:40:00Z", "");
  kube::ApplyOptions as_probe{"ballast-probe", true, "status"};
  auto written = client_->Apply(
      kNodeObjects.Named("pi4b-1"),
      probe::BoardConditionsApplyObject("pi4b-1", decision.write, "2026-11-27T08:40:00Z"),
      as_probe);
  ASSERT_TRUE(written.ok()) << written.status().ToString();
  conditioned_ = true;

  ASSERT_FALSE(CreateJob(PrimesJob("throttled", kLimit)).is_null());
  ASSERT_TRUE(WaitMidRun("throttled"));
  // The node agent makes the node's group when the first pod starts there.
  group_ = NodeCpuGroup("pi4b-1");
  if (group_.empty()) GTEST_SKIP() << "the node agent applies no CPU quota here";
  quota_ = ReadQuota(group_);
  ASSERT_EQ(quota_, "50000") << "pi4b-1 at 0.5 of a core";
  ASSERT_TRUE(WriteQuota(group_, "10000")) << "pi4b-1 cut to 0.1 of a core";
  auto job = WaitSucceeded("throttled", seconds(240));
  ASSERT_TRUE(WriteQuota(group_, quota_));
  ASSERT_TRUE(job);
  ExpectCompleteAndExact(*job, kLimit);

  std::map<std::string, json> rows;
  for (const auto& row : StatusOf(*job).value("nodes", json::array())) rows[row["name"]] = row;
  ASSERT_TRUE(rows.contains("pi4b-1")) << StatusOf(*job);
  EXPECT_EQ(rows["pi4b-1"].value("baselineVerdict", ""), "slow") << rows["pi4b-1"];
  const double ratio = rows["pi4b-1"].value("baselineRatio", 1.0);
  EXPECT_LT(ratio, 0.75) << rows["pi4b-1"];
  std::printf("pi4b-1 at %.3f of its baseline; pi4b-0 %s, pi3b-0 %s\n", ratio,
              rows["pi4b-0"].value("baselineVerdict", "-").c_str(),
              rows["pi3b-0"].value("baselineVerdict", "-").c_str());

  auto below = WaitEvent("throttled", "NodeBelowBaseline");
  ASSERT_TRUE(below);
  const std::string message = below->value("message", "");
  std::printf("NodeBelowBaseline: %s\n", message.c_str());
  EXPECT_EQ(below->value("type", ""), "Warning");
  // The message's ratio to two places, the status's to three.
  constexpr std::string_view kRanAt = "pi4b-1 ran at ";
  ASSERT_EQ(message.rfind(kRanAt, 0), 0u) << message;
  EXPECT_NEAR(std::strtod(message.c_str() + kRanAt.size(), nullptr), ratio, 0.0051) << message;
  EXPECT_NE(message.find(" of its baseline (measured "), std::string::npos) << message;
  EXPECT_NE(message.find("; under-voltage since 2026-11-27T08:40:00Z (BallastBoardUnderVoltage: "
                         "the board's supply is under-voltage now (get_throttled 0x50005))"),
            std::string::npos)
      << message;
  EXPECT_NE(message.find("; throttling since 2026-11-27T08:40:00Z (BallastBoardThrottled: "),
            std::string::npos)
      << message;
  // The Node's copy, in namespace default (posted a moment after the job's).
  kube::ListOptions options;
  options.field_selector =
      "involvedObject.kind=Node,involvedObject.name=pi4b-1,reason=NodeBelowBaseline";
  size_t seen = 0;
  const bool named = Poll(
      [&] {
        auto on_node = client_->List({"", "v1", "events", true, "default", ""}, options);
        if (!on_node.ok()) return false;
        seen = on_node->items.size();
        for (const json& event : on_node->items) {
          const std::string text = event.value("message", "");
          if (text.find("WeightedJob " + ns_ + "/throttled: " + message) == 0) return true;
        }
        return false;
      },
      seconds(20));
  EXPECT_TRUE(named) << seen << " NodeBelowBaseline events on pi4b-1, none of this job";
}

}  // namespace
}  // namespace ballast::operator_e2e
