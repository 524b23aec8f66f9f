// Tests of ParseScenario (core/sim/scenario.h): every field of a good document
// arrives in the Scenario; every bad document is Invalid with a message that
// names the file, the line of the mistake and what was expected.
//
// Every bad document marks the line its error must name with a "# <-"
// comment; the test checks that the message starts with "<file>:<that line>:".
#include "core/sim/scenario.h"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include "core/sim/true_cost.h"
#include "tests/support/marked_line.h"

namespace ballast::sim {
namespace {

using ::ballast::testing::ExpectInvalidAtMarkedLine;

const char kFull[] = R"(# Every field, none at its default.
name: full
description: every field set
workload:
  items: 1000
  itemSeconds: 0.25
  costModel: sqrt
  costJitter: 0.3
  bytesPerItem: 4096
  transfer: block
  repeatable: false
profile: custom-profile.yaml
seed: 42
failureDetection: 3.5
policies:
  - adaptive
  - {name: selfsched, chunk: 8}
  - {name: adaptive, label: no-comp, compensation: none, stealing: "off"}
nodes:
  - name: pi4b-1
    labels: {ballast.io/cpu-model: cortex-a72, ballast.io/os-bits: "64"}
    speed: 0.5
    changes: [{at: 20, speed: 0.3}, {at: 60, speed: 0.5}]
    latency: 0.0005
    bandwidth: 12500000
    bytesPerItem: 8000
    failAt: 25
    localItems: 300
  - name: pi3b
    speed: 2
)";

TEST(ScenarioTest, EveryFieldOfAGoodDocumentArrives) {
  auto parsed = ParseScenario(kFull, "full.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Scenario& s = *parsed;
  EXPECT_EQ(s.name, "full");
  EXPECT_EQ(s.description, "every field set");
  EXPECT_EQ(s.workload.items, 1000u);
  EXPECT_DOUBLE_EQ(s.workload.item_seconds, 0.25);
  EXPECT_EQ(s.workload.cost, balance::CostShape::kSqrt);
  EXPECT_DOUBLE_EQ(s.workload.cost_jitter, 0.3);
  EXPECT_DOUBLE_EQ(s.workload.bytes_per_item, 4096);
  EXPECT_EQ(s.workload.transfer, Transfer::kBlock);
  EXPECT_FALSE(s.workload.repeatable);
  EXPECT_EQ(s.profile, "custom-profile.yaml");
  EXPECT_EQ(s.seed, 42u);
  EXPECT_DOUBLE_EQ(s.failure_detection, 3.5);

  ASSERT_EQ(s.policies.size(), 3u);
  EXPECT_EQ(s.policies[0].name(), "adaptive");
  EXPECT_EQ(s.policies[0].display(), "adaptive");
  EXPECT_EQ(std::get<balance::AdaptiveOptions>(s.policies[0].options), balance::AdaptiveOptions{});
  EXPECT_EQ(s.policies[1].name(), "selfsched");
  EXPECT_EQ(std::get<balance::SelfSchedOptions>(s.policies[1].options).chunk, 8u);
  EXPECT_EQ(s.policies[2].name(), "adaptive");
  EXPECT_EQ(s.policies[2].label, "no-comp");
  EXPECT_EQ(s.policies[2].display(), "no-comp");
  balance::AdaptiveOptions no_comp;
  no_comp.compensation = false;
  no_comp.stealing = false;
  EXPECT_EQ(std::get<balance::AdaptiveOptions>(s.policies[2].options), no_comp);

  ASSERT_EQ(s.nodes.size(), 2u);
  const EmulatedNode& a = s.nodes[0];
  EXPECT_EQ(a.name, "pi4b-1");
  EXPECT_EQ(a.labels, (std::map<std::string, std::string>{{"ballast.io/cpu-model", "cortex-a72"},
                                                          {"ballast.io/os-bits", "64"}}));
  EXPECT_DOUBLE_EQ(a.speed, 0.5);
  ASSERT_EQ(a.changes.size(), 2u);
  EXPECT_DOUBLE_EQ(a.changes[0].at, 20);
  EXPECT_DOUBLE_EQ(a.changes[0].speed, 0.3);
  EXPECT_DOUBLE_EQ(a.changes[1].at, 60);
  EXPECT_DOUBLE_EQ(a.changes[1].speed, 0.5);
  EXPECT_DOUBLE_EQ(a.latency, 0.0005);
  EXPECT_DOUBLE_EQ(a.bandwidth, 12500000);
  ASSERT_TRUE(a.bytes_per_item.has_value());
  EXPECT_DOUBLE_EQ(*a.bytes_per_item, 8000);
  ASSERT_TRUE(a.fail_at.has_value());
  EXPECT_DOUBLE_EQ(*a.fail_at, 25);
  EXPECT_EQ(a.local_items, 300u);

  // The second node takes every default.
  const EmulatedNode& b = s.nodes[1];
  EXPECT_EQ(b.name, "pi3b");
  EXPECT_TRUE(b.labels.empty());
  EXPECT_DOUBLE_EQ(b.speed, 2);
  EXPECT_TRUE(b.changes.empty());
  EXPECT_EQ(b.latency, 0);
  EXPECT_EQ(b.bandwidth, 0);
  EXPECT_FALSE(b.bytes_per_item.has_value());
  EXPECT_FALSE(b.fail_at.has_value());
  EXPECT_EQ(b.local_items, 0u);
}

TEST(ScenarioTest, OmittedFieldsTakeTheirDocumentedDefaults) {
  auto parsed = ParseScenario(R"(workload:
  items: 7
nodes:
  - {name: only, speed: 1}
)",
                              "minimal.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Scenario& s = *parsed;
  EXPECT_EQ(s.name, "");
  EXPECT_EQ(s.description, "");
  EXPECT_EQ(s.workload.items, 7u);
  EXPECT_DOUBLE_EQ(s.workload.item_seconds, 1.0);
  EXPECT_EQ(s.workload.cost, balance::CostShape::kUniform);
  EXPECT_EQ(s.workload.cost_jitter, 0);
  EXPECT_EQ(s.workload.bytes_per_item, 0);
  EXPECT_EQ(s.workload.transfer, Transfer::kStream);
  EXPECT_TRUE(s.workload.repeatable);
  EXPECT_EQ(s.profile, "raspberry-pi");
  EXPECT_EQ(s.seed, 1u);
  EXPECT_DOUBLE_EQ(s.failure_detection, 10);
  // Every policy, in the documented order.
  std::vector<std::string> names;
  for (const balance::PolicySpec& spec : s.policies) names.push_back(spec.name());
  EXPECT_EQ(names, balance::PolicyNames());
  ASSERT_EQ(s.nodes.size(), 1u);
}

TEST(ScenarioTest, SpeedAtFollowsTheChanges) {
  EmulatedNode node;
  node.speed = 1;
  node.changes = {{10, 3}, {20, 0.5}};
  EXPECT_EQ(SpeedAt(node, 0), 1);
  EXPECT_EQ(SpeedAt(node, 9.99), 1);
  EXPECT_EQ(SpeedAt(node, 10), 3);  // a change applies from its instant on
  EXPECT_EQ(SpeedAt(node, 19), 3);
  EXPECT_EQ(SpeedAt(node, 1e9), 0.5);
}

struct BadDocument {
  std::string title;
  std::string yaml;
  std::vector<std::string> says;  // substrings the message must contain
};

// Each case is refused as Invalid with a message that starts with `file`
// and the line of its '# <-' marker and says each of its `says`.
void ExpectRefused(const std::vector<BadDocument>& cases, const std::string& file) {
  for (const BadDocument& c : cases) {
    SCOPED_TRACE(c.title);
    auto parsed = ParseScenario(c.yaml, file);
    ASSERT_FALSE(parsed.ok());
    ExpectInvalidAtMarkedLine(parsed.status(), c.yaml, file);
    for (const std::string& part : c.says) {
      EXPECT_NE(parsed.status().message().find(part), std::string::npos)
          << "message does not say '" << part << "': " << parsed.status().message();
    }
  }
}

// A document that is good up to the nodes, which each case supplies.
std::string WithNodes(const std::string& nodes) {
  return "name: t\nworkload:\n  items: 100\n  itemSeconds: 0.1\nnodes:\n" + nodes;
}

TEST(ScenarioTest, BadDocumentsNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"malformed YAML: bad indentation",
       R"(name: t
workload:
  items: 10
 nodes:  # <-
  - {name: a, speed: 1}
)",
       {"not valid YAML"}},
      {"malformed YAML: a key inside a mapping value",
       R"(name: t
workload:
  items: 10
nodes:
  - name: a
    speed: 1
   latency: 2  # <-
)",
       {"not valid YAML"}},
      {"unknown top-level key",
       R"(name: t
workload: {items: 10}
nodez:  # <-
  - {name: a, speed: 1}
)",
       {"unknown field \"nodez\"", "allowed:", "nodes"}},
      {"unknown workload key",
       R"(name: t
workload:
  items: 10
  itemz: 3  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.itemz", "unknown field \"itemz\"", "allowed:"}},
      {"unknown node key",
       WithNodes(R"(  - name: a
    speed: 1
    sped: 2  # <-
)"),
       {"nodes[0].sped", "unknown field \"sped\""}},
      {"negative speed",
       WithNodes(R"(  - name: a
    speed: 1
  - name: b
    speed: -1  # <-
)"),
       {"nodes[1].speed", "expected a speed in [1e-06, 1e+06]", "got -1"}},
      {"zero speed",
       WithNodes(R"(  - name: a
    speed: 0  # <-
)"),
       {"nodes[0].speed", "expected a speed in [1e-06, 1e+06]", "got 0"}},
      {"speed that is not a number",
       WithNodes(R"(  - name: a
    speed: fast  # <-
)"),
       {"nodes[0].speed", "expected a speed in [1e-06, 1e+06]", "got \"fast\""}},
      {"missing speed",
       WithNodes(R"(  - name: a  # <-
    latency: 0.1
)"),
       {"nodes[0]", "speed: missing"}},
      {"missing name",
       WithNodes(R"(  - speed: 1  # <-
)"),
       {"nodes[0]", "name: missing"}},
      {"empty nodes list",
       R"(name: t
workload: {items: 10}
nodes: []  # <-
)",
       {"nodes", "expected a non-empty list"}},
      {"nodes not a list",
       R"(name: t
workload: {items: 10}
nodes: {name: a, speed: 1}  # <-
)",
       {"nodes", "expected a non-empty list"}},
      {"missing nodes",
       R"(name: t  # <-
workload: {items: 10}
)",
       {"nodes: missing"}},
      {"missing items",
       R"(name: t
workload:  # <- (a block map is where its key is)
  itemSeconds: 2
nodes:
  - {name: a, speed: 1}
)",
       {"workload", "items: missing"}},
      {"zero items",
       R"(name: t
workload:
  items: 0  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.items", "expected an integer in [1, "}},
      {"fractional items",
       R"(name: t
workload:
  items: 10.5  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.items", "expected an integer"}},
      {"unknown cost model",
       R"(name: t
workload:
  items: 10
  costModel: cubic  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.costModel", "expected one of uniform, linear, sqrt", "got \"cubic\""}},
      {"jitter of one",
       R"(name: t
workload:
  items: 10
  costJitter: 1  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.costJitter", "expected a number in [0, 1)"}},
      {"unknown transfer",
       R"(name: t
workload:
  items: 10
  transfer: pigeon  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.transfer", "expected stream or block", "got \"pigeon\""}},
      {"unknown policy",
       R"(name: t
workload: {items: 10}
policies:
  - equal
  - roundrobin  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"policies[1]", "got \"roundrobin\"", "expected a policy"}},
      {"unknown policy in a map",
       R"(name: t
workload: {items: 10}
policies:
  - {name: nope, chunk: 3}  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"policies[0]", "got \"nope\""}},
      {"unknown policy option",
       R"(name: t
workload: {items: 10}
policies:
  - name: selfsched
    chunkz: 3  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"policies[0]", "has no option \"chunkz\"", "its options: chunk"}},
      {"policy option out of range",
       R"(name: t
workload: {items: 10}
policies:
  - {name: guided, minChunk: 0}  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"policies[0].minChunk", "expected an integer in [1, "}},
      {"changes not ascending",
       WithNodes(R"(  - name: a
    speed: 1
    changes:
      - {at: 20, speed: 0.5}
      - {at: 20, speed: 2}  # <-
)"),
       {"nodes[0].changes[1].at", "expected a time after 20", "got 20"}},
      {"changes going back in time",
       WithNodes(R"(  - name: a
    speed: 1
    changes: [{at: 5, speed: 2}, {at: 30, speed: 3},
              {at: 10, speed: 1}]  # <-
)"),
       {"nodes[0].changes[2].at", "expected a time after 30"}},
      {"change to a zero speed",
       WithNodes(R"(  - name: a
    speed: 1
    changes:
      - {at: 5, speed: 0}  # <-
)"),
       {"nodes[0].changes[0].speed", "expected a speed in [1e-06, 1e+06]"}},
      {"negative latency",
       WithNodes(R"(  - name: a
    speed: 1
    latency: -0.1  # <-
)"),
       {"nodes[0].latency", "expected seconds in [0, 3600]"}},
      {"zero bandwidth",
       WithNodes(R"(  - name: a
    speed: 1
    bandwidth: 0  # <-
)"),
       {"nodes[0].bandwidth", "expected bytes per second in [1, 1e+15]"}},
      {"negative failAt",
       WithNodes(R"(  - name: a
    speed: 1
    failAt: -3  # <-
)"),
       {"nodes[0].failAt", "expected seconds in [0, 1e+09]"}},
      {"leaveAt before joinAt",
       WithNodes(R"(  - {name: a, speed: 1}
  - name: b
    speed: 1
    joinAt: 10
    leaveAt: 5  # <-
)"),
       {"nodes[1].leaveAt", "expected a time after joinAt (10), got 5"}},
      {"leaveAt at the start",
       WithNodes(R"(  - name: a
    speed: 1
    leaveAt: 0  # <-
)"),
       {"nodes[0].leaveAt", "expected a time after joinAt (0), got 0"}},
      {"failAt before joinAt",
       WithNodes(R"(  - {name: a, speed: 1}
  - name: b
    speed: 1
    joinAt: 10
    failAt: 10  # <-
)"),
       {"nodes[1].failAt", "expected a time after joinAt (10), got 10"}},
      {"negative joinAt",
       WithNodes(R"(  - name: a
    speed: 1
    joinAt: -1  # <-
)"),
       {"nodes[0].joinAt", "expected seconds in [0, 1e+09]"}},
      {"every node joins late",
       R"(name: t
workload: {items: 10}
nodes:  # <-
  - {name: a, speed: 1, joinAt: 5}
  - {name: b, speed: 1, joinAt: 6}
)",
       {"nodes", "every node has joinAt"}},
      {"negative localItems",
       WithNodes(R"(  - name: a
    speed: 1
    localItems: -3  # <-
)"),
       {"nodes[0].localItems", "expected an integer in [0, 1000000000000]"}},
      {"labels not a map",
       WithNodes(R"(  - name: a
    speed: 1
    labels: [a, b]  # <-
)"),
       {"nodes[0].labels", "expected a map"}},
      {"duplicate node name",
       WithNodes(R"(  - {name: a, speed: 1}
  - {name: a, speed: 2}  # <-
)"),
       {"duplicate node name 'a'"}},
      {"negative seed",
       R"(name: t
workload: {items: 10}
seed: -1  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"seed", "expected an integer >= 0"}},
      {"zero failure detection",
       R"(name: t
workload: {items: 10}
failureDetection: 0  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"failureDetection", "expected seconds in [1e-06, 1e+09]"}},
      // Absurd numbers, each refused with the file and line (regressions:
      // latency 1e15 and bytesPerItem 2^64-1 were accepted).
      {"a node named ../x",
       WithNodes(R"(  - name: ../x  # <-
    speed: 1
)"),
       {"nodes[0].name", "expected a DNS-1123 subdomain", "got '../x'"}},
      {"latency of 1e15 seconds",
       WithNodes(R"(  - name: a
    speed: 1
    latency: 1e15  # <-
)"),
       {"nodes[0].latency", "expected seconds in [0, 3600]", "got 1e+15"}},
      {"bytesPerItem of 2^64-1",
       R"(name: t
workload: {items: 10, bytesPerItem: 18446744073709551615}  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.bytesPerItem", "expected bytes in [0, 1e+12]", "got 18446744073709551615"}},
      {"a node's bytesPerItem of 2^64-1",
       WithNodes(R"(  - name: a
    speed: 1
    bytesPerItem: 18446744073709551615  # <-
)"),
       {"nodes[0].bytesPerItem", "expected bytes in [0, 1e+12]"}},
      {"NaN speed",
       WithNodes(R"(  - name: a
    speed: .nan  # <-
)"),
       {"nodes[0].speed", "expected a speed in [1e-06, 1e+06]", "got NaN"}},
      {"infinite speed",
       WithNodes(R"(  - name: a
    speed: .inf  # <-
)"),
       {"nodes[0].speed", "expected a speed in [1e-06, 1e+06]"}},
      {"absurdly small speed",
       WithNodes(R"(  - name: a
    speed: 1e-300  # <-
)"),
       {"nodes[0].speed", "expected a speed in [1e-06, 1e+06]"}},
      {"absurd speed change",
       WithNodes(R"(  - name: a
    speed: 1
    changes: [{at: 5, speed: 1e300}]  # <-
)"),
       {"nodes[0].changes[0].speed", "expected a speed in [1e-06, 1e+06]"}},
      {"infinite change time",
       WithNodes(R"(  - name: a
    speed: 1
    changes: [{at: .inf, speed: 2}]  # <-
)"),
       {"nodes[0].changes[0].at", "expected seconds in [0, 1e+09]"}},
      {"absurd failAt",
       WithNodes(R"(  - name: a
    speed: 1
    failAt: 1e300  # <-
)"),
       {"nodes[0].failAt", "expected seconds in [0, 1e+09]"}},
      {"absurd bandwidth",
       WithNodes(R"(  - name: a
    speed: 1
    bandwidth: 1e300  # <-
)"),
       {"nodes[0].bandwidth", "expected bytes per second in [1, 1e+15]"}},
      {"absurd itemSeconds",
       R"(name: t
workload: {items: 10, itemSeconds: 1e-300}  # <-
nodes:
  - {name: a, speed: 1}
)",
       {"workload.itemSeconds", "expected seconds in [1e-09, 1e+06]"}},
      {"absurd localItems",
       WithNodes(R"(  - name: a
    speed: 1
    localItems: 9223372036854775807  # <-
)"),
       {"nodes[0].localItems", "expected an integer in [0, 1000000000000]"}},
  };
  ExpectRefused(cases, "bad.yaml");
}

