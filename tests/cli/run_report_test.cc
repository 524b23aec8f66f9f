// What `ballast run` prints of its processes at its end (cli/run/run_report.h):
// a sentence and a JSON object that claim nothing the run does not know.
#include "cli/run/run_report.h"

#include <gtest/gtest.h>

#include <nlohmann/json.hpp>
#include <string>

namespace ballast::cli::run_report_test {
namespace {

constexpr char kRunGroup[] = "/sys/fs/cgroup/unified/ballast/run4242-job-abcdef";

bool Has(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

TEST(DescribeContainmentTest, ACleanEndSaysWhatWasKilledAndWhatHadEscaped) {
  ContainmentReport report;
  report.by_cgroup = true;
  report.where = kRunGroup;
  report.killed = 3;
  EXPECT_EQ(DescribeContainment(report),
            "the run's processes are stopped: 3 were still running at its end and were killed "
            "with its cgroup (cgroup.kill); none remain, and its cgroups are removed");
  report.escaped = 2;
  EXPECT_EQ(DescribeContainment(report),
            "the run's processes are stopped: 3 were still running at its end and were killed "
            "with its cgroup (cgroup.kill); 2 had left its cgroups and were found (as the run's "
            "orphans, or in its CPU-quota groups) and killed; none remain, and its cgroups are "
            "removed");
}

// Regression (issue 46): the run said `clean: true` and nothing of the three
// quota groups and the sleeps a command left outside its cgroups.
TEST(DescribeContainmentTest, WhatRemainsAndEachCgroupLeftAreNamedWithWhy) {
  ContainmentReport report;
  report.by_cgroup = true;
  report.where = kRunGroup;
  report.escaped = 2;
  report.remaining = 1;
  report.groups_left = {
      {"/sys/fs/cgroup/cpu/ballast/run4242-job-abcdef-a", "1 process remains in it"},
      {"/sys/fs/cgroup/cpu/ballast/run4242-job-abcdef-b", "rmdir: Device or resource busy"}};
  ASSERT_FALSE(report.clean());
  const std::string text = DescribeContainment(report);
  EXPECT_TRUE(Has(text, "the run's processes are not all stopped")) << text;
  EXPECT_TRUE(Has(text, "; 1 still running after the kill")) << text;
  EXPECT_TRUE(Has(text, "2 had left its cgroups")) << text;
  EXPECT_TRUE(Has(text,
                  "2 of its cgroups could not be removed: "
                  "/sys/fs/cgroup/cpu/ballast/run4242-job-abcdef-a (1 process remains in it), "
                  "/sys/fs/cgroup/cpu/ballast/run4242-job-abcdef-b (rmdir: Device or resource "
                  "busy)"))
      << text;
  EXPECT_FALSE(Has(text, "none remain")) << text;
  EXPECT_FALSE(Has(text, "are removed")) << text;

  const nlohmann::json json = ContainmentJson(report);
  EXPECT_EQ(json["clean"], false);
  EXPECT_EQ(json["escaped"], 2);
  EXPECT_EQ(json["remaining"], 1);
  EXPECT_EQ(json["cgroups_left"], 2);
  ASSERT_EQ(json["left_cgroups"].size(), 2u);
  EXPECT_EQ(json["left_cgroups"][0]["cgroup"], "/sys/fs/cgroup/cpu/ballast/run4242-job-abcdef-a");
  EXPECT_EQ(json["left_cgroups"][0]["why"], "1 process remains in it");
}

TEST(DescribeContainmentTest, ACgroupLeftAloneIsNotClean) {
  ContainmentReport report;
  report.by_cgroup = true;
  report.where = kRunGroup;
  report.groups_left = {{kRunGroup, "a cgroup below it remains"}};
  EXPECT_FALSE(report.clean());
  EXPECT_EQ(ContainmentJson(report)["clean"], false);
  const std::string text = DescribeContainment(report);
  EXPECT_TRUE(Has(text, "none remain; 1 of its cgroups could not be removed: " +
                            std::string(kRunGroup) + " (a cgroup below it remains)"))
      << text;
}

TEST(DescribeContainmentTest, WithoutCgroupsNothingIsClaimedClean) {
  ContainmentReport report;
  report.where = "--no-cgroups";
  report.killed = 1;
  report.escaped = 2;
  const std::string text = DescribeContainment(report);
  EXPECT_TRUE(Has(text,
                  "1 processes left in their sessions were killed; 2 had left its workers' "
                  "sessions and were found"))
      << text;
  EXPECT_TRUE(Has(text, "may still run")) << text;
  const nlohmann::json json = ContainmentJson(report);
  EXPECT_EQ(json["clean"], false);
  EXPECT_TRUE(json["remaining"].is_null());
  EXPECT_EQ(json["contained_by"], "session");
}

}  // namespace
}  // namespace ballast::cli::run_report_test

namespace ballast::cli::run_report_test {
namespace {

// The energy section of `ballast run --report`'s page: the total, and per
// node its watts, seconds, joules and joules per item; a node without a
// power figure has dashes, and an estimated figure a star.
TEST(EnergyHtmlTest, EachNodesEnergyAndItsShareOfEachItem) {
  health::JobEnergy energy = health::EstimateJobEnergy(
      {{"pi4b-0", health::BoardPower{"pi-4b", 3.1, 6.1, false, "published"}, 10, 400},
       {"pi5-0", health::BoardPower{"pi-5", 2.7, 8.8, true, "estimate"}, 8, 600},
       {"pc-<0>", std::nullopt, 10, 100}},
      10);
  const std::string html = EnergyHtml(energy);
  // 6.1 W over 10 s; 8.8 W over 8 s and 2.7 W over 2 s.
  EXPECT_TRUE(Has(html,
                  "<tr><td>pi4b-0</td><td>3.1</td><td>6.1</td><td>10.00</td><td>0.00</td>"
                  "<td>61.0</td><td>400</td><td>0.1525</td></tr>"))
      << html;
  EXPECT_TRUE(Has(html,
                  "<tr><td>pi5-0</td><td>2.7*</td><td>8.8*</td><td>8.00</td><td>2.00</td>"
                  "<td>75.8</td><td>600</td><td>0.1263</td></tr>"))
      << html;
  EXPECT_TRUE(Has(html, "<td>pc-&lt;0&gt;</td><td>-</td><td>-</td>")) << html;
  EXPECT_TRUE(Has(html, "Estimated: " + health::DescribeEnergy(energy))) << html;
  EXPECT_TRUE(Has(html, "* an estimate")) << html;
}

}  // namespace
}  // namespace ballast::cli::run_report_test
