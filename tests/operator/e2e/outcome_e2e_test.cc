// `ballast operator` end to end on what a user is told (docs/crds.md,
// "Failed items", "Conditions", "Timing"): an exec job whose item fails all
// its attempts fails by default once every other item ran, naming the item,
// with an ItemsFailed Warning; within spec.failurePolicy.maxFailedItems it completes, saying so;
// a job has a phase from its first status on, and a finished one has
// Complete (or Failed) and no Ready condition, with its time end to end
// split from its compute.
#include <iostream>
#include <string>

#include "tests/operator/e2e/operator_e2e_support.h"

namespace ballast::operator_e2e {
namespace {

// An exec job of `items` items, one run per item, whose item 7 exits 3 on
// each of its 2 attempts.
json ItemSevenFails(const std::string& name, int items) {
  json job = PrimesJob(name, 1000);
  job["spec"]["workload"] = {
      {"exec",
       {{"command", json::array({"sh", "-c", R"([ "$BALLAST_ITEM" != 7 ] || exit 3)"})},
        {"perItem", true},
        {"retries", 1}}}};
  job["spec"]["items"] = items;
  return job;
}

bool HasFinished(const json& job) {
  const std::string phase = PhaseOf(job);
  return phase == "Succeeded" || phase == "Failed";
}

TEST_F(OperatorTest, AnItemThatFailsAllItsAttemptsFailsTheJobAfterTheRestNamingIt) {
  const std::string name = "item-fails";
  ASSERT_FALSE(CreateJob(ItemSevenFails(name, 40)).is_null());
  auto done = WaitForJob(name, HasFinished, seconds(120), "job item-fails to finish");
  ASSERT_TRUE(done);
  const json status = StatusOf(*done);
  EXPECT_EQ(status.value("phase", ""), "Failed") << Describe(name);
  EXPECT_EQ(status.value("failedItems", 0), 1) << status.dump();
  EXPECT_EQ(status.value("/result/exec/succeeded"_json_pointer, 0), 39)
      << "every other item ran: " << status.dump();
  const json failed = ConditionOf(*done, "Failed");
  EXPECT_EQ(failed.value("status", ""), "True") << failed.dump();
  EXPECT_EQ(failed.value("reason", ""), "FailedItems") << failed.dump();
  EXPECT_EQ(failed.value("message", ""),
            "1 of 40 items failed all attempts; the other 39 finished and their merged result is "
            "in status.result (set failurePolicy.maxFailedItems to tolerate failed items): item 7 "
            "(exit code 3 after 2 attempts)");
  EXPECT_EQ(ConditionOf(*done, "Ready"), json::object()) << "a finished job has no Ready";
  EXPECT_EQ(ConditionOf(*done, "Complete"), json::object());
  const auto warning = WaitEvent(name, "ItemsFailed");
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->value("type", ""), "Warning");
  EXPECT_NE(warning->value("message", "").find("item 7 (exit code 3 after 2 attempts)"),
            std::string::npos)
      << warning->dump();
  EXPECT_FALSE(FindEvent(name, "Completed")) << "no Completed event for a failed job";
}

TEST_F(OperatorTest, FailedItemsWithinThePolicyCompleteTheJobWithAWarning) {
  const std::string name = "item-tolerated";
  json job = ItemSevenFails(name, 24);
  job["spec"]["failurePolicy"] = {{"maxFailedItems", 2}};
  ASSERT_FALSE(CreateJob(job).is_null());
  auto done = WaitForJob(name, HasFinished, seconds(120), "job item-tolerated to finish");
  ASSERT_TRUE(done);
  const json status = StatusOf(*done);
  ASSERT_EQ(status.value("phase", ""), "Succeeded") << Describe(name);
  EXPECT_EQ(status.value("failedItems", 0), 1);
  EXPECT_EQ(status.value("/result/exec/succeeded"_json_pointer, 0), 23) << status.dump();
  const json complete = ConditionOf(*done, "Complete");
  EXPECT_EQ(complete.value("status", ""), "True") << complete.dump();
  EXPECT_EQ(complete.value("reason", ""), "CompletedWithFailedItems") << complete.dump();
  EXPECT_NE(complete.value("message", "").find("item 7 (exit code 3 after 2 attempts)"),
            std::string::npos)
      << complete.dump();
  EXPECT_EQ(ConditionOf(*done, "Ready"), json::object());
  EXPECT_EQ(ConditionOf(*done, "Failed"), json::object());
  const auto completed = WaitEvent(name, "Completed");
  ASSERT_TRUE(completed);
  EXPECT_EQ(completed->value("type", ""), "Warning") << "not reported as a plain success";
  EXPECT_EQ(completed->value("message", "").rfind("23 of 24 items succeeded, 1 failed", 0), 0u)
      << completed->dump();
  const auto warning = WaitEvent(name, "ItemsFailed");
  ASSERT_TRUE(warning);
  EXPECT_EQ(warning->value("type", ""), "Warning");
}

// The first status a watcher sees has a phase; the end has Complete, not
// Ready=False; the time end to end is the compute plus its named parts.
TEST_F(OperatorTest, AJobHasAPhaseFromItsFirstStatusAndEndsCompleteWithItsTiming) {
  const std::string name = "told";
  ASSERT_FALSE(CreateJob(PrimesJob(name, 20000)).is_null());
  auto first = WaitForJob(
      name, [](const json& job) { return !StatusOf(job).empty(); }, seconds(30),
      "job told's first status");
  ASSERT_TRUE(first);
  EXPECT_NE(PhaseOf(*first), "") << StatusOf(*first).dump();
  auto done = WaitSucceeded(name);
  ASSERT_TRUE(done);
  ExpectCompleteAndExact(*done, 20000);
  EXPECT_EQ(ConditionOf(*done, "Ready"), json::object()) << StatusOf(*done).dump();
  EXPECT_EQ(ConditionOf(*done, "Progressing").value("status", ""), "False");
  EXPECT_EQ(StatusOf(*done).value("failedItems", -1), 0);
  const auto accepted = WaitEvent(name, "Accepted");
  ASSERT_TRUE(accepted);
  EXPECT_EQ(accepted->value("type", ""), "Normal") << accepted->dump();

  // A job this short can succeed before the pod cache shows its pods
  // started: the timing is completed from them while the session lingers
  // (at most until its pods are done), in a later status write.
  done = WaitForJob(
      name,
      [](const json& job) {
        return StatusOf(job).contains(
            "/timing/beforeFirstReport/containerStartSeconds"_json_pointer);
      },
      seconds(40), "job told's timing to name its container start");
  ASSERT_TRUE(done);
  const json timing = StatusOf(*done).value("timing", json::object());
  std::cout << "status.timing " << timing.dump() << "\nstatus.efficiencyNote "
            << StatusOf(*done).value("efficiencyNote", "") << "\n";
  for (const auto& [key, value] : timing.items()) {
    ASSERT_FALSE(value.is_null()) << key << " in " << timing.dump();
  }
  const double end_to_end = timing.value("endToEndSeconds", 0.0);
  const double compute = timing.value("computeSeconds", 0.0);
  EXPECT_GT(compute, 0) << timing.dump();
  EXPECT_GE(end_to_end, compute) << timing.dump();
  double parts = 0;
  const json before = timing.value("beforeFirstReport", json::object());
  for (const auto& [key, seconds] : before.items()) {
    EXPECT_GE(seconds.get<double>(), 0) << key;
    parts += seconds.get<double>();
  }
  // Each figure is rounded to a millisecond.
  EXPECT_NEAR(parts + compute, end_to_end, 0.01) << timing.dump();
  // The node agent keeps PodScheduled (set by the binding) and gives each
  // container its startedAt, but makes no sandbox (no PodReadyToStartContainers).
  for (const char* key : {"operatorSeconds", "waitingForNodesSeconds", "podSchedulingSeconds",
                          "containerStartSeconds", "workerStartSeconds"}) {
    EXPECT_TRUE(before.contains(key)) << key << " in " << timing.dump();
  }
  EXPECT_GT(timing.value("computeEfficiency", 0.0), 0) << timing.dump();
  EXPECT_NE(StatusOf(*done).value("efficiencyNote", "").find(" s end to end, "), std::string::npos)
      << StatusOf(*done).dump();
}

}  // namespace
}  // namespace ballast::operator_e2e
