// The one node record: a cluster file's node and a scenario's read by the
// one reader (cluster::NodesFromJson), each under its own bounds.
#include "core/cluster/emulated_node.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <sstream>

#include "core/config/document.h"
#include "core/job/job_spec.h"
#include "core/sim/scenario.h"

namespace ballast::cluster {
namespace {

namespace fs = std::filesystem;

std::string ReadText(const fs::path& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

constexpr const char* kNode =
    "  - name: pi4b-1\n"
    "    speed: 0.5\n"
    "    joinAt: 4\n"
    "    leaveAt: 20\n"
    "    labels: {ballast.io/cpu-model: cortex-a72, ballast.io/ram-mb: 4096}\n";

// The same node written in a cluster file and in a scenario is the same record.
TEST(EmulatedNodeTest, AClusterFileAndAScenarioSpellANodeAlike) {
  auto cluster = job::ParseCluster(
      std::string("nodes:\n") + kNode + "  - {name: pi3b-1, speed: 0.1}\n", "c.yaml");
  ASSERT_TRUE(cluster.ok()) << cluster.status().ToString();
  auto scenario = sim::ParseScenario(
      std::string("workload: {items: 10}\nnodes:\n") + kNode + "  - {name: pi3b-1, speed: 0.1}\n",
      "s.yaml");
  ASSERT_TRUE(scenario.ok()) << scenario.status().ToString();
  ASSERT_EQ(cluster->nodes.size(), 2u);
  ASSERT_EQ(scenario->nodes.size(), 2u);
  const EmulatedNode& run = cluster->nodes[0];
  const EmulatedNode& simulated = scenario->nodes[0];
  EXPECT_EQ(run.name, simulated.name);
  EXPECT_EQ(run.labels, simulated.labels);
  EXPECT_EQ(run.labels.at("ballast.io/ram-mb"), "4096");
  EXPECT_EQ(run.speed, simulated.speed);
  EXPECT_EQ(run.join_at, simulated.join_at);
  EXPECT_EQ(run.leave_at, simulated.leave_at);
  EXPECT_EQ(run.leave_at, 20.0);
}

// `ballast run` emulates no link, failure or throttle: a simulator's field in
// a cluster file is refused as such rather than as an unknown key.
TEST(EmulatedNodeTest, ASimulatorsFieldInAClusterFileIsNamedAsSuch) {
  auto cluster = job::ParseCluster("nodes:\n  - {name: a, speed: 0.5, latency: 0.001}\n", "c.yaml");
  ASSERT_FALSE(cluster.ok());
  EXPECT_EQ(cluster.status().message(),
            "c.yaml:2:36: nodes[0].latency: a simulated node's field (ballast simulate), not a "
            "cluster file's; a node here has name, speed, labels, joinAt, leaveAt");
  auto unknown = job::ParseCluster("nodes:\n  - {name: a, speed: 0.5, sped: 1}\n", "c.yaml");
  ASSERT_FALSE(unknown.ok());
  EXPECT_NE(unknown.status().message().find(
                "nodes[0].sped: unknown field \"sped\" (allowed: name, speed, labels, joinAt, "
                "leaveAt)"),
            std::string::npos)
      << unknown.status().message();
}

// Each file's bounds: a node of this machine gets at least a thousandth of a
// core and joins within a year; a simulated one is bounded wider.
TEST(EmulatedNodeTest, EachFileKindKeepsItsOwnBounds) {
  const nlohmann::json slow = nlohmann::json::parse(R"([{"name": "a", "speed": 0.0001}])");
  auto simulated = NodesFromJson(slow, "nodes", kSimulatedNodes);
  ASSERT_TRUE(simulated.ok()) << simulated.status().ToString();
  EXPECT_EQ((*simulated)[0].speed, 0.0001);
  auto run = NodesFromJson(slow, "nodes", kRunNodes);
  ASSERT_FALSE(run.ok());
  EXPECT_EQ(run.status().message(),
            "nodes[0].speed: expected a fraction of one core in [0.001, 64], got 0.0001");

  const nlohmann::json late =
      nlohmann::json::parse(R"([{"name": "a", "speed": 1}, {"name": "b", "speed": 1,
                                "joinAt": 1e8}])");
  EXPECT_TRUE(NodesFromJson(late, "nodes", kSimulatedNodes).ok());
  auto late_run = NodesFromJson(late, "nodes", kRunNodes);
  ASSERT_FALSE(late_run.ok());
  EXPECT_EQ(late_run.status().message(),
            "nodes[1].joinAt: expected seconds from the job's start in [0, 3.1536e+07], got "
            "100000000.0");
}

// Every shipped cluster file's nodes read as a scenario's nodes too: what a
// user wrote for `ballast run` can be simulated as it is.
TEST(EmulatedNodeTest, EveryExampleClusterReadsAsScenarioNodes) {
  const fs::path dir = fs::path(BALLAST_SOURCE_DIR) / "examples/clusters";
  int files = 0;
  for (const fs::directory_entry& entry : fs::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    ++files;
    auto document = config::ParseYaml(ReadText(entry.path()), entry.path().string());
    ASSERT_TRUE(document.ok()) << document.status().ToString();
    auto run = NodesFromJson(document->tree.at("nodes"), "nodes", kRunNodes);
    auto simulated = NodesFromJson(document->tree.at("nodes"), "nodes", kSimulatedNodes);
    ASSERT_TRUE(run.ok()) << entry.path() << ": " << run.status().ToString();
    ASSERT_TRUE(simulated.ok()) << entry.path() << ": " << simulated.status().ToString();
    ASSERT_EQ(run->size(), simulated->size());
    for (size_t i = 0; i < run->size(); ++i) {
      EXPECT_EQ((*run)[i].name, (*simulated)[i].name);
      EXPECT_EQ((*run)[i].labels, (*simulated)[i].labels);
      EXPECT_EQ((*run)[i].speed, (*simulated)[i].speed);
      EXPECT_EQ((*run)[i].join_at, (*simulated)[i].join_at);
    }
  }
  EXPECT_GE(files, 3);
}

}  // namespace
}  // namespace ballast::cluster
