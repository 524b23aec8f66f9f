#include "operator/controller/job_status.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

TEST(SetCondition, TransitionTimeMovesOnlyWhenTheStatusFlips) {
  json status = json::object();
  EXPECT_TRUE(SetCondition(status, {"Ready", false, "Starting", "waiting"}, 1, "t1"));
  EXPECT_FALSE(SetCondition(status, {"Ready", false, "Starting", "waiting"}, 1, "t2"));
  // A new reason or message is a change, but not a transition.
  EXPECT_TRUE(SetCondition(status, {"Ready", false, "Pulling", "still waiting"}, 1, "t3"));
  EXPECT_EQ(status["conditions"][0]["lastTransitionTime"], "t1");
  EXPECT_TRUE(SetCondition(status, {"Ready", true, "WorkersRunning", "3 of 3"}, 2, "t4"));
  const json& ready = status["conditions"][0];
  EXPECT_EQ(ready["status"], "True");
  EXPECT_EQ(ready["lastTransitionTime"], "t4");
  EXPECT_EQ(ready["observedGeneration"], 2);
  EXPECT_TRUE(ConditionTrue(status, "Ready"));
  EXPECT_FALSE(ConditionTrue(status, "Complete"));
  EXPECT_TRUE(SetCondition(status, {"Complete", true, "AllItemsFinished", "done"}, 2, "t5"));
  EXPECT_EQ(status["conditions"].size(), 2u);
}

TEST(StatusPatch, CarriesChangedKeysAndNullsRemovedOnes) {
  const json from = {{"phase", "Running"}, {"progress", "10%"}, {"checkpoint", {{"a", 1}}}};
  const json to = {{"phase", "Succeeded"}, {"progress", "10%"}, {"efficiency", 0.9}};
  EXPECT_EQ(StatusPatch(from, to),
            (json{{"phase", "Succeeded"}, {"efficiency", 0.9}, {"checkpoint", nullptr}}));
  EXPECT_TRUE(StatusPatch(to, to).empty());
  EXPECT_EQ(StatusPatch(json::object(), {{"phase", "Pending"}}), (json{{"phase", "Pending"}}));
}

TEST(ProgressText, RoundsDownAndSaysHundredOnlyWhenDone) {
  EXPECT_EQ(ProgressText(0, 150000), "0%");
  EXPECT_EQ(ProgressText(149999, 150000), "99%");
  EXPECT_EQ(ProgressText(150000, 150000), "100%");
  EXPECT_EQ(ProgressText(0, 0), "0%");
  EXPECT_EQ(ProgressText(uint64_t{1} << 49, uint64_t{1} << 50), "50%");
}

}  // namespace
}  // namespace ballast::controller
