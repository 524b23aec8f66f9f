// Decide with the history of measured speeds (decide.h, decide_history.cc):
// the session's priors are the fuzzy weights blended with history, status
// shows where each came from, a source that could not answer gives an event
// and the fuzzy weights, and a job that succeeds records what it measured.
#include <gtest/gtest.h>

#include "core/health/energy.h"
#include "operator/controller/decide_internal.h"
#include "tests/operator/controller/decide_world.h"

namespace ballast::controller::decide_test {
namespace {

// The workers' weights the registration sent, by node.
std::map<std::string, double> Registered(const Decision& decision) {
  std::map<std::string, double> weights;
  for (const auto& register_job : ActionsOf<RegisterJob>(decision)) {
    for (const auto& worker : register_job.config.workers) weights[worker.name] = worker.speed;
  }
  return weights;
}

std::string StartedMessage(const Decision& decision) {
  for (const auto& event : ActionsOf<RecordEvent>(decision)) {
    if (event.reason == api::Reason::kStarted) return event.message;
  }
  return "";
}

HistoryLookup Known(std::vector<fuzzy::NodeHistory> nodes) {
  return {std::move(nodes), "ConfigMap ballast-system/ballast-history", ""};
}

TEST(DecideHistoryTest, WithoutHistoryEveryPriorIsTheFuzzyWeight) {
  World world;
  const Decision decision = world.Pass();
  const auto weights = Registered(decision);
  ASSERT_EQ(weights.size(), kNodes.size());
  const auto session = SessionWeights(world.memory);
  ASSERT_EQ(session.size(), kNodes.size());
  for (const auto& node : session) {
    EXPECT_EQ(weights.at(node.name), node.weight) << node.name;
    EXPECT_EQ(SessionPrior(world.memory, node.name).source, "profile");
  }
  EXPECT_EQ(StartedMessage(decision).find("history"), std::string::npos);
}

TEST(DecideHistoryTest, TheSessionStartsFromTheFuzzyWeightsBlendedWithHistory) {
  World fuzzy_only;
  fuzzy_only.Pass();
  std::map<std::string, double> fuzzy;
  for (const auto& node : SessionWeights(fuzzy_only.memory)) fuzzy[node.name] = node.weight;

  World world;
  world.options.history_prior.full_trust_samples = 4;
  world.options.history_prior.max_age_seconds = 3600;
  // pi3b-worker measured twice as fast as its label says, with full evidence;
  // pi4b-master with a little; pi4b-worker's history is stale.
  const std::vector<fuzzy::NodeHistory> known = {
      {"pi3b-worker", 2.0, 4, 60}, {"pi4b-master", 1.0, 1, 60}, {"pi4b-worker", 3.0, 8, 7200}};
  world.history = Known(known);
  const Decision decision = world.Pass();
  const auto expected = fuzzy::BlendHistoryPrior(fuzzy, known, world.options.history_prior);
  const auto weights = Registered(decision);
  for (const auto& prior : expected) {
    EXPECT_NEAR(weights.at(prior.node), prior.value, 1e-3 * prior.value) << prior.node;
    EXPECT_GT(weights.at(prior.node), 0) << prior.node;
  }
  EXPECT_EQ(SessionPrior(world.memory, "pi4b-worker").source,
            "profile");  // stale: the fuzzy weight
  EXPECT_EQ(weights.at("pi4b-worker"), fuzzy.at("pi4b-worker"));
  EXPECT_NE(SessionPrior(world.memory, "pi3b-worker").source, "profile");
  EXPECT_EQ(SessionPrior(world.memory, "pi3b-worker").samples, 4);
  EXPECT_EQ(SessionPrior(world.memory, "pi3b-worker").age_seconds, 60);
  EXPECT_NE(StartedMessage(decision).find("priors from history on 2 of 3 nodes (ConfigMap "
                                          "ballast-system/ballast-history)"),
            std::string::npos)
      << StartedMessage(decision);
  const auto reasons = EventReasons(decision);
  EXPECT_EQ(std::count(reasons.begin(), reasons.end(), "HistoryUnavailable"), 0);
}

// A worker pod under a CPU limit computes in bursts: the session's prior
// carries its duty, the limit for its node's architecture over the node's
// cores (adaptive hedges its first split by it); a node without a limit
// computes steadily.
TEST(DecideHistoryTest, EachPriorCarriesTheDutyOfItsWorkerPodsCpuLimit) {
  World world;
  world.options.architectures.resources["arm"] = {{"limits", {{"cpu", "250m"}}}};
  for (auto& node : world.nodes) node["status"]["capacity"]["cpu"] = "4";
  const Decision decision = world.Pass();
  std::map<std::string, double> duty;
  for (const auto& register_job : ActionsOf<RegisterJob>(decision)) {
    for (const auto& worker : register_job.config.workers) duty[worker.name] = worker.duty;
  }
  ASSERT_EQ(duty.size(), kNodes.size());
  EXPECT_DOUBLE_EQ(duty.at("pi3b-worker"), 0.0625);  // arm: 0.25 of 4 cores
  EXPECT_EQ(duty.at("pi4b-master"), 1);              // arm64: no limit
  EXPECT_EQ(duty.at("pi4b-worker"), 1);
}

TEST(DecideHistoryTest, StatusShowsEachNodesPriorOnceTheSessionRuns) {
  World world = [] {
    World w;
    w.options.history_prior.full_trust_samples = 4;
    w.options.history_prior.max_age_seconds = 3600;
    w.history = Known({{"pi3b-worker", 2.0, 20, 30}});
    return w;
  }();
  world.Pass();
  world.view = View(300);
  const json status = S(world.Pass());
  ASSERT_EQ(status["nodes"].size(), kNodes.size());
  for (const auto& row : status["nodes"]) {
    ASSERT_TRUE(row.contains("prior")) << row.dump();
    const std::string name = row["name"];
    EXPECT_EQ(row["prior"]["source"], SessionPrior(world.memory, name).source);
    EXPECT_EQ(row["prior"]["value"], SessionPrior(world.memory, name).value);
    EXPECT_FALSE(row.contains("measuredSpeed"));  // only when done
  }
  EXPECT_EQ(status["nodes"][0]["prior"]["samples"], 20);
  EXPECT_EQ(status["nodes"][0]["prior"]["ageSeconds"], 30);
}

TEST(DecideHistoryTest, ASourceThatCouldNotAnswerGivesAnEventAndTheFuzzyWeights) {
  World world;
  world.history = HistoryLookup{{}, "Prometheus at http://127.0.0.1:9", "no answer within 2000 ms"};
  const Decision decision = world.Pass();
  const auto events = ActionsOf<RecordEvent>(decision);
  const auto unavailable = std::find_if(events.begin(), events.end(), [](const auto& event) {
    return event.reason == api::Reason::kHistoryUnavailable;
  });
  ASSERT_NE(unavailable, events.end());
  EXPECT_TRUE(unavailable->warning);
  EXPECT_EQ(unavailable->message,
            "no history of primes speeds from Prometheus at http://127.0.0.1:9: no answer within "
            "2000 ms; the job starts on the fuzzy weights");
  EXPECT_EQ(ActionsOf<RegisterJob>(decision).size(), 1u);  // it starts all the same
  const auto session = SessionWeights(world.memory);
  ASSERT_EQ(session.size(), kNodes.size());
  for (const auto& node : session) EXPECT_EQ(Registered(decision).at(node.name), node.weight);
}

TEST(DecideHistoryTest, ASucceededJobRecordsItsSpeedsAndShowsThemAgainstThePriors) {
  World world = Running();
  world.view = View(2000, /*done=*/true);
  world.view->workers[0].cost = 300;  // 37.5 cost units per busy second (busy 8 s)
  const Decision decision = world.Pass();
  ASSERT_EQ(decision.status.phase, api::JobPhase::kSucceeded);
  const auto records = ActionsOf<RecordSpeeds>(decision);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].history_key.text(), "primes");
  EXPECT_DOUBLE_EQ(records[0].recorded.speeds.at("pi3b-worker"), 37.5);
  double prior_sum = 0, speed_sum = 0;
  for (const auto& row : *decision.status.nodes) {
    prior_sum += row.prior->value;
    speed_sum += records[0].recorded.speeds.at(row.name);
  }
  for (const auto& row : *decision.status.nodes) {
    ASSERT_TRUE(row.measured_speed && row.prior_error) << row.name;
    const double speed = records[0].recorded.speeds.at(row.name);
    EXPECT_NEAR(*row.measured_speed, speed, 1e-3 * speed);
    EXPECT_NEAR(*row.prior_error, (row.prior->value / prior_sum) / (speed / speed_sum) - 1, 1e-3);
  }
  // Once: the next pass of the finished job records nothing again.
  EXPECT_TRUE(ActionsOf<RecordSpeeds>(world.Pass()).empty());
}

