// The progress answer (core/protocol/progress.h): what the coordinator
// writes reads back equal, and what a peer may send instead is refused
// naming its field, within the answer's bounds.
#include "core/protocol/progress.h"

#include <gtest/gtest.h>

#include "core/protocol/messages.h"

namespace ballast::protocol {
namespace {

JobProgress Sample() {
  JobProgress progress;
  progress.job = "jobs.convert";
  progress.items = 59;
  progress.completed = 12;
  progress.total_cost = 291;
  progress.completed_cost = 51.8;
  progress.node_count = 3;
  progress.reporting = 2;
  progress.steals = 2;
  progress.cost_model = ProgressCostModel{0.4, 12, 0.31, 0.12};
  progress.nodes = {{"pi4b-0", 5, 8, 40.5, 0.25, 1.3, 1}, {"pi3b-0", 1, 4, 11.3, 0.1, 0.3, 1}};
  return progress;
}

// What the reader makes of `text`: its error's message, "" when it reads.
std::string ErrorOf(std::string_view text) {
  auto json = ParseJsonText(text);
  if (!json.ok()) return json.status().message();
  auto progress = ParseJobProgress(*json);
  return progress.ok() ? "" : progress.status().message();
}

TEST(ProgressMessageTest, WhatGoesOutComesBackAsItWas) {
  const JobProgress sent = Sample();
  auto read = ParseJobProgress(nlohmann::json::parse(ToJson(sent).dump()));
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(*read, sent);
  JobProgress bare = sent;
  bare.cost_model.reset();
  bare.cost_model = ProgressCostModel{0, 3, std::nullopt, std::nullopt};
  read = ParseJobProgress(ToJson(bare));
  ASSERT_TRUE(read.ok());
  EXPECT_EQ(*read, bare);
}

TEST(ProgressMessageTest, TheLeastAnswerAndUnknownFieldsRead) {
  EXPECT_EQ(ErrorOf(R"({"job": "a.b", "items": 5, "completed": 0})"), "");
  EXPECT_EQ(ErrorOf(R"({"job": "a.b", "items": 5, "completed": 1, "newer": {"x": 1},
                        "nodes": [{"name": "n", "later": true}]})"),
            "");
}

TEST(ProgressMessageTest, AMalformedAnswerNamesItsField) {
  EXPECT_EQ(ErrorOf("[]"), "document: expected an object, got []");
  EXPECT_EQ(ErrorOf(R"({"items": 5, "completed": 0})"), "job: missing");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": -5, "completed": 0})"),
            "items: expected a whole number >= 0, got -5");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 6})"),
            "completed: expected at most items (5), got 6");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "completedCost": -1})"),
            "completedCost: expected a finite number >= 0, got -1");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "nodes": {}})"),
            "nodes: expected a list, got {}");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "nodeCount": 1,
                        "nodes": [{"name": "n", "cost": "x"}]})"),
            "nodes[0].cost: expected a finite number >= 0, got \"x\"");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "nodes": [{"name": ""}]})"),
            "nodes[0].name: expected a node name of 1 to 253 bytes, got \"\"");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "nodes": [{"name": "n"}],
                        "nodeCount": 0})"),
            "nodeCount: expected at least the rows (1), got 0");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "nodeCount": 2, "reporting": 3})"),
            "reporting: expected at most nodeCount (2), got 3");
  EXPECT_EQ(ErrorOf(R"({"job": "a", "items": 5, "completed": 1, "costModel": {"startCost": 1,
                        "secondsPerCost": true}})"),
            "costModel.secondsPerCost: expected a finite number >= 0, got true");
}

TEST(ProgressMessageTest, MoreRowsThanTheBoundAreRefused) {
  JobProgress progress = Sample();
  progress.nodes.assign(kMaxProgressNodes + 1, NodeProgress{"n", 1, 1, 1, 1, 1, 0});
  progress.node_count = progress.nodes.size();
  auto read = ParseJobProgress(ToJson(progress));
  ASSERT_FALSE(read.ok());
  EXPECT_EQ(read.status().message(), "nodes: expected at most 100 rows, got 101");
  progress.nodes.resize(kMaxProgressNodes);
  EXPECT_TRUE(ParseJobProgress(ToJson(progress)).ok());
  progress.nodes[0].name.assign(kMaxProgressNameBytes + 1, 'n');
  EXPECT_FALSE(ParseJobProgress(ToJson(progress)).ok());
}

}  // namespace
}  // namespace ballast::protocol