// ---------------------------------------------------------------------------
// Items with costs: workload.itemCosts and workload.split.

// A document whose workload is `workload` (lines indented by two).
std::string WithWorkload(const std::string& workload) {
  return "name: t\nworkload:\n" + workload + "nodes:\n  - {name: a, speed: 1}\n";
}

TEST(ScenarioTest, ParetoItemCostsAreDrawnWithTheirSeed) {
  auto parsed = ParseScenario(WithWorkload(R"(  items: 600
  itemCosts: {pareto: {alpha: 1.16, minimum: 2}, seed: 7}
)"),
                              "pareto.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Workload& workload = parsed->workload;
  ASSERT_NE(workload.item_costs, nullptr);
  EXPECT_EQ(*workload.item_costs, ParetoCosts(600, 1.16, 2, 7));
  EXPECT_EQ(workload.split, Split::kCost) << "split by cost is the default";
  EXPECT_EQ(workload.cost, balance::CostShape::kUniform);
}

TEST(ScenarioTest, ParetoItemCostsWithoutASeedTakeTheScenariosAndMinimumOne) {
  auto parsed = ParseScenario(R"(workload:
  items: 50
  itemCosts: {pareto: {alpha: 2}}
  split: count
seed: 9
nodes:
  - {name: a, speed: 1}
)",
                              "pareto.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_NE(parsed->workload.item_costs, nullptr);
  EXPECT_EQ(*parsed->workload.item_costs, ParetoCosts(50, 2, 1, 9));
  EXPECT_EQ(parsed->workload.split, Split::kCount);
}

TEST(ScenarioTest, ItemCostsMayBeListed) {
  auto parsed = ParseScenario(WithWorkload(R"(  items: 3
  itemCosts:
    list: [3, 0.5, 1e9]
)"),
                              "list.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_NE(parsed->workload.item_costs, nullptr);
  EXPECT_EQ(*parsed->workload.item_costs, (std::vector<double>{3, 0.5, 1e9}));
}

// One spelling of item costs: a scenario lists its items as a job does
// (itemsFrom.list, each item's `cost`; a bare value costs 1), and the count is
// the list's.
TEST(ScenarioTest, ItemsAreListedAsAJobListsThem) {
  auto parsed = ParseScenario(WithWorkload(R"(  itemsFrom:
    list: [{value: a.jpg, cost: 3}, {value: b.jpg, cost: 0.5}, c.jpg]
)"),
                              "list.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->workload.items, 3u);
  ASSERT_NE(parsed->workload.item_costs, nullptr);
  EXPECT_EQ(*parsed->workload.item_costs, (std::vector<double>{3, 0.5, 1}));
}

// The true costs, where the declared ones only track them: one number per
// listed item, kept apart from what the policies are told.
TEST(ScenarioTest, TrueCostsAreListedBesideTheDeclaredOnes) {
  auto parsed = ParseScenario(WithWorkload(R"(  itemsFrom:
    list: [{value: text.gz, cost: 1}, {value: noise.gz, cost: 4}]
  trueCosts: [3, 0.5]
)"),
                              "true.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  ASSERT_NE(parsed->workload.item_costs, nullptr);
  EXPECT_EQ(*parsed->workload.item_costs, (std::vector<double>{1, 4}));
  ASSERT_NE(parsed->workload.true_costs, nullptr);
  EXPECT_EQ(*parsed->workload.true_costs, (std::vector<double>{3, 0.5}));
  auto without = ParseScenario(WithWorkload("  items: 2\n"), "plain.yaml");
  ASSERT_TRUE(without.ok()) << without.status().ToString();
  EXPECT_EQ(without->workload.true_costs, nullptr);
}

TEST(ScenarioTest, BadTrueCostsNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"one short",
       WithWorkload("  itemsFrom: {list: [a, b]}\n  trueCosts: [1]  # <-\n"),
       {"workload.trueCosts", "expected a list of 2 positive costs, one per item"}},
      {"not a list",
       WithWorkload("  items: 2\n  trueCosts: 3  # <-\n"),
       {"workload.trueCosts", "expected a list of 2 positive costs"}},
      {"a cost that is no cost",
       WithWorkload("  items: 2\n  trueCosts: [1, -2]  # <-\n"),
       {"workload.trueCosts[1]", "expected a number > 0"}},
      {"too many items to keep one each",
       WithWorkload("  items: 100001\n  trueCosts: [1]  # <-\n"),
       {"workload.trueCosts", "needs items <= 100000 (one cost per item is kept), got 100001"}},
  };
  ExpectRefused(cases, "true.yaml");
}

// The older spelling, itemCosts, is still read and means the same.
TEST(ScenarioTest, TheOlderItemCostsSpellingReadsAsItemsFrom) {
  auto older = ParseScenario(
      WithWorkload("  items: 600\n  itemCosts: {pareto: {alpha: 1.16, minimum: 2}, seed: 7}\n"),
      "old.yaml");
  auto newer = ParseScenario(
      WithWorkload("  items: 600\n  itemsFrom: {pareto: {alpha: 1.16, minimum: 2}, seed: 7}\n"),
      "new.yaml");
  ASSERT_TRUE(older.ok()) << older.status().ToString();
  ASSERT_TRUE(newer.ok()) << newer.status().ToString();
  ASSERT_NE(newer->workload.item_costs, nullptr);
  EXPECT_EQ(*older->workload.item_costs, *newer->workload.item_costs);
  auto listed_older =
      ParseScenario(WithWorkload("  items: 2\n  itemCosts: {list: [3, 1]}\n"), "old.yaml");
  auto listed_newer = ParseScenario(
      WithWorkload("  itemsFrom: {list: [{value: a, cost: 3}, {value: b, cost: 1}]}\n"),
      "new.yaml");
  ASSERT_TRUE(listed_older.ok()) << listed_older.status().ToString();
  ASSERT_TRUE(listed_newer.ok()) << listed_newer.status().ToString();
  EXPECT_EQ(*listed_older->workload.item_costs, *listed_newer->workload.item_costs);
  EXPECT_EQ(listed_older->workload.items, listed_newer->workload.items);
  // The older spelling is read with a warning that names its line and the
  // newer spelling; the newer one warns of nothing.
  ASSERT_EQ(older->warnings.size(), 1u);
  EXPECT_EQ(older->warnings[0].rfind("old.yaml:4:14: workload.itemCosts: the older spelling of "
                                     "workload.itemsFrom",
                                     0),
            0u)
      << older->warnings[0];
  EXPECT_TRUE(newer->warnings.empty());
  EXPECT_TRUE(listed_newer->warnings.empty());
}

TEST(ScenarioTest, BadItemsFromNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"both spellings",
       WithWorkload("  items: 2\n  itemsFrom: {pareto: {alpha: 2}}\n  itemCosts: {pareto: "
                    "{alpha: 2}}  # <-\n"),
       {"workload.itemCosts", "itemCosts is the older spelling of itemsFrom; give one"}},
      {"a count beside the list",
       WithWorkload("  items: 2\n  itemsFrom: {list: [a, b]}  # <-\n"),
       {"workload.itemsFrom",
        "give the items' count (items) or their list (itemsFrom.list), "
        "not both"}},
      {"a bare number, as a job refuses it",
       WithWorkload("  itemsFrom: {list: [a, 2]}  # <-\n"),
       {"workload.itemsFrom.list[1]", "expected a string or {value, cost}"}},
      {"a cost that is no cost",
       WithWorkload("  itemsFrom: {list: [{value: a, cost: 0}]}  # <-\n"),
       {"workload.itemsFrom.list[0].cost", "expected a number > 0"}},
      {"a value a job refuses",
       WithWorkload("  itemsFrom: {list: [\"a\\tb\"]}  # <-\n"),
       {"workload.itemsFrom.list[0].value"}},
      {"an empty list",
       WithWorkload("  itemsFrom: {list: []}  # <-\n"),
       {"workload.itemsFrom.list", "expected a list of 1 to 100000 items"}},
  };
  ExpectRefused(cases, "items.yaml");
}

