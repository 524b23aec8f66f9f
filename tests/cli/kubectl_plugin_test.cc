// The pure parts of `kubectl ballast` (docs/kubectl-plugin.md): the view of
// `top` and its rendering, the report of a finished job, where `fit` finds
// the operator's history, and the plugin's name.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "cli/commands.h"
#include "cli/plugin/plugin_cluster.h"
#include "cli/plugin/plugin_report.h"
#include "cli/plugin/plugin_top.h"
#include "tests/support/test_seed.h"

namespace ballast::cli {
namespace {

using nlohmann::json;

// 2026-11-26T06:00:00Z
constexpr double kStart = 1795672800;

// A WeightedJob of seed 000's three nodes, `completed` of 150000 items done.
json Job(const std::string& phase, uint64_t completed, std::vector<json> nodes) {
  json status = {
      {"phase", phase},  {"progress", "x"},         {"completedItems", completed},
      {"items", 150000}, {"workers", nodes.size()}, {"startTime", "2026-11-26T06:00:00Z"},
      {"nodes", nodes}};
  return {{"apiVersion", "ballast.io/v1alpha1"},
          {"kind", "WeightedJob"},
          {"metadata", {{"name", "primes-300000"}, {"namespace", "default"}}},
          {"spec", {{"workload", {{"primes", {{"limit", 300000}}}}}, {"policy", "adaptive"}}},
          {"status", status}};
}

json Node(const std::string& name, double weight, double speed, uint64_t items,
          uint64_t steals = 0) {
  return {{"name", name},   {"weight", weight}, {"score", 1}, {"estimatedSpeed", speed},
          {"items", items}, {"steals", steals}};
}

json RunningJob() {
  return Job("Running", 75000,
             {Node("pi4b-0", 5, 5000, 34000), Node("pi4b-1", 5, 5000, 34000, 1),
              Node("pi3b-0", 1, 1000, 7000)});
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST(TopViewTest, ReadsTheJobAndItsNodes) {
  auto view = TopViewFromJob(RunningJob(), kStart + 15);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  EXPECT_EQ(view->ns, "default");
  EXPECT_EQ(view->name, "primes-300000");
  EXPECT_EQ(view->phase, api::JobPhase::kRunning);
  EXPECT_EQ(view->workload, workload::WorkloadKind::kPrimes);
  EXPECT_EQ(view->policy, "adaptive");
  EXPECT_EQ(view->completed, 75000u);
  EXPECT_EQ(view->items, 150000u);
  ASSERT_EQ(view->nodes.size(), 3u);
  EXPECT_EQ(view->node_count, 3u);
  EXPECT_EQ(view->steals, 1u);
  ASSERT_TRUE(view->elapsed_s);
  EXPECT_DOUBLE_EQ(*view->elapsed_s, 15);
}

TEST(TopViewTest, ANodeSummaryCountsTheNodesTheTableLeftOut) {
  json job = RunningJob();
  job["status"]["nodeSummary"] = {{"nodes", 250}, {"shown", 3}, {"steals", 40}};
  job["status"]["excludedNodeCount"] = 7;
  auto view = TopViewFromJob(job, kStart);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(view->node_count, 250u);
  EXPECT_EQ(view->steals, 40u);
  EXPECT_EQ(view->excluded, 7u);
  const std::string text = RenderTop(*view, 100);
  EXPECT_NE(text.find("3 of 250 nodes shown"), std::string::npos) << text;
  EXPECT_NE(text.find("40 steals in all"), std::string::npos) << text;
  EXPECT_NE(text.find("7 selected node(s) carry no worker"), std::string::npos) << text;
}

TEST(TopViewTest, RefusesWhatIsNoWeightedJobAndABadStatus) {
  EXPECT_FALSE(TopViewFromJob(json::array(), kStart).ok());
  EXPECT_FALSE(TopViewFromJob({{"kind", "Pod"}}, kStart).ok());
  json job = RunningJob();
  job["status"]["completedItems"] = "many";
  auto view = TopViewFromJob(job, kStart);
  ASSERT_FALSE(view.ok());
  EXPECT_NE(view.status().message().find("completedItems"), std::string::npos)
      << view.status().message();
}

TEST(TopViewTest, AJobWithoutStatusIsPendingWithNoNodes) {
  json job = RunningJob();
  job.erase("status");
  auto view = TopViewFromJob(job, kStart);
  ASSERT_TRUE(view.ok());
  const std::string text = RenderTop(*view, 80);
  EXPECT_NE(text.find("Pending (no status yet)"), std::string::npos) << text;
  EXPECT_NE(text.find("no nodes yet"), std::string::npos) << text;
}

TEST(RenderTopTest, DrawsTheJobBarEtaAndOneRowPerNode) {
  auto view = TopViewFromJob(RunningJob(), kStart + 15);
  ASSERT_TRUE(view.ok());
  const std::vector<std::string> lines = Lines(RenderTop(*view, 100));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_EQ(
      lines[0],
      "WeightedJob default/primes-300000  Running  primes (adaptive)  3 workers  elapsed 15s");
  // A status with no cost is read by count: 75000 items left at 11000 items/s: 7 s.
  EXPECT_NE(lines[1].find(" 50.0% of the work  75000/150000 items  ETA 7s"), std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[1].find('['), 0u);
  EXPECT_NE(lines[3].find("NODE"), std::string::npos);
  EXPECT_NE(lines[3].find("ITEMS/S"), std::string::npos);
  // pi4b-0: 34000 of its expected 150000 * 5/11 = 68182 items, 49 %;
  // (68182 - 34000) / 5000 = 7 s left.
  EXPECT_NE(lines[4].find("pi4b-0"), std::string::npos);
  EXPECT_NE(lines[4].find("  49%  7s"), std::string::npos) << lines[4];
  EXPECT_NE(lines[5].find("      1 ["), std::string::npos) << lines[5];  // its steal
  // pi3b-0: 7000 of 13636, 51 %.
  EXPECT_NE(lines[6].find("  51%  7s"), std::string::npos) << lines[6];
  for (const std::string& line : lines) EXPECT_LE(line.size(), 100u) << line;
}

// The operator writes a running job's progress at steps or every
// --progress-interval (a minute): top says how old the status is once it
// is kStaleStatusSeconds old, from the status subresource's managedFields.
TEST(RenderTopTest, AStatusWrittenLongAgoSaysHowOld) {
  json job = RunningJob();
  job["metadata"]["managedFields"] = json::parse(R"([
      {"manager": "ballast", "operation": "Update", "subresource": "status",
       "time": "2026-11-26T06:00:03Z"},
      {"manager": "ballast", "operation": "Update", "subresource": "status",
       "time": "2026-11-26T06:00:10Z"},
      {"manager": "kubectl", "operation": "Update", "time": "2026-11-26T06:00:20Z"}])");
  auto view = TopViewFromJob(job, kStart + 52);
  ASSERT_TRUE(view.ok());
  ASSERT_TRUE(view->status_age_s);
  EXPECT_DOUBLE_EQ(*view->status_age_s, 42) << "the newest status write; the spec's is not one";
  // The ETA of 7 s was as of the write, 42 s ago: the job is due now.
  EXPECT_NE(Lines(RenderTop(*view, 100))[1].find("as of 42s ago  ETA 0s"), std::string::npos)
      << Lines(RenderTop(*view, 100))[1];
  // 4 s after the write, 3 s are left of the 7.
  view = TopViewFromJob(job, kStart + 14);
  ASSERT_TRUE(view.ok());
  EXPECT_NE(Lines(RenderTop(*view, 100))[1].find("ETA 3s"), std::string::npos)
      << Lines(RenderTop(*view, 100))[1];
  // Fresher than kStaleStatusSeconds: nothing said.
  view = TopViewFromJob(job, kStart + 15);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Lines(RenderTop(*view, 100))[1].find("ago"), std::string::npos);
  // A finished job's status is final.
  job["status"]["phase"] = "Succeeded";
  view = TopViewFromJob(job, kStart + 600);
  ASSERT_TRUE(view.ok());
  EXPECT_EQ(Lines(RenderTop(*view, 100))[1].find("ago"), std::string::npos);
  // No managedFields (or none of the status): no age.
  EXPECT_FALSE(TopViewFromJob(RunningJob(), kStart + 600)->status_age_s);
  job["metadata"]["managedFields"] = json::array({{{"subresource", 3}, {"time", "x"}}});
  EXPECT_FALSE(TopViewFromJob(job, kStart + 600)->status_age_s);
}

TEST(RenderTopTest, EveryLineFitsTheWidthAndLongNamesAreCut) {
  json job = RunningJob();
  job["status"]["nodes"][0]["name"] = std::string(60, 'n');
  job["status"]["conditions"] = {{{"type", "Progressing"},
                                  {"status", "True"},
                                  {"reason", "Running"},
                                  {"message", std::string(300, 'm') + "\x1b[2J"},
                                  {"lastTransitionTime", "2026-11-26T06:00:01Z"}}};
  auto view = TopViewFromJob(job, kStart);
  ASSERT_TRUE(view.ok());
  for (int width : {60, 80, 132, 300}) {
    for (const std::string& line : Lines(RenderTop(*view, width))) {
      EXPECT_LE(line.size(), static_cast<size_t>(width)) << width << ": " << line;
      EXPECT_EQ(line.find('\x1b'), std::string::npos) << line;
    }
  }
  // Narrower than 60 is drawn at 60.
  for (const std::string& line : Lines(RenderTop(*view, 20))) EXPECT_LE(line.size(), 60u);
}

TEST(RenderTopTest, BeforeAnySpeedTheBarsFollowTheWeights) {
  auto view = TopViewFromJob(
      Job("Running", 1100, {Node("a", 5, 0, 500), Node("b", 5, 0, 500), Node("c", 1, 0, 100)}),
      kStart + 2);
  ASSERT_TRUE(view.ok());
  const std::string text = RenderTop(*view, 100);
  // a: 500 of 150000 * 5/11; no speed, no ETA per node.
  EXPECT_NE(text.find("     - "), std::string::npos) << text;
  EXPECT_NE(text.find("   0%  --"), std::string::npos) << text;
  // The job's ETA from the elapsed time needs more than 1 % done.
  EXPECT_EQ(text.find("ETA "), std::string::npos) << text;
}

TEST(RenderTopTest, AFinishedJobIsFullWithItsEfficiencyAndResult) {
  json job =
      Job("Succeeded", 150000, {Node("pi4b-0", 5, 5000, 68000), Node("pi3b-0", 1, 1000, 14000)});
  job["status"]["completionTime"] = "2026-11-26T06:00:14Z";
  job["status"]["makespanSeconds"] = 13.5;
  job["status"]["efficiency"] = 0.91;
  job["status"]["result"] = {{"primes", {{"count", 25997}, {"sum", "0x00000000dd1a962a"}}}};
  auto view = TopViewFromJob(job, kStart + 100);
  ASSERT_TRUE(view.ok());
  EXPECT_DOUBLE_EQ(*view->elapsed_s, 14);  // to the completion, not now
  const std::string text = RenderTop(*view, 100);
  EXPECT_NE(text.find("100.0% of the work  150000/150000 items  makespan 14s"), std::string::npos)
      << text;
  EXPECT_NE(text.find("] 100%  --"), std::string::npos) << text;
  EXPECT_NE(text.find("efficiency 0.910 of the physical limit"), std::string::npos) << text;
  EXPECT_NE(text.find("result 25997 primes, checksum 0x00000000dd1a962a"), std::string::npos)
      << text;
  // A result this program cannot read is shown as it is.
  job["status"]["result"] = {{"primes", {{"count", "x"}}}};
  EXPECT_NE(RenderTop(*TopViewFromJob(job, kStart), 100).find(R"(result {"primes":{"count":"x"}})"),
            std::string::npos);
}

// Issue 42: with skewed items the count says little. 20 s into a job whose
// 12 largest items are most of its cost, 30 of 60 items are done but only
// 25 of its 60 cost units: the ETA follows the cost left (35 units at 1.5 +
// 0.5 units per second: 17.5 s), and each bar its node's cost.
TEST(RenderTopTest, ProgressBarsAndEtaFollowTheCostNotTheCount) {
  json a = Node("pi4b-0", 3, 1.0, 10);
  a["cost"] = 18.75;
  a["costSpeed"] = 1.5;
  json b = Node("pi3b-0", 1, 1.0, 20);
  b["cost"] = 6.25;
  b["costSpeed"] = 0.5;
  json job = Job("Running", 30, {a, b});
  job["status"]["items"] = 60;
  job["status"]["completedCost"] = 25;
  auto view = TopViewFromJob(job, kStart + 20);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  const std::vector<std::string> lines = Lines(RenderTop(*view, 100));
  EXPECT_NE(lines[1].find(" 41.7% of the work  30/60 items  ETA 18s"), std::string::npos)
      << lines[1];
  // pi4b-0 expects 3/4 of the 60: 18.75 is 41 %, (45 - 18.75) / 1.5 = 17.5 s.
  EXPECT_NE(lines[4].find("  41%  18s"), std::string::npos) << lines[4];
  // pi3b-0 expects 15: 6.25 is 41 %, though it ran twice the items.
  EXPECT_NE(lines[5].find("  41%  18s"), std::string::npos) << lines[5];
}

// The job of ProgressBarsAndEtaFollowTheCostNotTheCount, where the policy
// learned that each item costs half a mean item to start: an item takes
// 0.31 s + 0.625 s x its declared cost.
json LearnedStartCostJob() {
  json a = Node("pi4b-0", 3, 1.0, 10);
  a["cost"] = 18.75;
  a["costSpeed"] = 1.5;  // 12.5 busy seconds
  json b = Node("pi3b-0", 1, 1.0, 20);
  b["cost"] = 6.25;
  b["costSpeed"] = 0.5;  // 12.5 busy seconds
  json job = Job("Running", 30, {a, b});
  job["status"]["items"] = 60;
  job["status"]["completedCost"] = 25;
  job["status"]["costModel"] = {{"startCost", 0.5},
                                {"learned", true},
                                {"samples", 64},
                                {"secondsPerCost", 0.625},
                                {"startSeconds", 0.31}};
  return job;
}

TEST(TopViewTest, ReadsTheCostModel) {
  auto view = TopViewFromJob(LearnedStartCostJob(), kStart + 20);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  ASSERT_TRUE(view->cost_model.has_value());
  EXPECT_EQ(view->cost_model->start_cost, 0.5);
  EXPECT_TRUE(view->cost_model->learned);
  EXPECT_EQ(view->cost_model->samples, 64u);
  EXPECT_EQ(view->cost_model->seconds_per_cost, 0.625);
  EXPECT_EQ(view->cost_model->start_seconds, 0.31);
  json wrong = LearnedStartCostJob();
  wrong["status"]["costModel"]["learned"] = "yes";
  EXPECT_EQ(TopViewFromJob(wrong, kStart).status().message(),
            "status.costModel.learned: expected true or false, got \"yes\"");
  EXPECT_FALSE(TopViewFromJob(RunningJob(), kStart)->cost_model.has_value());
}

// With a learned start cost the work is the declared cost plus half a mean
// item per item: 60 + 30 = 90, of which 25 + 15 = 40 are done. pi4b-0 did
// 18.75 + 5 in 12.5 s (1.9 a second), pi3b-0 6.25 + 10 (1.3 a second): the
// node that ran the many small items is not as slow as its declared cost
// says, and both finish in (90 - 40) / 3.2 = 15.6 s.
TEST(RenderTopTest, BarsAndEtaFollowTheLearnedStartCostAndOneLineShowsIt) {
  auto view = TopViewFromJob(LearnedStartCostJob(), kStart + 20);
  ASSERT_TRUE(view.ok()) << view.status().ToString();
  const std::vector<std::string> lines = Lines(RenderTop(*view, 100));
  ASSERT_GE(lines.size(), 7u);
  EXPECT_NE(lines[1].find(" 44.4% of the work  30/60 items  ETA 16s"), std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[2],
            "cost model: an item takes 0.31 s + 0.625 s x its cost (learned from 64 reports)");
  // pi4b-0 expects 90 x 1.9 / 3.2 = 53.4: 23.75 is 44 %, 15.6 s left.
  EXPECT_NE(lines[5].find("  44%  16s"), std::string::npos) << lines[5];
  // pi3b-0 expects 36.6: 16.25 is 44 %, where by declared cost it was 41 %.
  EXPECT_NE(lines[6].find("  44%  16s"), std::string::npos) << lines[6];
  for (const std::string& line : Lines(RenderTop(*view, 60))) EXPECT_LE(line.size(), 60u) << line;
}

// While the fit has not told a start cost apart, the declared costs stand:
// the figures are the declared ones, and the line says so.
TEST(RenderTopTest, ADeclaredCostModelKeepsTheDeclaredFiguresAndSaysSo) {
  json job = LearnedStartCostJob();
  job["status"]["costModel"] = {
      {"startCost", 0}, {"learned", false}, {"samples", 12}, {"secondsPerCost", 1}};
  const std::vector<std::string> lines = Lines(RenderTop(*TopViewFromJob(job, kStart + 20), 100));
  EXPECT_NE(lines[1].find(" 41.7% of the work  30/60 items  ETA 18s"), std::string::npos)
      << lines[1];
  EXPECT_EQ(lines[2],
            "cost model: an item takes 1 s x its cost (declared; no start cost found in 12 "
            "reports)");
  EXPECT_NE(lines[5].find("  41%  18s"), std::string::npos) << lines[5];
  job["status"]["costModel"].erase("secondsPerCost");
  EXPECT_EQ(Lines(RenderTop(*TopViewFromJob(job, kStart + 20), 100))[2],
            "cost model: the declared costs (no start cost found in 12 reports)");
}

// A node's expected share moves as its speed is learned; what top draws
// from one redraw to the next never goes backwards.
TEST(RenderTopTest, NoBarGoesBackwardsFromOneRedrawToTheNext) {
  json a = Node("pi4b-0", 1, 1.0, 10);
  a["cost"] = 20;
  a["costSpeed"] = 1;
  json b = Node("pi3b-0", 1, 1.0, 10);
  b["cost"] = 10;
  b["costSpeed"] = 1;
  json job = Job("Running", 20, {a, b});
  job["status"]["items"] = 60;
  job["status"]["completedCost"] = 30;
  TopTrail trail;
  const std::vector<std::string> first =
      Lines(RenderTop(*TopViewFromJob(job, kStart + 10), 100, &trail));
  EXPECT_NE(first[4].find("  66%"), std::string::npos) << first[4];  // 20 of 30
  // pi4b-0 turns out three times as fast: its share is now 45, and 24 of it
  // is 53 %; the bar stays at 66 % until the node passes it.
  job["status"]["nodes"][0]["cost"] = 24;
  job["status"]["nodes"][0]["costSpeed"] = 3;
  const std::vector<std::string> second =
      Lines(RenderTop(*TopViewFromJob(job, kStart + 12), 100, &trail));
  EXPECT_NE(second[4].find("  66%"), std::string::npos) << second[4];
  EXPECT_NE(Lines(RenderTop(*TopViewFromJob(job, kStart + 12), 100))[4].find("  53%"),
            std::string::npos)
      << "without a trail the bar is what the status says now";
}

// Between two status writes the implied finish holds still; when a new
// status puts it later, top says by how much and why, once.
TEST(RenderTopTest, AnEtaThatMovesTheFinishLaterSaysWhy) {
  json a = Node("pi4b-0", 1, 1.0, 10);
  a["cost"] = 20;
  a["costSpeed"] = 2;
  json b = Node("pi3b-0", 1, 1.0, 10);
  b["cost"] = 10;
  b["costSpeed"] = 1;
  json job = Job("Running", 20, {a, b});
  job["status"]["items"] = 120;
  job["status"]["completedCost"] = 30;
  job["metadata"]["managedFields"] = json::parse(R"([{"subresource": "status",
                                                       "time": "2026-11-26T06:00:10Z"}])");
  TopTrail trail;
  // 90 left at 3/s: 30 s after the write at kStart + 10, the finish at kStart + 40.
  std::string line = Lines(RenderTop(*TopViewFromJob(job, kStart + 10), 100, &trail))[1];
  EXPECT_NE(line.find("ETA 30s"), std::string::npos) << line;
  line = Lines(RenderTop(*TopViewFromJob(job, kStart + 20), 100, &trail))[1];
  EXPECT_NE(line.find("ETA 20s"), std::string::npos) << line;
  EXPECT_EQ(line.find("later"), std::string::npos) << line;
  // A new write at kStart + 20: pi4b-0 slowed to 1/s, 50 left at 2/s, 25 s:
  // the finish moves from kStart + 40 to kStart + 45.
  job["status"]["completedCost"] = 70;
  job["status"]["nodes"][0]["cost"] = 60;
  job["status"]["nodes"][0]["costSpeed"] = 1;
  job["metadata"]["managedFields"][0]["time"] = "2026-11-26T06:00:20Z";
  line = Lines(RenderTop(*TopViewFromJob(job, kStart + 20), 100, &trail))[1];
  EXPECT_NE(line.find("ETA 25s (later by 5s: the nodes' speed fell 3 -> 2/s)"), std::string::npos)
      << line;
  line = Lines(RenderTop(*TopViewFromJob(job, kStart + 21), 100, &trail))[1];
  EXPECT_EQ(line.find("later"), std::string::npos) << "said once: " << line;
}

