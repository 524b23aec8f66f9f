// WeightedJobStatus (operator/api/weighted_job.h): it serializes to
// exactly the JSON of the CRD's status schema, reads it back, refuses a field
// of the wrong type naming it, and sets conditions as metav1.Condition wants.
#include <fmt/format.h>
#include <gtest/gtest.h>

#include <cstdio>

#include "core/common/utf8.h"
#include "operator/api/weighted_job.h"

namespace ballast::api {
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
     "cost": 31000.5, "costSpeed": 1240.02, "steals": 1, "duplicateSeconds": 0.75,
     "pod": "primes-pi4b-0",
     "prior": {"source": "blended", "value": 4.5, "samples": 2.5, "ageSeconds": 3600},
     "measuredSpeed": 1180.25, "priorError": -0.031, "baselineRatio": 0.52,
     "baselineVerdict": "slow", "energyJoules": 412.5}],
  "excludedNodes": [
    {"name": "pi3b-0", "reason": "ErrImageNeverPull", "message": "image not present"}],
  "progress": "42%", "completedItems": 63000, "completedCost": 70100.25, "items": 150000,
  "workers": 3, "failedPods": 0,
  "failedItems": 2, "failedItemValues": ["a.jpg", "b.jpg"],
  "result": {"primes": {"count": 12000, "sum": "0x00000000075bcd15"}},
  "startTime": "2026-11-22T10:00:00Z", "completionTime": "2026-11-22T10:00:12Z",
  "makespanSeconds": 12.5, "idealSeconds": 11.6, "efficiency": 0.93,
  "efficiencyReference": "declared speeds", "limitBound": "work",
  "estimatedIdealSeconds": 7.1, "estimatedEfficiency": 0.57,
  "timing": {"endToEndSeconds": 31.2, "computeSeconds": 12.1, "computeEfficiency": 0.97,
             "firstReportNode": "pi4b-0", "beforeFirstReport": {"containerStartSeconds": 16}},
  "costModel": {"startCost": 0.42, "learned": true, "samples": 64, "secondsPerCost": 0.0125,
                "startSeconds": 0.00525},
  "energy": {"joules": 412.5, "joulesPerItem": 0.0825, "complete": true, "estimate": false,
             "summary": "412.5 J (0.115 Wh), 0.0825 J per item"},
  "efficiencyNote": "31.2 s end to end, 12.1 s computing",
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
  EXPECT_EQ(status->estimated_efficiency, 0.57);
  EXPECT_EQ(status->completed_cost, 70100.25);
  EXPECT_EQ(status->nodes->at(0).cost_speed, 1240.02);
  EXPECT_EQ(status->nodes->at(0).duplicate_seconds, 0.75);
  EXPECT_EQ(status->efficiency_reference, "declared speeds");
  EXPECT_EQ(status->excluded_nodes.at(0).reason, "ErrImageNeverPull");
  EXPECT_EQ(status->nodes->at(0).prior->source, "blended");
  EXPECT_EQ(status->nodes->at(0).prior->age_seconds, 3600);
  EXPECT_EQ(status->nodes->at(0).prior_error, -0.031);
  EXPECT_EQ(status->nodes->at(0).baseline_ratio, 0.52);
  EXPECT_EQ(status->nodes->at(0).baseline_verdict, "slow");
  EXPECT_EQ(status->nodes->at(0).energy_joules, 412.5);
  EXPECT_EQ((*status->energy)["joules"], 412.5);
  EXPECT_EQ(status->failed_items, 2u);
  EXPECT_EQ(status->failed_item_values, (std::vector<std::string>{"a.jpg", "b.jpg"}));
  EXPECT_EQ(status->efficiency_note, "31.2 s end to end, 12.1 s computing");
  ASSERT_TRUE(status->cost_model.has_value());
  EXPECT_EQ(status->cost_model->start_cost, 0.42);
  EXPECT_TRUE(status->cost_model->learned);
  EXPECT_EQ(status->cost_model->samples, 64u);
  EXPECT_EQ(status->cost_model->seconds_per_cost, 0.0125);
  EXPECT_EQ(status->cost_model->start_seconds, 0.00525);
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
      {{{"failedItemValues", {"a", 1}}}, "status.failedItemValues[1]: expected a string, got 1"},
      {{{"timing", 3}}, "status.timing: expected an object, got 3"},
      {{{"costModel", {{"startCost", "0.4"}}}},
       "status.costModel.startCost: expected a number, got \"0.4\""},
      {{{"costModel", {{"samples", -2}}}},
       "status.costModel.samples: expected an integer >= 0, got -2"},
      {{{"costModel", 1}}, "status.costModel: expected an object, got 1"},
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