// A node that ran another job's workers beside this job's for more than a
// quarter of the run measured its share of the node, not the node: its
// speed is shown but not recorded (the session's sharing samples, in its
// view; coordinator/recorded_speeds.h has the rule's cases).
TEST(DecideHistoryTest, ANodeSharedWithAnotherJobForLongIsNotRecorded) {
  World world = Running();
  world.Pass();
  world.view = View(2000, /*done=*/true);
  world.view->sharing_sampled_s = 10;
  world.view->workers[2].shared_s = 4;  // pi4b-worker: left out
  world.view->workers[1].shared_s = 2;  // pi4b-master: kept
  const Decision decision = world.Pass();
  const auto records = ActionsOf<RecordSpeeds>(decision);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_EQ(records[0].recorded.shared, std::vector<std::string>{std::string(kNodes[2])});
  EXPECT_TRUE(records[0].recorded.brief.empty());
  EXPECT_EQ(records[0].recorded.speeds.size(), 2u);
  EXPECT_FALSE(records[0].recorded.speeds.contains(std::string(kNodes[2])));
  // Its measured speed is still shown.
  for (const auto& row : *decision.status.nodes) EXPECT_TRUE(row.measured_speed) << row.name;
}

TEST(DecideHistoryTest, AFailedJobRecordsNothing) {
  World world = Running();
  world.view = View(900, /*done=*/true);
  world.view->verification.failure = "item 12 differs";
  EXPECT_TRUE(ActionsOf<RecordSpeeds>(world.Pass()).empty());
}