TEST(RenderTopTest, FormatSecondsReadsAtAGlance) {
  EXPECT_EQ(FormatSeconds(0), "0s");
  EXPECT_EQ(FormatSeconds(42.4), "42s");
  EXPECT_EQ(FormatSeconds(185), "3m05s");
  EXPECT_EQ(FormatSeconds(3720), "1h02m");
  EXPECT_EQ(FormatSeconds(-1), "--");
  EXPECT_EQ(FormatSeconds(1.0 / 0.0), "--");
}

TEST(JobReportTest, AFinishedJobHasItsGanttAndTable) {
  json job =
      Job("Succeeded", 150000, {Node("pi4b-0", 5, 5000, 68000), Node("pi3b-<0>", 1, 1000, 14000)});
  job["status"]["makespanSeconds"] = 14;
  job["status"]["idealSeconds"] = 12.6;
  job["status"]["efficiency"] = 0.9;
  job["status"]["result"] = {{"primes", {{"count", 25997}}}};
  auto html = RenderJobReport(job);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_EQ(html->rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_NE(html->find("<svg"), std::string::npos);
  EXPECT_NE(html->find("makespan 14.00 s against a physical limit of 12.60 s (efficiency 0.900"),
            std::string::npos);
  EXPECT_NE(html->find("25997"), std::string::npos);
  // 68000 items at 5000 items/s: 13.60 busy seconds.
  EXPECT_NE(html->find("<td>13.60</td>"), std::string::npos);
  EXPECT_NE(html->find("pi3b-&lt;0&gt;"), std::string::npos);
  EXPECT_EQ(html->find("pi3b-<0>"), std::string::npos);
}

// The energy the operator stated (status.energy, status.nodes[].energyJoules)
// and each node's ratio to its own baseline are in the report, per node and
// per item.
TEST(JobReportTest, TheReportStatesTheEnergyPerNodeAndPerItem) {
  json job =
      Job("Succeeded", 150000, {Node("pi4b-0", 5, 5000, 68000), Node("pi3b-0", 1, 1000, 14000)});
  job["status"]["makespanSeconds"] = 14;
  job["status"]["nodes"][0]["energyJoules"] = 85.4;
  job["status"]["nodes"][0]["baselineRatio"] = 0.52;
  job["status"]["nodes"][1]["energyJoules"] = 60.2;
  job["status"]["energy"] = {{"joules", 145.6},
                             {"joulesPerItem", 0.001776},
                             {"complete", true},
                             {"estimate", false},
                             {"summary", "145.6 J (0.0404 Wh), 0.001776 J per item"}};
  auto html = RenderJobReport(job);
  ASSERT_TRUE(html.ok()) << html.status().ToString();
  EXPECT_NE(html->find("Estimated energy: 145.6 J (0.0404 Wh), 0.001776 J per item"),
            std::string::npos)
      << *html;
  EXPECT_NE(html->find("<td>0.520</td><td>85.4</td><td>0.001256</td>"), std::string::npos) << *html;
  EXPECT_NE(html->find("<td>-</td><td>60.2</td><td>0.0043</td>"), std::string::npos) << *html;
  // Without status.energy the report says why.
  job["status"].erase("energy");
  html = RenderJobReport(job);
  ASSERT_TRUE(html.ok());
  EXPECT_NE(html->find("No energy estimate"), std::string::npos);
}

TEST(JobReportTest, ARunningJobHasNoReportYet) {
  auto html = RenderJobReport(RunningJob());
  ASSERT_FALSE(html.ok());
  EXPECT_EQ(html.status().code(), StatusCode::kTerminal);
  EXPECT_NE(html.status().message().find("is Running: a report needs a finished job"),
            std::string::npos)
      << html.status().message();
}

TEST(OperatorHistoryTest, ReadsTheChartsArguments) {
  const OperatorHistory store = OperatorHistoryFromArgs(
      {"operator", "--leader-elect", "--lease-namespace=ballast-system", "--lease-name=ballast",
       "--history-configmap=ballast-system/ballast-history"},
      "ballast-system");
  EXPECT_EQ(store.configmap, "ballast-system/ballast-history");
  EXPECT_EQ(store.prometheus_url, "");
  const OperatorHistory prometheus =
      OperatorHistoryFromArgs({"operator", "--prometheus-url", "http://prometheus.monitoring:9090",
                               "--prometheus-window=604800"},
                              "ballast-system");
  EXPECT_EQ(prometheus.prometheus_url, "http://prometheus.monitoring:9090");
  EXPECT_EQ(prometheus.window, "604800");
  EXPECT_EQ(prometheus.configmap, "");
  EXPECT_TRUE(OperatorHistoryFromArgs({"operator", "--no-history"}, "x").disabled);
}

TEST(OperatorHistoryTest, WithoutAFlagTheOperatorsDefaultStore) {
  EXPECT_EQ(OperatorHistoryFromArgs({"operator"}, "ns").configmap,
            "default/ballast-operator-history");
  EXPECT_EQ(
      OperatorHistoryFromArgs({"--lease-namespace", "b", "--lease-name", "op"}, "ns").configmap,
      "b/op-history");
  EXPECT_EQ(OperatorHistoryFromArgs({"--history-configmap=speeds"}, "ns").configmap, "ns/speeds");
}

TEST(ServiceProxyTest, AServicesUrlGoesThroughTheApiServer) {
  EXPECT_EQ(*ServiceProxyBase("http://prometheus.monitoring:9090"),
            "/api/v1/namespaces/monitoring/services/http:prometheus:9090/proxy");
  EXPECT_EQ(*ServiceProxyBase("http://prometheus-server.monitoring.svc.cluster.local/prom/"),
            "/api/v1/namespaces/monitoring/services/http:prometheus-server:80/proxy/prom");
  EXPECT_EQ(*ServiceProxyBase("https://p.m.svc:8443"),
            "/api/v1/namespaces/m/services/https:p:8443/proxy");
}

TEST(ServiceProxyTest, AnythingElseSaysToPortForward) {
  for (const char* url :
       {"http://10.0.0.5:9090", "http://prometheus:9090", "ftp://p.m:1", "http://p.m:port",
        "http://p.m.example.com:9090", "http://P.m:9090", "http://p.m:9090/x?y=1"}) {
    auto base = ServiceProxyBase(url);
    ASSERT_FALSE(base.ok()) << url;
    EXPECT_EQ(base.status().code(), StatusCode::kInvalid);
    EXPECT_NE(base.status().message().find("--prometheus URL"), std::string::npos)
        << base.status().message();
  }
}

// Random bytes and values where the API server's object or the operator's
// arguments hold text: the readers say Invalid or read it, the view stays
// within the width and free of control characters, the proxy path stays a
// path of a Service. Randomized; prints its seed (BALLAST_TEST_SEED replays).
TEST(HostileInputTest, RandomFieldsNeverBreakTheViewOrTheProxyPath) {
  const uint64_t seed = testing_support::TestSeed();
  SCOPED_TRACE(::testing::Message() << "BALLAST_TEST_SEED=" << seed);
  std::mt19937_64 random(seed);
  const auto text = [&random](size_t max) {
    std::string out(random() % max, ' ');
    for (char& c : out) c = static_cast<char>(random() % 256);
    return out;
  };
  const std::vector<json> values = {json(nullptr),    json(-1),  json(1e300),   json(-0.5),
                                    json(UINT64_MAX), json("x"), json::array(), json::object()};
  const std::vector<std::string> fields = {"phase",       "completedItems",    "items",
                                           "workers",     "startTime",         "completionTime",
                                           "nodeSummary", "excludedNodeCount", "makespanSeconds",
                                           "result"};
  for (int round = 0; round < 300; ++round) {
    json job = RunningJob();
    job["status"][fields[random() % fields.size()]] = values[random() % values.size()];
    job["status"]["nodes"][random() % 3]["name"] = text(80);
    job["status"]["conditions"] = {
        {{"type", "Ready"}, {"status", "True"}, {"reason", text(40)}, {"message", text(400)}}};
    job["spec"]["policy"] = random() % 2 ? json(text(60)) : values[random() % values.size()];
    if (random() % 4 == 0) job["spec"]["policy"] = {{"name", values[random() % values.size()]}};
    if (random() % 4 == 0) {
      job["status"]["conditions"][0]["status"] = values[random() % values.size()];
      job["metadata"]["name"] = values[random() % values.size()];
    }
    auto view = TopViewFromJob(job, kStart + static_cast<double>(random() % 100000));
    if (!view.ok()) continue;
    const int width = 60 + static_cast<int>(random() % 200);
    for (const std::string& line : Lines(RenderTop(*view, width))) {
      ASSERT_LE(line.size(), static_cast<size_t>(width)) << line;
      for (const char c : line) ASSERT_FALSE(static_cast<unsigned char>(c) < 0x20) << line;
    }
    auto base = ServiceProxyBase("http://" + text(40));
    if (base.ok()) {
      EXPECT_EQ(base->rfind("/api/v1/namespaces/", 0), 0u) << *base;
    }
    const OperatorHistory history = OperatorHistoryFromArgs({text(30), text(30), text(30)}, "ns");
    EXPECT_FALSE(history.configmap.empty() && history.prometheus_url.empty());
  }
}

TEST(PluginNameTest, TheProgramIsThePluginUnderItsKubectlName) {
  EXPECT_TRUE(IsKubectlPluginName("kubectl-ballast"));
  EXPECT_TRUE(IsKubectlPluginName("/home/u/.krew/bin/kubectl-ballast"));
  EXPECT_FALSE(IsKubectlPluginName("ballast"));
  EXPECT_FALSE(IsKubectlPluginName("/usr/bin/kubectl-ballast-old"));
  EXPECT_FALSE(IsKubectlPluginName(nullptr));
}

}  // namespace
}  // namespace ballast::cli
