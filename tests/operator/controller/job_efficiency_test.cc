// The efficiency figures of a finished job (operator/controller/
// job_efficiency.h): the figure shown is measured against speeds known
// outside the job (declared speeds, CPU budgets on one CPU model, bench
// scores), the job's own estimate beside it, which hides contention.
#include "operator/controller/job_efficiency.h"

#include <gtest/gtest.h>

namespace ballast::controller {
namespace {

using nlohmann::json;

coordinator::WorkerView Worker(const std::string& name, uint64_t items, double cost, double busy_s,
                               double cpu_s) {
  coordinator::WorkerView worker;
  worker.name = name;
  worker.items = items;
  worker.cost = cost;
  worker.busy_s = busy_s;
  worker.cpu_s = cpu_s;
  return worker;
}

// The 4-node test bed's shape: declared 1.0 + 0.5 + 0.5 + 0.2 = 2.2 cores,
// every worker busy the whole 10 s makespan, but the machine gave each only
// `share` of its declared speed (CPU seconds = share x speed x 10 s).
coordinator::JobView Contended(double share) {
  coordinator::JobView view;
  view.items = 220;
  view.done = true;
  const std::pair<const char*, double> nodes[] = {
      {"pi5", 1.0}, {"pi4-a", 0.5}, {"pi4-b", 0.5}, {"pi3", 0.2}};
  for (const auto& [name, speed] : nodes) {
    const double cost = speed * 100;  // cost delivered in proportion to speed
    view.workers.push_back(
        Worker(name, static_cast<uint64_t>(cost), cost, /*busy_s=*/10, share * speed * 10));
  }
  return view;
}

// Nodes that declare `speeds` (ballast.io/emulated-speed), nothing else.
std::map<std::string, NodeReference> Declared(const std::map<std::string, double>& speeds) {
  std::map<std::string, NodeReference> nodes;
  for (const auto& [name, speed] : speeds) nodes[name].declared_speed = speed;
  return nodes;
}

const std::map<std::string, NodeReference> kDeclared =
    Declared({{"pi5", 1.0}, {"pi4-a", 0.5}, {"pi4-b", 0.5}, {"pi3", 0.2}});

// Many small items: the work bound holds.
constexpr ItemBound kSmallItems{0.001, 0};

TEST(JobEfficiencyTest, ContentionHidesInTheEstimateAndShowsAgainstDeclaredSpeeds) {
  // Every node looks as fast as it was while busy all along: estimated 1.0.
  // The machine gave them 0.6 of what they declare: W = 0.6 x 2.2 x 10 =
  // 13.2 CPU seconds over 2.2 declared cores is 6 s of ideal, 0.6 of 10 s.
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0.6), 10, kDeclared, kSmallItems);
  EXPECT_EQ(figures.source, ReferenceSource::kDeclaredSpeeds);
  EXPECT_EQ(figures.bound, balance::LimitBound::kWork);
  EXPECT_NEAR(figures.ideal_s, 6, 1e-9);
  EXPECT_NEAR(figures.efficiency, 0.6, 1e-9);
  EXPECT_DOUBLE_EQ(figures.estimated_ideal_s, 10);
  EXPECT_DOUBLE_EQ(figures.estimated_efficiency, 1);
  EXPECT_EQ(figures.missing, "");
}

TEST(JobEfficiencyTest, WithoutAReferenceTheFigureIsTheEstimateAndSaysWhy) {
  auto declared = kDeclared;
  declared["pi3"].declared_speed.reset();
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0.6), 10, declared, kSmallItems);
  EXPECT_EQ(figures.source, ReferenceSource::kEstimate);
  EXPECT_DOUBLE_EQ(figures.efficiency, 1);
  EXPECT_DOUBLE_EQ(figures.efficiency, figures.estimated_efficiency);
  EXPECT_EQ(figures.missing,
            "no ballast.io/emulated-speed on node pi3 (1 of 4), and no CPU budget (a CPU limit or "
            "capacity) on nodes pi3, pi4-a, pi4-b, pi5 (4 of 4)");
}

TEST(JobEfficiencyTest, NoReferenceFigureWhenNoCpuSecondsWereReported) {
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0), 10, kDeclared, kSmallItems);
  EXPECT_EQ(figures.source, ReferenceSource::kEstimate);
  EXPECT_EQ(figures.missing, "the workers reported no CPU seconds");
}