TEST(ScenarioTest, SplitByCountNeedsNoItemCosts) {
  auto parsed = ParseScenario(WithWorkload("  items: 10\n  costModel: linear\n  split: count\n"),
                              "count.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->workload.item_costs, nullptr);
  EXPECT_EQ(parsed->workload.split, Split::kCount);
  EXPECT_EQ(parsed->workload.cost, balance::CostShape::kLinear);
}

TEST(ScenarioTest, BadItemCostsNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"too many items for generated costs",
       WithWorkload("  items: 100001\n  itemCosts: {pareto: {alpha: 1.2}}  # <-\n"),
       {"workload.itemCosts", "needs items <= 100000 (one cost per item is kept), got 100001"}},
      {"a list too short",
       WithWorkload("  items: 3\n  itemCosts: {list: [1, 2]}  # <-\n"),
       {"workload.itemCosts.list", "expected a list of 3 positive costs, one per item"}},
      {"a zero in the list",
       WithWorkload(R"(  items: 3
  itemCosts:
    list:
      - 1
      - 0  # <-
      - 2
)"),
       {"workload.itemCosts.list[1]", "expected a number > 0, got 0"}},
      {"a NaN in the list",
       WithWorkload("  items: 2\n  itemCosts: {list: [1, .nan]}  # <-\n"),
       {"workload.itemCosts.list[1]", "expected a number > 0, got NaN"}},
      {"both pareto and list",
       WithWorkload("  items: 2\n  itemCosts: {list: [1, 2], pareto: {alpha: 2}}  # <-\n"),
       {"workload.itemCosts", "expected exactly one of pareto, list"}},
      {"neither pareto nor list",
       WithWorkload("  items: 2\n  itemCosts: {seed: 3}  # <-\n"),
       {"workload.itemCosts", "expected exactly one of pareto, list"}},
      {"alpha too small",
       WithWorkload("  items: 2\n  itemCosts: {pareto: {alpha: 0.1}}  # <-\n"),
       {"workload.itemCosts.pareto.alpha", "expected a shape in [0.5, 100], got 0.1"}},
      {"no alpha",
       WithWorkload(R"(  items: 2
  itemCosts:
    pareto: {minimum: 3}  # <-
)"),
       {"workload.itemCosts.pareto.alpha: missing"}},
      {"a zero minimum",
       WithWorkload("  items: 2\n  itemCosts: {pareto: {alpha: 2, minimum: 0}}  # <-\n"),
       {"workload.itemCosts.pareto.minimum", "expected a number > 0 and <= 1e+12, got 0"}},
      {"a negative seed",
       WithWorkload(R"(  items: 2
  itemCosts:
    pareto: {alpha: 2}
    seed: -4  # <-
)"),
       {"workload.itemCosts.seed", "expected an integer >= 0"}},
      {"a seed for a list",
       WithWorkload(R"(  items: 2
  itemCosts:
    list: [1, 2]
    seed: 4  # <-
)"),
       {"workload.itemCosts.seed", "a seed is for pareto, not for a list"}},
      {"item costs and a cost shape",
       WithWorkload("  items: 2\n  costModel: linear\n  itemCosts: {list: [1, 2]}  # <-\n"),
       {"workload.itemCosts", "not with costModel"}},
      {"an unknown key in itemCosts",
       WithWorkload("  items: 2\n  itemCosts: {pareto: {alpha: 2}, sed: 4}  # <-\n"),
       {"workload.itemCosts.sed", "unknown field \"sed\"", "allowed: pareto, list, seed"}},
      {"an unknown key in pareto",
       WithWorkload("  items: 2\n  itemCosts: {pareto: {alpha: 2, min: 1}}  # <-\n"),
       {"workload.itemCosts.pareto.min", "unknown field \"min\""}},
      {"an unknown split",
       WithWorkload("  items: 2\n  split: size  # <-\n"),
       {"workload.split", "expected cost or count, got \"size\""}},
  };
  ExpectRefused(cases, "costs.yaml");
}