// --- node health: each node against its own baseline (decide.h) -------------

// A running job whose session started from a steady history of the three
// nodes (all alike, four jobs each, a minute old).
World RunningWithBaseline() {
  return Running(Known(
      {{"pi3b-worker", 1.0, 4, 60}, {"pi4b-master", 1.0, 4, 60}, {"pi4b-worker", 1.0, 4, 60}}));
}

// The job finishes with pi3b-worker at `pi3b_speed` cost units per busy
// second and the others at 80 (8 s computing each).
Decision Finish(World& world, double pi3b_speed) {
  world.view = View(2000, /*done=*/true);
  world.view->workers[0].cost = 8 * pi3b_speed;
  world.view->workers[1].cost = 640;
  world.view->workers[2].cost = 640;
  return world.Pass();
}

std::vector<RecordEvent> EventsOf(const Decision& decision, api::Reason reason) {
  std::vector<RecordEvent> out;
  for (const auto& event : ActionsOf<RecordEvent>(decision)) {
    if (event.reason == reason) out.push_back(event);
  }
  return out;
}

const api::NodeRow& RowOf(const Decision& decision, const std::string& name) {
  for (const auto& row : *decision.status.nodes) {
    if (row.name == name) return row;
  }
  throw std::runtime_error("no row " + name);
}

// A baseline of one job is no baseline: its spread is unknown, and what one
// job measures of a node depends on the items it drew. Judged from two jobs.
TEST(DecideHealthTest, ABaselineOfOneJobJudgesNothing) {
  World one = Running(Known(
      {{"pi3b-worker", 1.0, 1, 60}, {"pi4b-master", 1.0, 1, 60}, {"pi4b-worker", 1.0, 1, 60}}));
  const Decision decision = Finish(one, 40);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_FALSE(RowOf(decision, "pi3b-worker").baseline_ratio);
  World two = Running(Known(
      {{"pi3b-worker", 1.0, 2, 60}, {"pi4b-master", 1.0, 2, 60}, {"pi4b-worker", 1.0, 2, 60}}));
  EXPECT_EQ(EventsOf(Finish(two, 40), api::Reason::kNodeBelowBaseline).size(), 2u);
}

