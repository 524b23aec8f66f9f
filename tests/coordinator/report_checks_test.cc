// JobSession's parts alone: the checks of a report (coordinator/report_checks.h),
// the ledger of workers' bounds (worker_ledger.h) and the exactly-once
// ledger of finished items (merged_items.h).
#include "coordinator/report_checks.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <vector>

#include "coordinator/merged_items.h"
#include "coordinator/worker_ledger.h"

namespace ballast::coordinator {
namespace {

using balance::Range;
using protocol::ReportMessage;
using workload::Result;
using workload::WorkloadKind;

TEST(ReportChecksTest, AReportIsStaleOnlyFromAnotherSessionBeforeAnyLease) {
  ReportMessage report;
  report.session = "earlier";
  EXPECT_TRUE(IsStale(0, "now", report));
  EXPECT_FALSE(IsStale(1, "now", report));  // this session leased to it already
  EXPECT_FALSE(IsStale(0, "", report));     // no session: nothing is stale
  report.session = "now";
  EXPECT_FALSE(IsStale(0, "now", report));
  report.session = "";
  EXPECT_FALSE(IsStale(0, "now", report));
}

TEST(ReportChecksTest, NumbersMustBeSecondsAndAPositionOfTheJob) {
  ReportMessage report;
  report.position = 10;
  EXPECT_TRUE(CheckNumbers(report, 10).ok());
  report.position = 11;
  EXPECT_EQ(CheckNumbers(report, 10).code(), StatusCode::kInvalid);
  report.position = 0;
  report.calc_seconds = -1;
  EXPECT_EQ(CheckNumbers(report, 10).code(), StatusCode::kInvalid);
  report.calc_seconds = 0;
  report.cpu_seconds = std::numeric_limits<double>::quiet_NaN();
  EXPECT_EQ(CheckNumbers(report, 10).code(), StatusCode::kInvalid);
}

TEST(ReportChecksTest, ACompletionOutsideTheGrantsIsRefusedOrStale) {
  workload::WorkloadSpec spec;
  spec.kind = WorkloadKind::kPrimes;
  spec.items = 100;
  balance::IntervalSet granted;
  granted.Add({0, 10});
  ReportMessage report;
  report.worker = "a";
  report.completed.push_back({{5, 15}, Result::Empty(WorkloadKind::kPrimes).ToJson()});
  EXPECT_EQ(CheckCompletions(spec, granted, false, report).status().code(), StatusCode::kInvalid);
  EXPECT_EQ(CheckCompletions(spec, granted, true, report).status().code(), StatusCode::kConflict);
  // Past the job's end it is never stale: no session leased it.
  report.completed[0].range = {95, 105};
  EXPECT_EQ(CheckCompletions(spec, granted, true, report).status().code(), StatusCode::kInvalid);
}

TEST(WorkerLedgerTest, ReportedSecondsAreCutToWhatTheCoordinatorSawPass) {
  WorkerLedger workers;
  workers.Append({"a", 1, 0, 1}, 2, /*now=*/0);
  ASSERT_EQ(workers.Find("a"), 0u);
  EXPECT_FALSE(workers.Find("b").has_value());
  ReportMessage report;
  report.calc_seconds = 100;
  report.cpu_seconds = 100;
  const auto [calc, cpu] = workers.BoundedSeconds(0, report, /*now=*/10);
  EXPECT_DOUBLE_EQ(calc, 10 + kReportSlackSeconds);
  EXPECT_DOUBLE_EQ(cpu, 2 * (10 + kReportSlackSeconds));
  EXPECT_EQ(workers.clamped(), 1u);
}

TEST(WorkerLedgerTest, ASilentLeaseAndAWorkerNeverHeardFromExpire) {
  WorkerLedger workers;
  workers.Append({"silent", 1, 0, 1}, 1, 0);
  workers.Append({"never", 1, 0, 1}, 1, 0);
  workers.RecordContact(0, 0, 0, /*now=*/1);
  workers.RecordReply(0, balance::Reply{balance::Reply::Kind::kLease, {0, 5}, 0, {}});
  EXPECT_DOUBLE_EQ(workers.NextDeadline(30, 120), 31);
  EXPECT_EQ(workers.Expired(31, 30, 120), (std::vector<std::string>{"silent"}));
  EXPECT_EQ(workers.Expired(120, 30, 120), (std::vector<std::string>{"silent", "never"}));
  EXPECT_EQ(workers.at(0).view.leases, 1u);
  EXPECT_EQ(workers.HoldingLeases({"silent", "never", "other"}), std::set<std::string>{"silent"});
}

TEST(MergedItemsTest, EachItemIsMergedOnce) {
  MergedItems items(balance::CostModel(10, balance::CostShape::kUniform), 10,
                    WorkloadKind::kPrimes);
  const std::vector<protocol::Completion> completed = {{{0, 4}, {}}, {{2, 6}, {}}, {{6, 10}, {}}};
  const std::vector<Result> results(3, Result::Empty(WorkloadKind::kPrimes));
  const MergedItems::HandedIn handed = items.HandIn(completed, results, /*now=*/5);
  ASSERT_EQ(handed.merged.size(), 2u);  // [2, 6) overlaps [0, 4): dropped
  EXPECT_EQ(handed.merged[0].index, 0u);
  EXPECT_EQ(handed.merged[1].index, 2u);
  EXPECT_DOUBLE_EQ(handed.handed_in_cost, 12);
  EXPECT_DOUBLE_EQ(handed.dropped_cost, 4);
  EXPECT_DOUBLE_EQ(handed.merged_cost, 8);
  EXPECT_EQ(items.dropped(), 1u);
  EXPECT_EQ(items.finished().size(), 8u);
  EXPECT_DOUBLE_EQ(items.finished_at(), 0);  // [4, 6) is not finished
  balance::IntervalSet leased;
  leased.Add({4, 5});
  EXPECT_EQ(items.Unassigned(leased), 1u);
}

}  // namespace
}  // namespace ballast::coordinator