// Without declared speeds, the CPU each worker may use is the reference when
// every node has one CPU model; with several, each CPU second is weighed by
// its node's bench score over the fastest's.
TEST(JobEfficiencyTest, CpuBudgetsOnOneModelThenBenchScoresAcrossModels) {
  std::map<std::string, NodeReference> nodes;
  for (const auto& [name, speed] :
       std::map<std::string, double>{{"pi5", 1.0}, {"pi4-a", 0.5}, {"pi4-b", 0.5}, {"pi3", 0.2}}) {
    nodes[name].cpu_budget = speed;
    nodes[name].cpu_model = "cortex-a72";
  }
  const EfficiencyFigures one_model = ComputeEfficiency(Contended(0.6), 10, nodes, kSmallItems);
  EXPECT_EQ(one_model.source, ReferenceSource::kCpuBudgets);
  EXPECT_NEAR(one_model.efficiency, 0.6, 1e-9);

  nodes["pi5"].cpu_model = "cortex-a76";
  const EfficiencyFigures unscored = ComputeEfficiency(Contended(0.6), 10, nodes, kSmallItems);
  EXPECT_EQ(unscored.source, ReferenceSource::kEstimate);
  EXPECT_NE(unscored.missing.find("nodes of 2 CPU models, and no ballast.io/bench-score on nodes "
                                  "pi3, pi4-a, pi4-b, pi5 (4 of 4)"),
            std::string::npos)
      << unscored.missing;

  // The Pi 5 scores twice the others per core: its CPU second is worth one,
  // theirs half. W = 6 + 0.5 x 7.2 = 9.6 over speeds 1 + 0.5 x 1.2 = 1.6: 6 s.
  for (auto& [name, node] : nodes) node.bench_score = name == "pi5" ? 470 : 235;
  const EfficiencyFigures scored = ComputeEfficiency(Contended(0.6), 10, nodes, kSmallItems);
  EXPECT_EQ(scored.source, ReferenceSource::kBenchScores);
  EXPECT_NEAR(scored.ideal_s, 6, 1e-9);
}

// No job ends before its costliest item could on the node that runs one
// fastest: an item of 0.3 of 13.2 CPU seconds takes 3.96 s at 1 core.
TEST(JobEfficiencyTest, TheLargestItemBoundsTheLimitAndSaysSo) {
  const EfficiencyFigures figures =
      ComputeEfficiency(Contended(0.6), 10, kDeclared, ItemBound{0.3, 0});
  EXPECT_EQ(figures.bound, balance::LimitBound::kWork) << "6 s of work is later";
  const EfficiencyFigures big = ComputeEfficiency(Contended(0.6), 10, kDeclared, ItemBound{0.6, 0});
  EXPECT_EQ(big.bound, balance::LimitBound::kLargestItem);
  EXPECT_NEAR(big.ideal_s, 0.6 * 13.2, 1e-9);
  // Two commands at once on the 1-core Pi 5 run one item at half its speed.
  const EfficiencyFigures shared =
      ComputeEfficiency(Contended(0.6), 10, kDeclared, ItemBound{0.3, 2});
  EXPECT_EQ(shared.bound, balance::LimitBound::kLargestItem);
  EXPECT_NEAR(shared.ideal_s, 0.3 * 13.2 * 2, 1e-9);
}

TEST(JobEfficiencyTest, AResumedSessionIsScaledToTheWholeJob) {
  coordinator::JobView view = Contended(1);
  view.items = 440;  // this session ran half of the job's items
  const EfficiencyFigures figures = ComputeEfficiency(view, 40, kDeclared, kSmallItems);
  EXPECT_NEAR(figures.ideal_s, 20, 1e-9);
  EXPECT_NEAR(figures.efficiency, 0.5, 1e-9);
  EXPECT_DOUBLE_EQ(figures.estimated_ideal_s, 20);
}

