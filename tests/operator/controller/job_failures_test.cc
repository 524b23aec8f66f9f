// The words that name a job's failed items (operator/controller/job_failures.h):
// bounded, by number or by value.
#include "operator/controller/job_failures.h"

#include <gtest/gtest.h>

#include "core/job/failure_policy.h"

namespace ballast::controller {
namespace {

using workload::Result;

Result Failures(int ranges) {
  Result result = Result::ExecSucceeded(10);
  for (int i = 0; i < ranges; ++i) {
    const uint64_t begin = 10 * static_cast<uint64_t>(i) + 7;
    EXPECT_TRUE(result.Merge(Result::ExecFailed({begin, begin + (i == 1 ? 3 : 1)}, 1 + i, 3)).ok());
  }
  return result;
}

TEST(JobFailuresTest, FailedItemsAreNamedByNumberWithTheirExitCodeAndAttempts) {
  EXPECT_EQ(NameFailedItems(Failures(0), {}), "");
  EXPECT_EQ(NameFailedItems(Failures(2), {}),
            "item 7 (exit code 1 after 3 attempts); items 17-19 (exit code 2 after 3 attempts)");
  EXPECT_EQ(NameFailedItems(Result::Primes(3, 10), {}), "");
}

TEST(JobFailuresTest, ListedItemsAreNamedByTheirValues) {
  std::vector<std::string> values;
  for (int i = 0; i < 40; ++i) values.push_back("photo-" + std::to_string(i) + ".jpg");
  EXPECT_EQ(NameFailedItems(Failures(2), {.values = &values}),
            "photo-7.jpg (item 7, exit code 1 after 3 attempts); photo-17.jpg and 2 more (items "
            "17-19, exit code 2 after 3 attempts)");
  Result refused = Result::ExecFailed({3, 4}, 0, 1, "result file: not JSON");
  EXPECT_EQ(NameFailedItems(refused, {.values = &values}),
            "photo-3.jpg (item 3, result file: not JSON after 1 attempt)");
}

// A list dealt largest first: the job's item 0 is the costliest, which the
// user wrote on line 4 (after a blank line); a message names it there, not by
// its place in the deal.
TEST(JobFailuresTest, ListedItemsAreNamedWhereTheUserWroteThem) {
  auto list = workload::ParseItemLines("1 small.mp4\n2 mid.mp4\n\n9 large.mp4\n",
                                       workload::LineFormat::kCostValue, "clips");
  ASSERT_TRUE(list.ok()) << list.status().message();
  list->order = balance::ItemOrder::kLargestFirst;
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kExec;
  spec.exec.command = {"true"};
  ASSERT_TRUE(workload::AttachItems(&spec, *std::move(list), "clips").ok());
  ASSERT_EQ((*spec.item_values)[0], "large.mp4");
  Result failed = Result::ExecSucceeded(0);
  ASSERT_TRUE(failed.Merge(Result::ExecFailed({0, 1}, 1, 2)).ok());
  EXPECT_EQ(NameFailedItems(failed, workload::NamesOf(spec)),
            "large.mp4 (line 4, exit code 1 after 2 attempts)");
  Result both = Result::ExecSucceeded(0);
  ASSERT_TRUE(both.Merge(Result::ExecFailed({0, 3}, 1, 2)).ok());
  EXPECT_EQ(NameFailedItems(both, workload::NamesOf(spec)),
            "large.mp4 and 2 more (lines 4, 2, 1, exit code 1 after 2 attempts)");
  EXPECT_EQ(both.Summary(workload::NamesOf(spec)),
            "0 items succeeded, 3 failed: lines 4, 2, 1 (large.mp4, mid.mp4, small.mp4) exit 1 "
            "after 2 attempts");
}

// An inline list (spec.itemsFrom.list) names an item by its index there.
TEST(JobFailuresTest, InlineListedItemsAreNamedByTheirIndex) {
  workload::ItemList list{
      .values = {"a", "b", "c"}, .costs = {1, 5, 2}, .order = balance::ItemOrder::kLargestFirst};
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kExec;
  spec.exec.command = {"true"};
  ASSERT_TRUE(workload::AttachItems(&spec, std::move(list), "spec.itemsFrom.list").ok());
  Result failed = Result::ExecSucceeded(0);
  ASSERT_TRUE(failed.Merge(Result::ExecFailed({1, 2}, 3, 1)).ok());
  EXPECT_EQ(NameFailedItems(failed, workload::NamesOf(spec)),
            "c (list[2], exit code 3 after 1 attempt)");
}

// A thousand failed ranges make a message of five and a count.
TEST(JobFailuresTest, TheMessageIsBoundedWhateverFailed) {
  const std::string text = NameFailedItems(Failures(1000), {});
  EXPECT_LT(text.size(), 300u) << text;
  EXPECT_NE(text.find("; and 995 more ranges"), std::string::npos) << text;
}

// The failure policy (core/job/failure_policy.h): unset runs the rest and
// fails at the end; a written maximum fails at once past it.
TEST(JobFailuresTest, TheFailurePolicyJudgesFailedItems) {
  using job::FailedItemsVerdict;
  EXPECT_EQ(job::JudgeFailedItems(0, std::nullopt), FailedItemsVerdict::kNone);
  EXPECT_EQ(job::JudgeFailedItems(0, 0), FailedItemsVerdict::kNone);
  EXPECT_EQ(job::JudgeFailedItems(3, std::nullopt), FailedItemsVerdict::kRunTheRest);
  EXPECT_EQ(job::JudgeFailedItems(1, 0), FailedItemsVerdict::kFailNow);
  EXPECT_EQ(job::JudgeFailedItems(1, 1), FailedItemsVerdict::kTolerated);
  EXPECT_EQ(job::JudgeFailedItems(2, 1), FailedItemsVerdict::kFailNow);
  EXPECT_TRUE(job::FailsAtTheEnd(1, std::nullopt));
  EXPECT_FALSE(job::FailsAtTheEnd(1, 1));
  EXPECT_FALSE(job::FailsAtTheEnd(0, std::nullopt));
  EXPECT_EQ(job::FailurePolicyName(std::nullopt), "failurePolicy.maxFailedItems unset");
  EXPECT_EQ(job::FailurePolicyName(2), "failurePolicy.maxFailedItems 2");
}

}  // namespace
}  // namespace ballast::controller
