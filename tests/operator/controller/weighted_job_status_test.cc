// WeightedJobStatus (operator/controller/weighted_job.h): it serializes to
// exactly the JSON of the CRD's status schema, reads it back, refuses a field
// of the wrong type naming it, and sets conditions as metav1.Condition wants.
#include <gtest/gtest.h>

#include "operator/controller/weighted_job.h"

namespace ballast::controller {
namespace {

using nlohmann::json;

// Every field the CRD declares, as tests/operator/crds/operator_e2e_crds_status.sh
// writes them (with a finished job's figures).
const json kFullStatus = json::parse(R"({
  "phase": "Running", "observedGeneration": 1,
  "conditions": [
    {"type": "Ready", "status": "True", "reason": "WorkersRunning", "message": "3 workers",
     "lastTransitionTime": "2026-11-22T10:00:00Z", "observedGeneration": 1}],
  "nodes": [
    {"name": "pi4b-0", "weight": 5.0, "score": 0.975, "estimatedSpeed": 1200.5, "items": 30000,
     "steals": 1, "pod": "primes-pi4b-0",
     "prior": {"source": "blended", "value": 4.5, "samples": 2.5, "ageSeconds": 3600},
     "measuredSpeed": 1180.25, "priorError": -0.031}],
  "excludedNodes": [
    {"name": "pi3b-0", "reason": "ErrImageNeverPull", "message": "image not present"}],
  "progress": "42%", "completedItems": 63000, "items": 150000, "workers": 3, "failedPods": 0,
  "result": {"primes": {"count": 12000, "sum": "0x00000000075bcd15"}},
  "startTime": "2026-11-22T10:00:00Z", "completionTime": "2026-11-22T10:00:12Z",
  "makespanSeconds": 12.5, "idealSeconds": 11.6, "efficiency": 0.93,
  "nominalIdealSeconds": 7.1, "nominalEfficiency": 0.57,
  "checkpoint": {"completed": [[0, 63000]], "result": {"primes": {"count": 12000}}}
})");

TEST(WeightedJobStatusTest, EveryDeclaredFieldRoundTripsExactly) {
  auto status = StatusFromJson(kFullStatus);
  ASSERT_TRUE(status.ok()) << status.status().ToString();
  EXPECT_EQ(status->phase, JobPhase::kRunning);
  EXPECT_EQ(status->conditions.at(0).reason, Reason::kWorkersRunning);
  EXPECT_TRUE(status->conditions.at(0).status);
  EXPECT_EQ(status->failed_pods, 0);
  EXPECT_EQ(status->nodes->at(0).steals, 1u);
  EXPECT_EQ(status->nominal_efficiency, 0.57);
  EXPECT_EQ(status->excluded_nodes.at(0).reason, "ErrImageNeverPull");
  EXPECT_EQ(status->nodes->at(0).prior->source, "blended");
  EXPECT_EQ(status->nodes->at(0).prior->age_seconds, 3600);
  EXPECT_EQ(status->nodes->at(0).prior_error, -0.031);
  EXPECT_EQ(StatusToJson(*status), kFullStatus);
}

TEST(WeightedJobStatusTest, AbsentFieldsStayAbsent) {
  EXPECT_EQ(StatusToJson(WeightedJobStatus{}), json::object());
  auto empty = StatusFromJson(json());
  ASSERT_TRUE(empty.ok());
  EXPECT_EQ(*empty, WeightedJobStatus{});
  WeightedJobStatus pending;
  pending.phase = JobPhase::kPending;
  EXPECT_EQ(StatusToJson(pending), (json{{"phase", "Pending"}}));
}

TEST(WeightedJobStatusTest, AFieldOfTheWrongTypeIsRefusedByPath) {
  const std::pair<json, std::string> cases[] = {
      {{{"failedPods", "two"}}, "status.failedPods: expected an integer >= 0, got \"two\""},
      {{{"nodes", {{{"name", "n"}, {"items", -1}}}}},
       "status.nodes[0].items: expected an integer >= 0, got -1"},
      {{{"conditions", {{{"type", 7}}}}}, "status.conditions[0].type: expected a string, got 7"},
      {{{"excludedNodes", {{{"name", "n"}, {"reason", 3}}}}},
       "status.excludedNodes[0].reason: expected a string, got 3"},
      {{{"nodes", {{{"name", "n"}, {"prior", {{"value", "high"}}}}}}},
       "status.nodes[0].prior.value: expected a number, got \"high\""},
      {{{"nodes", {{{"name", "n"}, {"prior", 1}}}}},
       "status.nodes[0].prior: expected a prior object, got 1"},
      {{{"nodes", {{{"name", "n"}, {"measuredSpeed", true}}}}},
       "status.nodes[0].measuredSpeed: expected a number, got true"},
      {{{"checkpoint", "all"}}, "status.checkpoint: expected an object, got \"all\""},
      {{{"efficiency", "high"}}, "status.efficiency: expected a number, got \"high\""},
  };
  for (const auto& [status, message] : cases) {
    auto parsed = StatusFromJson(status);
    ASSERT_FALSE(parsed.ok()) << status.dump();
    EXPECT_EQ(parsed.status().message(), message);
  }
}

TEST(WeightedJobStatusTest, ConditionTransitionTimeMovesOnlyWhenTheStatusFlips) {
  WeightedJobStatus status;
  auto ready = [](bool value, Reason reason, const char* message) {
    return StatusCondition{ConditionType::kReady, value, reason, message, 0, ""};
  };
  EXPECT_TRUE(SetCondition(status, ready(false, Reason::kNoEligibleNodes, "waiting"), 1, "t1"));
  EXPECT_FALSE(SetCondition(status, ready(false, Reason::kNoEligibleNodes, "waiting"), 1, "t2"));
  // A new reason or message is a change, but not a transition.
  EXPECT_TRUE(
      SetCondition(status, ready(false, Reason::kWaitingForWorkers, "still waiting"), 1, "t3"));
  EXPECT_EQ(status.conditions[0].last_transition_time, "t1");
  EXPECT_TRUE(SetCondition(status, ready(true, Reason::kWorkersRunning, "3 of 3"), 2, "t4"));
  EXPECT_TRUE(status.conditions[0].status);
  EXPECT_EQ(status.conditions[0].last_transition_time, "t4");
  EXPECT_EQ(status.conditions[0].observed_generation, 2);
  EXPECT_TRUE(SetCondition(
      status, {ConditionType::kComplete, true, Reason::kAllItemsFinished, "done", 0, ""}, 2, "t5"));
  EXPECT_EQ(status.conditions.size(), 2u);
}

// Phases, condition types and reasons are enums; their names are what
// Kubernetes users see. A phase no version writes is refused; a condition
// of a type or reason this operator does not know is dropped, not fatal.
TEST(WeightedJobStatusTest, PhasesConditionTypesAndReasonsAreEnumsWrittenByName) {
  for (JobPhase phase : {JobPhase::kPending, JobPhase::kRunning, JobPhase::kSucceeded,
                         JobPhase::kFailed, JobPhase::kSuspended}) {
    EXPECT_EQ(JobPhaseNamed(JobPhaseName(phase)), phase);
  }
  for (int i = 0; i <= static_cast<int>(Reason::kArchitectureNotSupported); ++i) {
    const auto reason = static_cast<Reason>(i);
    EXPECT_EQ(ReasonNamed(ReasonName(reason)), reason) << ReasonName(reason);
  }
  EXPECT_EQ(ConditionTypeNamed("Progressing"), ConditionType::kProgressing);
  EXPECT_FALSE(ReasonNamed("Starting"));
  auto odd = StatusFromJson(
      {{"phase", "Failed"},
       {"conditions",
        {{{"type", "Ready"}, {"status", "False"}, {"reason", "FromTheFuture"}},
         {{"type", "Healthy"}, {"status", "True"}, {"reason", "Completed"}},
         {{"type", "Failed"}, {"status", "True"}, {"reason", "DeadlineExceeded"}}}}});
  ASSERT_TRUE(odd.ok()) << odd.status().ToString();
  ASSERT_EQ(odd->conditions.size(), 1u);
  EXPECT_EQ(odd->conditions[0].type, ConditionType::kFailed);
  EXPECT_EQ(odd->conditions[0].reason, Reason::kDeadlineExceeded);
  auto unknown = StatusFromJson({{"phase", "Exploded"}});
  ASSERT_FALSE(unknown.ok());
  EXPECT_EQ(unknown.status().message(),
            "status.phase: expected Pending, Running, Succeeded, Failed or Suspended, got "
            "\"Exploded\"");
}

}  // namespace
}  // namespace ballast::controller