TEST(JobEfficiencyTest, VerificationRecomputationsAreNotTheJobsWork) {
  coordinator::JobView view = Contended(0.6);
  const EfficiencyFigures plain = ComputeEfficiency(view, 10, kDeclared, kSmallItems);
  // Each worker also spent 2 busy and 1 CPU second recomputing others' ranges.
  for (auto& worker : view.workers) {
    worker.busy_s += 2;
    worker.cpu_s += 1;
  }
  view.verification.worker_busy_s.assign(view.workers.size(), 2);
  view.verification.worker_cpu_s.assign(view.workers.size(), 1);
  const EfficiencyFigures verified = ComputeEfficiency(view, 10, kDeclared, kSmallItems);
  EXPECT_NEAR(verified.ideal_s, plain.ideal_s, 1e-9);
  EXPECT_DOUBLE_EQ(verified.estimated_ideal_s, plain.estimated_ideal_s);
}

// A node that joined mid-job, or left it, counts only while it was in it:
// two boards of 0.5 from the start of a session started at 100, a third of
// 1.0 joining at 104 and leaving at 108. CPU work 10: 4 done by 104 at 1.0,
// the other 6 at 2.0 take 3 s more: 7 s from the session's start.
TEST(JobEfficiencyTest, ANodeThatJoinedOrLeftCountsOnlyWhileItWasInTheJob) {
  coordinator::JobView view;
  view.items = 100;
  view.done = true;
  view.started_at = 100;
  view.workers = {Worker("a", 40, 40, 8, 4), Worker("b", 40, 40, 8, 4), Worker("c", 20, 20, 2, 2)};
  view.workers[2].joined_at = 104;
  view.workers[2].left_at = 108;
  const auto declared = Declared({{"a", 0.5}, {"b", 0.5}, {"c", 1.0}});
  const EfficiencyFigures figures = ComputeEfficiency(view, 8, declared, kSmallItems);
  EXPECT_DOUBLE_EQ(figures.ideal_s, 7);
  // Estimated: a and b at 5 cost/s each, c at 10 from 4 s on: 100 cost is 40
  // by 4 s, then 60 at 20 per s: 7 s.
  EXPECT_DOUBLE_EQ(figures.estimated_ideal_s, 7);
  // Counted from the start, c would make the ideal 5 s.
  view.workers[2].joined_at = 100;
  view.workers[2].left_at.reset();
  EXPECT_DOUBLE_EQ(ComputeEfficiency(view, 8, declared, kSmallItems).ideal_s, 5);
}

TEST(JobEfficiencyTest, NothingMeasuredGivesZeroNotNan) {
  coordinator::JobView view;
  view.items = 10;
  const EfficiencyFigures figures = ComputeEfficiency(view, 0, {}, kSmallItems);
  EXPECT_EQ(figures.ideal_s, 0);
  EXPECT_EQ(figures.efficiency, 0);
  EXPECT_EQ(figures.source, ReferenceSource::kEstimate);
}

TEST(JobEfficiencyTest, DeclaredSpeedIsAFinitePositiveNumberOrNothing) {
  auto node = [](const json& value) {
    return api::ReadNode(
        json{{"metadata", {{"annotations", {{std::string(kNodeSpeedAnnotation), value}}}}}});
  };
  EXPECT_EQ(DeclaredSpeed(node("0.5")), 0.5);
  EXPECT_EQ(DeclaredSpeed(node("2")), 2.0);
  for (const json& bad :
       {json("abc"), json("-1"), json("0"), json("1e400"), json("nan"), json("0.5x"), json(0.5)}) {
    EXPECT_FALSE(DeclaredSpeed(node(bad))) << bad.dump();
  }
  EXPECT_FALSE(DeclaredSpeed(api::ReadNode(json{{"metadata", {{"name", "n"}}}})));
}

TEST(JobEfficiencyTest, ANodesReferenceReadsItsProbeLabels) {
  const api::NodeView node = api::ReadNode(json{
      {"metadata",
       {{"labels", {{"ballast.io/cpu-model", "cortex-a72"}, {"ballast.io/bench-score", "4.7"}}}}}});
  const NodeReference reference = NodeReferenceOf(node, 1.5);
  EXPECT_EQ(reference.cpu_model, "cortex-a72");
  EXPECT_EQ(reference.bench_score, 4.7);
  EXPECT_EQ(reference.cpu_budget, 1.5);
  EXPECT_FALSE(reference.declared_speed);
  EXPECT_FALSE(NodeReferenceOf(node, 0).cpu_budget);
}

}  // namespace
}  // namespace ballast::controller