// pi3b-worker measures 56 where the other two, at 80, put its baseline at
// 80: 0.70 of it, under 0.75 (a steady history has no band of its own).
TEST(DecideHealthTest, ANodeBelowItsBaselineIsAWarningOnTheJobAndOnTheNode) {
  World world = RunningWithBaseline();
  world.nodes[0]["metadata"]["uid"] = "node-uid-0";
  world.nodes[0]["metadata"]["labels"]["ballast.io/power-ok"] = "false";
  const Decision decision = Finish(world, 56);
  ASSERT_EQ(decision.status.phase, api::JobPhase::kSucceeded);
  const auto below = EventsOf(decision, api::Reason::kNodeBelowBaseline);
  ASSERT_EQ(below.size(), 2u);
  const std::string figures =
      "pi3b-worker ran at 0.70 of its baseline (measured 56, baseline 80 cost units/s, slow "
      "below 0.75, 8.0 s computing): slow; the probe reports under-voltage, frequency capping "
      "or throttling since boot (ballast.io/power-ok=false)";
  EXPECT_TRUE(below[0].warning);
  EXPECT_EQ(below[0].node, "");  // on the job
  EXPECT_EQ(below[0].message, figures);
  EXPECT_TRUE(below[1].warning);
  EXPECT_EQ(below[1].node, "pi3b-worker");  // on the Node
  EXPECT_EQ(below[1].node_uid, "node-uid-0");
  EXPECT_EQ(below[1].message, "WeightedJob ns/p: " + figures);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeAboveBaseline).empty());

  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_ratio, 0.7);
  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_verdict, "slow");
  // pi4b-master's baseline is the median of its own 80, pi4b-worker's 80 and
  // pi3b-worker's 56 against their histories: 80, not dragged by the slow one.
  EXPECT_EQ(RowOf(decision, "pi4b-master").baseline_ratio, 1);
  EXPECT_EQ(RowOf(decision, "pi4b-master").baseline_verdict, "normal");
  const json status = S(decision);
  EXPECT_EQ(status["nodes"][0]["baselineRatio"], 0.7);
  EXPECT_EQ(status["nodes"][0]["baselineVerdict"], "slow");

  // Its speed enters the history at the edge of the band: 80 * 0.75.
  const auto records = ActionsOf<RecordSpeeds>(decision);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_DOUBLE_EQ(records[0].recorded.speeds.at("pi3b-worker"), 60);
  EXPECT_DOUBLE_EQ(records[0].recorded.speeds.at("pi4b-master"), 80);
  EXPECT_DOUBLE_EQ(records[0].recorded.speeds.at("pi4b-worker"), 80);
  EXPECT_EQ(records[0].winsorized, std::vector<std::string>{"pi3b-worker"});
  // The status shows what was measured.
  EXPECT_EQ(RowOf(decision, "pi3b-worker").measured_speed, 56);

  // Once: the next pass of the finished job judges nothing again.
  const Decision again = world.Pass();
  EXPECT_TRUE(EventsOf(again, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_EQ(RowOf(again, "pi3b-worker").baseline_ratio, 0.7);
}

// The probe's Node conditions (core/probe/board_conditions.h) name what the
// board said and since when, in place of the power-ok label.
TEST(DecideHealthTest, TheBelowBaselineEventNamesTheBoardsConditionsAndSince) {
  World world = RunningWithBaseline();
  world.nodes[0]["metadata"]["labels"]["ballast.io/power-ok"] = "false";
  world.nodes[0]["status"]["conditions"] = json::parse(R"json([
    {"type": "Ready", "status": "True", "reason": "KubeletReady"},
    {"type": "BallastBoardUnderVoltage", "status": "True", "reason": "UnderVoltageNow",
     "message": "the board's supply is under-voltage now (get_throttled 0x50005)",
     "lastTransitionTime": "2026-11-27T08:40:00Z"},
    {"type": "BallastBoardThrottled", "status": "False", "reason": "NotThrottled",
     "message": "no frequency capping", "lastTransitionTime": "2026-11-27T08:00:00Z"}])json");
  const Decision decision = Finish(world, 56);
  const auto below = EventsOf(decision, api::Reason::kNodeBelowBaseline);
  ASSERT_EQ(below.size(), 2u);
  EXPECT_EQ(below[0].message,
            "pi3b-worker ran at 0.70 of its baseline (measured 56, baseline 80 cost units/s, slow "
            "below 0.75, 8.0 s computing): slow; under-voltage since 2026-11-27T08:40:00Z "
            "(BallastBoardUnderVoltage: the board's supply is under-voltage now (get_throttled "
            "0x50005))");
}