// ---------------------------------------------------------------------------
// A quota shared by items at once, and failing items: workload.concurrency,
// sliceOverhead, retries, failingItems and nodes[].cores.

TEST(ScenarioTest, QuotaAndFailingItemsArrive) {
  auto parsed = ParseScenario(R"(name: t
workload:
  items: 60
  concurrency: 2
  sliceOverhead: 0.1
  retries: 2
  failingItems: [{item: 9, attemptSeconds: 0.2}, {item: 3, attemptSeconds: 1}]
nodes:
  - {name: a, speed: 0.5, cores: 0.5}
  - {name: b, speed: 1}
)",
                              "quota.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  const Workload& w = parsed->workload;
  EXPECT_EQ(w.concurrency, 2u);
  EXPECT_DOUBLE_EQ(w.slice_overhead, 0.1);
  EXPECT_EQ(w.retries, 2u);
  ASSERT_EQ(w.failing_items.size(), 2u);
  EXPECT_EQ(w.failing_items[0].item, 3u);  // sorted by item
  EXPECT_DOUBLE_EQ(w.failing_items[0].attempt_seconds, 1);
  EXPECT_EQ(w.failing_items[1].item, 9u);
  EXPECT_EQ(parsed->nodes[0].cores, 0.5);
  EXPECT_FALSE(parsed->nodes[1].cores.has_value());
}

