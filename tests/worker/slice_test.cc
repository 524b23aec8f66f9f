// `ballast-worker slice` (worker/slice.h): the shares of an Indexed Job's
// pods tile the job, and their merged results equal the whole job's.
#include "worker/slice.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "tests/support/primes_workload.h"
#include "tests/support/shell_command.h"
#include "worker/kernels/reference.h"

namespace ballast::worker {
namespace {

const char* kPrimesSpec = R"({"workload": {"primes": {"limit": 30000, "method": "trial"}}})";

TEST(SliceTest, SharesTileTheItemsInOrderAndDifferByAtMostOne) {
  for (const uint64_t items : {1ull, 7ull, 150000ull, (1ull << 62) + 3}) {
    for (const uint64_t count : {1ull, 3ull, 7ull}) {
      if (count > items) continue;
      uint64_t next = 0, smallest = UINT64_MAX, largest = 0;
      for (uint64_t i = 0; i < count; ++i) {
        const balance::Range share = SliceOf(items, i, count);
        EXPECT_EQ(share.begin, next) << items << " items, share " << i << " of " << count;
        next = share.end;
        smallest = std::min(smallest, share.size());
        largest = std::max(largest, share.size());
      }
      EXPECT_EQ(next, items);
      EXPECT_LE(largest - smallest, 1u);
    }
  }
}

TEST(SliceTest, TheLargestCountsCutExactlyWithoutA128BitInteger) {
  const uint64_t items = (uint64_t{1} << 62) + 3, count = kMaxSliceCount;
  const uint64_t q = items / count;  // 2^30, and 3 items left over
  EXPECT_EQ(SliceOf(items, 0, count), (balance::Range{0, q}));
  EXPECT_EQ(SliceOf(items, count - 1, count).end, items);
  // floor(items * i / count) = q * i + floor(3 * i / 2^32).
  const uint64_t i = count / 2;
  EXPECT_EQ(SliceOf(items, i, count).begin, q * i + 1);
  EXPECT_EQ(SliceOf(items, i - 1, count).end, SliceOf(items, i, count).begin);
}

TEST(SliceTest, MergedSharesEqualTheWholeJobsReference) {
  const auto reference = kernels::ReferenceResult(testing::PrimesWorkload(30000));
  ASSERT_TRUE(reference.ok());
  auto merged = workload::Result::Empty(workload::WorkloadKind::kPrimes);
  for (uint64_t i = 0; i < 7; ++i) {
    const auto share = RunSlice({kPrimesSpec, i, 7});
    ASSERT_TRUE(share.ok()) << share.status().message();
    ASSERT_TRUE(merged.Merge(*share).ok());
  }
  EXPECT_EQ(merged, *reference);
  EXPECT_EQ(merged.primes().count, 3245u);  // pi(30000)
}

TEST(SliceTest, CostSharesTileTheItemsAndCarryEqualCost) {
  // Linear cost: item i costs in proportion to i + 1/2, so equal-cost shares
  // shrink along the items; each holds a third of the cost, give or take an item.
  const balance::CostModel linear(30000, balance::CostShape::kLinear);
  uint64_t next = 0;
  for (uint64_t i = 0; i < 3; ++i) {
    const balance::Range share = CostSliceOf(linear, i, 3);
    EXPECT_EQ(share.begin, next);
    next = share.end;
    EXPECT_NEAR(linear.Cost(share), 10000.0, 2.0) << "share " << i;
  }
  EXPECT_EQ(next, 30000u);
  EXPECT_GT(CostSliceOf(linear, 0, 3).size(), 2 * CostSliceOf(linear, 2, 3).size());
  // Per-item costs: one dear item takes a share to itself, and a share of
  // less than one item's cost may be empty.
  const balance::CostModel listed(
      std::make_shared<const std::vector<double>>(std::vector<double>{1, 1, 8, 1, 1}));
  EXPECT_EQ(CostSliceOf(listed, 0, 3), (balance::Range{0, 2}));
  EXPECT_EQ(CostSliceOf(listed, 1, 3), (balance::Range{2, 2}));
  EXPECT_EQ(CostSliceOf(listed, 2, 3), (balance::Range{2, 5}));
}

TEST(SliceTest, MergedCostSharesEqualTheWholeJobsReference) {
  const auto reference = kernels::ReferenceResult(testing::PrimesWorkload(30000));
  ASSERT_TRUE(reference.ok());
  auto merged = workload::Result::Empty(workload::WorkloadKind::kPrimes);
  for (uint64_t i = 0; i < 5; ++i) {
    const auto share = RunSlice({kPrimesSpec, i, 5, SliceSplit::kCost});
    ASSERT_TRUE(share.ok()) << share.status().message();
    ASSERT_TRUE(merged.Merge(*share).ok());
  }
  EXPECT_EQ(merged, *reference);
}

TEST(SliceTest, BadRequestsAreRefusedNamingWhat) {
  EXPECT_EQ(RunSlice({kPrimesSpec, 3, 3}).status().message(),
            "completion index 3 is not below the completions 3 (which must be in [1, 2^32])");
  const auto bad_limit = RunSlice({R"({"workload": {"primes": {"limit": "x"}}})", 0, 1});
  EXPECT_NE(bad_limit.status().message().find("spec.workload.primes.limit"), std::string::npos)
      << bad_limit.status().message();
  EXPECT_NE(RunSlice({"[[[", 0, 1}).status().message().find("--spec"), std::string::npos);
  const auto too_many = RunSlice({R"({"workload": {"primes": {"limit": 10}}, "items": 2})", 0, 3});
  EXPECT_EQ(too_many.status().code(), StatusCode::kInvalid);
}

TEST(SliceTest, TheSubcommandReadsTheIndexFromTheEnvironmentAndWritesTheResultFile) {
  const std::string file = ::testing::TempDir() + "slice-result-" + std::to_string(getpid());
  const auto [code, out] = testing::RunShellCommand(
      std::string("JOB_COMPLETION_INDEX=2 ") + BALLAST_WORKER_BINARY + " slice --count 3 --spec '" +
      kPrimesSpec + "' --result-file " + file);
  ASSERT_EQ(code, 0) << out;
  const auto expected = RunSlice({kPrimesSpec, 2, 3});
  ASSERT_TRUE(expected.ok());
  const std::string line =
      nlohmann::json{{"index", 2}, {"count", 3}, {"result", expected->ToJson()}}.dump();
  EXPECT_EQ(out, line + "\n");
  std::ifstream in(file);
  std::stringstream written;
  written << in.rdbuf();
  EXPECT_EQ(written.str(), line);
  std::remove(file.c_str());

  const auto [bad_code, bad_out] =
      testing::RunShellCommand(std::string("JOB_COMPLETION_INDEX=x ") + BALLAST_WORKER_BINARY +
                               " slice --count 3 --spec '" + kPrimesSpec + "' 2>&1");
  EXPECT_EQ(bad_code, 2);
  EXPECT_NE(bad_out.find("JOB_COMPLETION_INDEX=x is not an index"), std::string::npos) << bad_out;
}

}  // namespace
}  // namespace ballast::worker
