// Tests of `ballast simulate` (cli/simulate_command.cc) on a scenario whose
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

}  // namespace
}  // namespace ballast::cli