TEST(ScenarioTest, QuotaFieldsDefaultToOneItemAtATimeAndNoFailures) {
  auto parsed = ParseScenario(WithWorkload("  items: 5\n"), "t.yaml");
  ASSERT_TRUE(parsed.ok()) << parsed.status().ToString();
  EXPECT_EQ(parsed->workload.concurrency, 0u);
  EXPECT_EQ(parsed->workload.slice_overhead, 0);
  EXPECT_EQ(parsed->workload.retries, 0u);
  EXPECT_TRUE(parsed->workload.failing_items.empty());
  EXPECT_FALSE(parsed->nodes[0].cores.has_value());
}

struct AtOnceCase {
  std::string title;
  std::optional<double> cores;
  uint32_t concurrency;
  int items;
  double share;
  double overhead;
};

TEST(ScenarioTest, AtOnceFollowsTheWorkersRule) {
  // sliceOverhead 0.1 throughout: it counts only with more items than
  // started cores.
  const std::vector<AtOnceCase> cases = {
      {"no quota: one item at a time", std::nullopt, 0, 1, 1, 0},
      {"no quota, concurrency 2: each on a core", std::nullopt, 2, 2, 1, 0},
      {"half a core: one per started core", 0.5, 0, 1, 1, 0},
      {"half a core, concurrency 2: time-sliced", 0.5, 2, 2, 1, 0.1},
      {"1.5 cores: two started", 1.5, 0, 2, 1, 0},
      {"four cores, concurrency 1: three idle", 4, 1, 1, 0.25, 0},
      {"two cores, concurrency 3", 2, 3, 3, 1, 0.1},
  };
  for (const AtOnceCase& c : cases) {
    SCOPED_TRACE(c.title);
    EmulatedNode node;
    node.cores = c.cores;
    Workload workload;
    workload.concurrency = c.concurrency;
    workload.slice_overhead = 0.1;
    const ItemsAtOnceModel model = AtOnce(node, workload);
    EXPECT_EQ(model.items, c.items);
    EXPECT_DOUBLE_EQ(model.share, c.share);
    EXPECT_DOUBLE_EQ(model.overhead, c.overhead);
    EXPECT_DOUBLE_EQ(model.throughput(), c.share / (1 + c.overhead));
  }
}