TEST(DecideHealthTest, ANodeWellAboveItsBaselineIsNotedAsNormal) {
  World world = RunningWithBaseline();
  const Decision decision = Finish(world, 120);
  const auto above = EventsOf(decision, api::Reason::kNodeAboveBaseline);
  ASSERT_EQ(above.size(), 2u);
  EXPECT_FALSE(above[0].warning);
  EXPECT_EQ(above[0].message,
            "pi3b-worker ran at 1.50 of its baseline (measured 120, baseline 80 cost units/s, "
            "slow below 0.75, 8.0 s computing): normal, fast");
  EXPECT_EQ(above[1].node, "pi3b-worker");
  EXPECT_FALSE(above[1].warning);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_verdict, "fast");
  // The others at their baselines: the median of three ignores the fast one.
  EXPECT_EQ(RowOf(decision, "pi4b-master").baseline_ratio, 1);
  const auto records = ActionsOf<RecordSpeeds>(decision);
  ASSERT_EQ(records.size(), 1u);
  EXPECT_DOUBLE_EQ(records[0].recorded.speeds.at("pi3b-worker"), 120);  // as measured
  EXPECT_TRUE(records[0].winsorized.empty());
}

TEST(DecideHealthTest, WithinItsBaselineANodeGivesNoEvent) {
  World world = RunningWithBaseline();
  const Decision decision = Finish(world, 76);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeAboveBaseline).empty());
  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_ratio, 0.95);
  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_verdict, "normal");
}

// Without history there is no baseline: nothing is judged, whatever the
// speeds; a node computing under min_busy_seconds has no verdict.
TEST(DecideHealthTest, WithoutABaselineOrEnoughComputingNothingIsJudged) {
  World world = Running();
  Decision decision = Finish(world, 20);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  for (const auto& row : *decision.status.nodes) EXPECT_FALSE(row.baseline_ratio) << row.name;
  EXPECT_TRUE(ActionsOf<RecordSpeeds>(decision).at(0).winsorized.empty());

  World brief = RunningWithBaseline();
  brief.options.deviation.min_busy_seconds = 10;  // each computed 8 s
  decision = Finish(brief, 20);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_FALSE(RowOf(decision, "pi3b-worker").baseline_ratio);
}

// The threshold is a setting: at slow_ratio 0.65, 0.70 is Normal.
TEST(DecideHealthTest, TheSlowRatioIsASetting) {
  World world = RunningWithBaseline();
  world.options.deviation.slow_ratio = 0.65;
  const Decision decision = Finish(world, 56);
  EXPECT_TRUE(EventsOf(decision, api::Reason::kNodeBelowBaseline).empty());
  EXPECT_EQ(RowOf(decision, "pi3b-worker").baseline_verdict, "normal");
}

// --- energy per job ----------------------------------------------------------

