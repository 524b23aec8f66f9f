// Tests of `ballast simulate` (cli/simulate/simulate_command.cc) on a scenario whose
// items carry costs: one run shows split by cost beside split by count, with
// the physical limit, in the table and in JSON.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

#include "tests/support/shell_command.h"

namespace ballast::cli {
namespace {

std::pair<int, std::string> RunSimulate(const std::string& scenario, const std::string& flags) {
  return testing::RunShellCommand(std::string(BALLAST_BINARY) + " simulate " + BALLAST_SOURCE_DIR +
                                  "/examples/scenarios/" + scenario + " " + flags + " 2>/dev/null");
}

TEST(SimulateCliTest, ItemCostsShowSplitByCostBesideSplitByCount) {
  const auto [code, out] = RunSimulate("pareto-files.yaml", "--policies weighted,adaptive -o json");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["split"], "cost");
  const auto& cost = json["results"];
  const auto& count = json["other_split"]["results"];
  EXPECT_EQ(json["other_split"]["split"], "count");
  ASSERT_EQ(cost.size(), 2u);
  ASSERT_EQ(count.size(), 2u);
  for (size_t i = 0; i < cost.size(); ++i) {
    EXPECT_EQ(cost[i]["policy"], count[i]["policy"]);
    EXPECT_EQ(cost[i]["ideal_s"], count[i]["ideal_s"]) << "the true costs are the same";
  }
  EXPECT_LT(cost[0]["makespan_s"].get<double>(), count[0]["makespan_s"].get<double>())
      << "weighted, split by cost, ends first on the shipped example";
}

TEST(SimulateCliTest, TheTablePrintsBothSplitsWithTheLimit) {
  const auto [code, out] = RunSimulate("pareto-files.yaml", "--policies weighted");
  ASSERT_EQ(code, 0) << out;
  EXPECT_NE(out.find("600 items (item costs, split by cost)"), std::string::npos) << out;
  EXPECT_NE(out.find("split by cost beside split by count"), std::string::npos) << out;
  for (const char* column : {"by_cost_s", "by_count_s", "ideal_s", "eff_cost", "eff_count"}) {
    EXPECT_NE(out.find(column), std::string::npos) << column << "\n" << out;
  }
}

// Told the costs, the runs are also dealt largest first and as listed; each
// policy's own run is dealt in its order. On the shipped Pareto files
// adaptive, dealt largest first (its order), ends within 1 % of the limit,
// and as listed 19 % above it (docs/simulator.md).
TEST(SimulateCliTest, ItemCostsAreAlsoDealtLargestFirstAndAsListed) {
  const auto [code, out] = RunSimulate("pareto-files.yaml", "--policies guided,adaptive -o json");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  const auto& run = json["results"];
  const auto& largest = json["largest_first"]["results"];
  const auto& listed = json["as_listed"]["results"];
  ASSERT_EQ(largest.size(), 2u);
  ASSERT_EQ(listed.size(), 2u);
  EXPECT_EQ(run[0]["makespan_s"], listed[0]["makespan_s"]) << "guided deals as listed";
  EXPECT_EQ(run[1]["makespan_s"], largest[1]["makespan_s"]) << "adaptive deals largest first";
  EXPECT_EQ(largest[1]["ideal_s"], listed[1]["ideal_s"]) << "the same items and true costs";
  EXPECT_GT(largest[1]["efficiency"].get<double>(), 0.99);
  EXPECT_LT(listed[1]["efficiency"].get<double>(), 0.85);
  const auto [table_code, table] = RunSimulate("pareto-files.yaml", "--policies adaptive");
  ASSERT_EQ(table_code, 0) << table;
  EXPECT_NE(table.find("dealt largest first beside as listed"), std::string::npos) << table;
}

TEST(SimulateCliTest, AScenarioWithoutItemCostsRunsOnce) {
  const auto [code, out] = RunSimulate("pi-mixed-rack.yaml", "--policies weighted -o json");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  EXPECT_EQ(json["results"].size(), 1u);
  EXPECT_FALSE(json.contains("other_split"));
  const auto [table_code, table] = RunSimulate("pi-mixed-rack.yaml", "--policies weighted");
  ASSERT_EQ(table_code, 0) << table;
  EXPECT_NE(table.find("(linear cost)"), std::string::npos) << table;
  EXPECT_EQ(table.find("split by"), std::string::npos) << table;
}

// The shipped quota scenario: every run has the ideal packing beside the
// limit, at or above it (docs/simulator.md, "A quota shared by items at once").
TEST(SimulateCliTest, TheIdealPackingIsPrintedBesideTheLimit) {
  const auto [code, out] = RunSimulate("quota-boards.yaml", "--policies adaptive -o json");
  ASSERT_EQ(code, 0) << out;
  const auto json = nlohmann::json::parse(out);
  const auto& result = json["results"][0];
  EXPECT_GE(result["packing_s"].get<double>(), result["ideal_s"].get<double>() - 1e-9);
  EXPECT_EQ(result["failed_items"], 0);
  EXPECT_EQ(result["job_failed"], false);
  const auto [table_code, table] = RunSimulate("quota-boards.yaml", "--policies adaptive");
  ASSERT_EQ(table_code, 0) << table;
  EXPECT_NE(table.find("ideal packing"), std::string::npos) << table;
}

}  // namespace
}  // namespace ballast::cli