TEST(ScenarioTest, BadQuotaAndFailingItemsNameFileLineAndExpectation) {
  const std::vector<BadDocument> cases = {
      {"concurrency zero",
       WithWorkload("  items: 2\n  concurrency: 0  # <-\n"),
       {"workload.concurrency", "expected an integer in [1, 256], got 0"}},
      {"concurrency too high",
       WithWorkload("  items: 2\n  concurrency: 257  # <-\n"),
       {"workload.concurrency", "expected an integer in [1, 256]"}},
      {"a negative slice overhead",
       WithWorkload("  items: 2\n  sliceOverhead: -0.1  # <-\n"),
       {"workload.sliceOverhead", "expected a fraction in [0, 10], got -0.1"}},
      {"retries past exec's bound",
       WithWorkload("  items: 2\n  retries: 101  # <-\n"),
       {"workload.retries", "expected an integer in [0, 100], got 101"}},
      {"failingItems not a list",
       WithWorkload("  items: 2\n  failingItems: 3  # <-\n"),
       {"workload.failingItems", "expected a list of at most 1000 {item, attemptSeconds}"}},
      {"a failing item past the workload",
       WithWorkload("  items: 2\n  failingItems: [{item: 2, attemptSeconds: 1}]  # <-\n"),
       {"workload.failingItems[0].item", "expected an integer in [0, 1], got 2"}},
      {"a failing item twice",
       WithWorkload(R"(  items: 4
  failingItems:
    - {item: 1, attemptSeconds: 1}
    - {item: 1, attemptSeconds: 2}  # <-
)"),
       {"workload.failingItems[1].item", "item 1 is already listed"}},
      {"a failing item without its attempt's seconds",
       WithWorkload("  items: 2\n  failingItems: [{item: 1}]  # <-\n"),
       {"workload.failingItems[0].attemptSeconds: missing"}},
      {"an attempt of no time",
       WithWorkload("  items: 2\n  failingItems: [{item: 1, attemptSeconds: 0}]  # <-\n"),
       {"workload.failingItems[0].attemptSeconds", "expected seconds in [1e-09, 1e+06], got 0"}},
      {"an unknown key in a failing item",
       WithWorkload("  items: 2\n  failingItems: [{item: 1, fails: true}]  # <-\n"),
       {"workload.failingItems[0].fails", "unknown field \"fails\""}},
      {"zero cores",
       "name: t\nworkload: {items: 2}\nnodes:\n  - {name: a, speed: 1, cores: 0}  # <-\n",
       {"nodes[0].cores", "expected cores in [1e-06, 1e+06], got 0"}},
  };
  ExpectRefused(cases, "quota.yaml");
}

