// The efficiency figures of a finished job (operator/controller/
// job_efficiency.h): the measured figure hides contention, the nominal one
// (declared node speeds) shows it, and it appears only when every node
// declares a speed.
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

const std::map<std::string, double> kDeclared = {
    {"pi5", 1.0}, {"pi4-a", 0.5}, {"pi4-b", 0.5}, {"pi3", 0.2}};

TEST(JobEfficiencyTest, ContentionHidesInTheMeasuredFigureAndShowsInTheNominalOne) {
  // Every node looks as fast as it was while busy all along: measured 1.0.
  // The machine gave them 0.6 of what they declare: W = 0.6 x 2.2 x 10 =
  // 13.2 CPU seconds over 2.2 declared cores is 6 s of ideal, 0.6 of 10 s.
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0.6), 10, kDeclared);
  EXPECT_DOUBLE_EQ(figures.ideal_s, 10);
  EXPECT_DOUBLE_EQ(figures.efficiency, 1);
  ASSERT_TRUE(figures.nominal_efficiency);
  EXPECT_NEAR(*figures.nominal_ideal_s, 6, 1e-9);
  EXPECT_NEAR(*figures.nominal_efficiency, 0.6, 1e-9);
}

TEST(JobEfficiencyTest, NoNominalFigureWhenANodeDeclaresNoSpeed) {
  auto declared = kDeclared;
  declared.erase("pi3");
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0.6), 10, declared);
  EXPECT_DOUBLE_EQ(figures.efficiency, 1);
  EXPECT_FALSE(figures.nominal_efficiency);
  EXPECT_FALSE(figures.nominal_ideal_s);
}

TEST(JobEfficiencyTest, NoNominalFigureWhenNoCpuSecondsWereReported) {
  const EfficiencyFigures figures = ComputeEfficiency(Contended(0), 10, kDeclared);
  EXPECT_FALSE(figures.nominal_efficiency);
}

TEST(JobEfficiencyTest, AResumedSessionIsScaledToTheWholeJob) {
  coordinator::JobView view = Contended(1);
  view.items = 440;  // this session ran half of the job's items
  const EfficiencyFigures figures = ComputeEfficiency(view, 40, kDeclared);
  EXPECT_DOUBLE_EQ(figures.ideal_s, 20);
  EXPECT_DOUBLE_EQ(figures.efficiency, 0.5);
  EXPECT_NEAR(*figures.nominal_ideal_s, 20, 1e-9);
}

TEST(JobEfficiencyTest, VerificationRecomputationsAreNotTheJobsWork) {
  coordinator::JobView view = Contended(0.6);
  const EfficiencyFigures plain = ComputeEfficiency(view, 10, kDeclared);
  // Each worker also spent 2 busy and 1 CPU second recomputing others' ranges.
  for (auto& worker : view.workers) {
    worker.busy_s += 2;
    worker.cpu_s += 1;
  }
  view.verification.worker_busy_s.assign(view.workers.size(), 2);
  view.verification.worker_cpu_s.assign(view.workers.size(), 1);
  const EfficiencyFigures verified = ComputeEfficiency(view, 10, kDeclared);
  EXPECT_DOUBLE_EQ(verified.ideal_s, plain.ideal_s);
  EXPECT_NEAR(*verified.nominal_ideal_s, *plain.nominal_ideal_s, 1e-9);
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
  const std::map<std::string, double> declared = {{"a", 0.5}, {"b", 0.5}, {"c", 1.0}};
  const EfficiencyFigures figures = ComputeEfficiency(view, 8, declared);
  ASSERT_TRUE(figures.nominal_ideal_s);
  EXPECT_DOUBLE_EQ(*figures.nominal_ideal_s, 7);
  // Measured: a and b at 5 cost/s each, c at 10 from 4 s on: 100 cost is 40
  // by 4 s, then 60 at 20 per s: 7 s.
  EXPECT_DOUBLE_EQ(figures.ideal_s, 7);
  // Counted from the start, c would make the ideal 5 s.
  view.workers[2].joined_at = 100;
  view.workers[2].left_at.reset();
  EXPECT_DOUBLE_EQ(*ComputeEfficiency(view, 8, declared).nominal_ideal_s, 5);
}

TEST(JobEfficiencyTest, NothingMeasuredGivesZeroNotNan) {
  coordinator::JobView view;
  view.items = 10;
  const EfficiencyFigures figures = ComputeEfficiency(view, 0, {});
  EXPECT_EQ(figures.ideal_s, 0);
  EXPECT_EQ(figures.efficiency, 0);
  EXPECT_FALSE(figures.nominal_efficiency);
}

TEST(JobEfficiencyTest, DeclaredSpeedIsAFinitePositiveNumberOrNothing) {
  auto node = [](const json& value) {
    return ReadNode(
        json{{"metadata", {{"annotations", {{std::string(kNodeSpeedAnnotation), value}}}}}});
  };
  EXPECT_EQ(DeclaredSpeed(node("0.5")), 0.5);
  EXPECT_EQ(DeclaredSpeed(node("2")), 2.0);
  for (const json& bad :
       {json("abc"), json("-1"), json("0"), json("1e400"), json("nan"), json("0.5x"), json(0.5)}) {
    EXPECT_FALSE(DeclaredSpeed(node(bad))) << bad.dump();
  }
  EXPECT_FALSE(DeclaredSpeed(ReadNode(json{{"metadata", {{"name", "n"}}}})));
}

}  // namespace
}  // namespace ballast::controller