// Regression (issue 61): a failed item's output with escape sequences went
// into a condition's message raw, and `kubectl describe` printed it to a
// terminal. SetCondition writes its control characters out.
TEST(WeightedJobStatusTest, AConditionsMessageHasItsControlCharactersWrittenOut) {
  WeightedJobStatus status;
  EXPECT_TRUE(SetCondition(status,
                           {ConditionType::kFailed, true, Reason::kTooManyFailedItems,
                            "item 7 (it wrote \"\x1b[2J\x1b[Hresult: forged\r\")", 0, ""},
                           1, "t1"));
  EXPECT_EQ(status.conditions[0].message,
            "item 7 (it wrote \"\\x1b[2J\\x1b[Hresult: forged\\x0d\")");
  EXPECT_FALSE(SetCondition(status,
                            {ConditionType::kFailed, true, Reason::kTooManyFailedItems,
                             "item 7 (it wrote \"\x1b[2J\x1b[Hresult: forged\r\")", 0, ""},
                            1, "t2"))
      << "the same condition set again is no change";
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

// A row of a node named `name` whose worker ran at `speed` with `weight`.
NodeRow Row(std::string name, double weight, double speed) {
  NodeRow row;
  row.name = std::move(name);
  row.weight = weight;
  row.estimated_speed = speed;
  return row;
}

std::vector<std::string> Names(const std::vector<NodeRow>& rows) {
  std::vector<std::string> names;
  for (const auto& row : rows) names.push_back(row.name);
  return names;
}

TEST(WeightedJobStatusTest, NotableRowsAreTheFurthestFromTheirPredictionInTheirOrder) {
  // Weights 1:1:1:1:2; speeds as predicted but for c (three times its share)
  // and e (not measured yet).
  const std::vector<NodeRow> rows = {Row("a", 1, 100), Row("b", 1, 100), Row("c", 1, 300),
                                     Row("d", 1, 100), Row("e", 2, 0)};
  EXPECT_EQ(Names(NotableRows(rows, 2)), (std::vector<std::string>{"c", "e"}));
  EXPECT_EQ(Names(NotableRows(rows, 1)), (std::vector<std::string>{"e"}));
  EXPECT_EQ(NotableRows(rows, 5), rows);
  // Once the job succeeded the prior's error ranks them.
  std::vector<NodeRow> done = rows;
  for (auto& row : done) row.prior_error = 0.01;
  done[1].prior_error = -0.4;
  EXPECT_EQ(Names(NotableRows(done, 1)), (std::vector<std::string>{"b"}));
}

TEST(WeightedJobStatusTest, AThousandNodesStayUnder256KiBWithASummary) {
  WeightedJobStatus status = *StatusFromJson(kFullStatus);
  status.nodes.emplace();
  status.excluded_nodes.clear();
  for (int i = 0; i < 1000; ++i) {
    // Names of 63 characters, the longest a node name can be.
    std::string name = fmt::format("node-{:04d}-", i);
    name.resize(63, 'x');
    NodeRow row = StatusFromJson(kFullStatus)->nodes->front();  // every column set
    row.name = name;
    row.pod = "a-job-name-of-some-length-" + name;
    row.estimated_speed = 1000 + i;
    row.prior = NodePriorRow{i % 2 ? "history" : "profile", 4.5, 2.5, 3600};
    status.nodes->push_back(row);
    status.excluded_nodes.push_back(
        {name, "ErrImagePull", "failed to pull and unpack image: " + std::string(150, 'm'), ""});
  }
  // A checkpoint as large as the operator writes one (kMaxCheckpointBytes).
  json ranges = json::array();
  for (size_t bytes = 2; bytes < kMaxCheckpointBytes - 200;) {
    const uint64_t begin = ranges.size() * 2000000000;
    ranges.push_back({begin, begin + 999999999});
    bytes += DumpJson(ranges.back()).size() + 1;
  }
  status.checkpoint = json{{"completed", ranges}, {"result", kFullStatus["result"]}};

  const json written = StatusToJson(status);
  const size_t bytes = DumpJson(written).size();
  std::printf("status of 1,000 nodes: %zu KiB\n", bytes >> 10);
  EXPECT_LE(bytes, 256u << 10);
  EXPECT_EQ(written["nodes"].size(), kMaxNodeRows);
  EXPECT_EQ(written["nodeSummary"]["nodes"], 1000);
  EXPECT_EQ(written["nodeSummary"]["shown"], kMaxNodeRows);
  EXPECT_EQ(written["nodeSummary"]["steals"], 1000);
  EXPECT_EQ(written["nodeSummary"]["estimatedSpeed"]["min"], 1000);
  EXPECT_EQ(written["nodeSummary"]["estimatedSpeed"]["median"], 1500);
  EXPECT_EQ(written["nodeSummary"]["estimatedSpeed"]["max"], 1999);
  EXPECT_EQ(written["nodeSummary"]["priors"], (json{{"history", 500}, {"profile", 500}}));
  EXPECT_EQ(written["excludedNodes"].size(), kMaxNodeRows);
  EXPECT_EQ(written["excludedNodeCount"], 1000);
  // Read back (as after an operator restart) it is a valid status of 100 rows.
  auto read = StatusFromJson(written);
  ASSERT_TRUE(read.ok()) << read.status().ToString();
  EXPECT_EQ(read->nodes->size(), kMaxNodeRows);
}

TEST(WeightedJobStatusTest, AtMostAHundredNodesAreWrittenWhole) {
  WeightedJobStatus status;
  status.nodes.emplace();
  for (size_t i = 0; i < kMaxNodeRows; ++i)
    status.nodes->push_back(Row(fmt::format("n{}", i), 1, 1));
  const json written = StatusToJson(status);
  EXPECT_EQ(written["nodes"].size(), kMaxNodeRows);
  EXPECT_FALSE(written.contains("nodeSummary"));
  EXPECT_FALSE(written.contains("excludedNodeCount"));
}

}  // namespace
}  // namespace ballast::api