TEST(ScenarioTest, AnEmptyDocumentIsInvalidAndNamesTheFile) {
  auto parsed = ParseScenario("", "empty.yaml");
  ASSERT_FALSE(parsed.ok());
  EXPECT_EQ(parsed.status().code(), StatusCode::kInvalid);
  EXPECT_EQ(parsed.status().message().rfind("empty.yaml", 0), 0u) << parsed.status().message();
  EXPECT_NE(parsed.status().message().find("expected an object"), std::string::npos)
      << parsed.status().message();
}

TEST(ScenarioTest, ShippedExampleScenariosParse) {
  const std::filesystem::path dir =
      std::filesystem::path(BALLAST_SOURCE_DIR) / "examples/scenarios";
  int count = 0;
  for (const auto& entry : std::filesystem::directory_iterator(dir)) {
    if (entry.path().extension() != ".yaml") continue;
    SCOPED_TRACE(entry.path().string());
    std::ifstream in(entry.path());
    std::stringstream text;
    text << in.rdbuf();
    auto parsed = ParseScenario(text.str(), entry.path().filename().string());
    EXPECT_TRUE(parsed.ok()) << parsed.status().ToString();
    ++count;
  }
  EXPECT_GT(count, 0);
}

}  // namespace
}  // namespace ballast::sim