// Each node at 2 W idle and 5 W computing (the labels that override a board's
// figures), busy 8 s of the job's 10: 5 * 8 + 2 * 2 = 44 J each; pi4b-worker
// without figures is left out of the total, which says so.
TEST(DecideEnergyTest, ASucceededJobStatesItsEstimatedEnergyInTotalAndPerNode) {
  World world = Running();
  for (auto& node : world.nodes) {
    node["metadata"]["labels"]["ballast.io/power-idle-w"] = "2";
    node["metadata"]["labels"]["ballast.io/power-load-w"] = "5";
  }
  world.nodes[2]["metadata"]["labels"] = json::object();  // no board, no figures
  world.view = View(2000, /*done=*/true);
  const Decision decision = world.Pass();
  ASSERT_EQ(decision.status.phase, api::JobPhase::kSucceeded);
  ASSERT_TRUE(decision.status.energy);
  const json& energy = *decision.status.energy;
  EXPECT_EQ(energy["joules"], 88);
  EXPECT_EQ(energy["joulesPerItem"], 0.06607);  // 88 J over pi3b's and pi4b-master's 1332 items
  EXPECT_EQ(energy["complete"], false);
  EXPECT_EQ(energy["estimate"], false);
  EXPECT_EQ(energy["summary"],
            "88.0 J (0.02444 Wh), 0.06607 J per item, 1 node without power figures");
  EXPECT_EQ(RowOf(decision, "pi3b-worker").energy_joules, 44);
  EXPECT_EQ(RowOf(decision, "pi4b-master").energy_joules, 44);
  EXPECT_FALSE(RowOf(decision, "pi4b-worker").energy_joules);
  const json status = S(decision);
  EXPECT_EQ(status["energy"]["joules"], 88);
  EXPECT_EQ(status["nodes"][0]["energyJoules"], 44);
}

// Regression (issue 61): a power label out of range (a typo of 5000 W, a
// negative figure, text) was ignored without a word. The job's energy is as
// without it, and one Warning NodeLabelDefaulted per distinct problem names
// the nodes and the value.
TEST(DecideEnergyTest, APowerLabelOutOfRangeIsIgnoredWithAWarning) {
  World world = Running();
  world.view = View(2000, /*done=*/true);
  const Decision clean = world.Pass();
  ASSERT_TRUE(clean.status.energy);
  EXPECT_TRUE(EventsOf(clean, api::Reason::kNodeLabelDefaulted).empty());

  World labelled = Running();
  labelled.nodes[0]["metadata"]["labels"]["ballast.io/power-load-w"] = "5000";
  labelled.nodes[1]["metadata"]["labels"]["ballast.io/power-load-w"] = "5000";
  labelled.nodes[2]["metadata"]["labels"]["ballast.io/power-idle-w"] = "-2";
  labelled.view = View(2000, /*done=*/true);
  const Decision decision = labelled.Pass();
  ASSERT_EQ(decision.status.phase, api::JobPhase::kSucceeded);
  ASSERT_TRUE(decision.status.energy);
  EXPECT_EQ((*decision.status.energy)["joules"], (*clean.status.energy)["joules"]);
  const auto events = EventsOf(decision, api::Reason::kNodeLabelDefaulted);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_TRUE(events[0].warning);
  EXPECT_EQ(events[0].message,
            "label ballast.io/power-load-w: '5000' is not a number of watts in (0, 1000], "
            "ignored (the board kind's figure stands, if it has one), on 2 nodes: " +
                std::string(kNodes[0]) + ", " + std::string(kNodes[1]));
  EXPECT_EQ(events[1].message, "node " + std::string(kNodes[2]) +
                                   ": label ballast.io/power-idle-w: '-2' is not a number of "
                                   "watts in (0, 1000], ignored (the board kind's figure "
                                   "stands, if it has one)");
}

// A node's board kind gives its figures: seed 000's boards are Pi 3B and
// Pi 4B by their ARM cores (health::BoardPowers).
TEST(DecideEnergyTest, ABoardKindGivesTheFiguresWithoutLabels) {
  World world = Running();
  world.view = View(2000, /*done=*/true);
  const Decision decision = world.Pass();
  ASSERT_TRUE(decision.status.energy);
  std::vector<health::NodeUsage> usage;
  for (size_t i = 0; i < kNodes.size(); ++i) {
    const api::NodeView node = api::ReadNode(world.nodes[i]);
    usage.push_back(
        {kNodes[i], health::NodePower(node.meta.labels), 8, world.view->workers[i].items});
  }
  const health::JobEnergy want = health::EstimateJobEnergy(usage, 10);
  EXPECT_NEAR((*decision.status.energy)["joules"].get<double>(), want.joules, 0.05);
  EXPECT_EQ((*decision.status.energy)["complete"], want.complete);
}

}  // namespace
}  // namespace ballast::controller::decide_test
