// The words that name a job's failed items (operator/controller/job_failures.h):
// bounded, by number or by value.
#include "operator/controller/job_failures.h"

#include <gtest/gtest.h>

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
  EXPECT_EQ(NameFailedItems(Failures(0), nullptr), "");
  EXPECT_EQ(NameFailedItems(Failures(2), nullptr),
            "item 7 (exit code 1 after 3 attempts); items 17-19 (exit code 2 after 3 attempts)");
  EXPECT_EQ(NameFailedItems(Result::Primes(3, 10), nullptr), "");
}

TEST(JobFailuresTest, ListedItemsAreNamedByTheirValues) {
  std::vector<std::string> values;
  for (int i = 0; i < 40; ++i) values.push_back("photo-" + std::to_string(i) + ".jpg");
  EXPECT_EQ(NameFailedItems(Failures(2), &values),
            "photo-7.jpg (item 7, exit code 1 after 3 attempts); photo-17.jpg and 2 more (items "
            "17-19, exit code 2 after 3 attempts)");
  Result refused = Result::ExecFailed({3, 4}, 0, 1, "result file: not JSON");
  EXPECT_EQ(NameFailedItems(refused, &values),
            "photo-3.jpg (item 3, result file: not JSON after 1 attempt)");
}

// A thousand failed ranges make a message of five and a count.
TEST(JobFailuresTest, TheMessageIsBoundedWhateverFailed) {
  const std::string text = NameFailedItems(Failures(1000), nullptr);
  EXPECT_LT(text.size(), 300u) << text;
  EXPECT_NE(text.find("; and 995 more ranges"), std::string::npos) << text;
  EXPECT_TRUE(TooManyFailedItems(1, 0));
  EXPECT_FALSE(TooManyFailedItems(1, 1));
}

}  // namespace
}  // namespace ballast::controller
