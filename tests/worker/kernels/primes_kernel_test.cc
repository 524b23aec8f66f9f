// Tests of the primes kernels: known prime counts, agreement with the plain
// sieve of ReferenceResult, and identical results however the job is split
// and on however many threads.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "tests/worker/kernels/split_helpers.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/reference.h"

namespace ballast::kernels {
namespace {

using testing::ComputeAll;
using testing::PrintedSeed;
using testing::RandomSplit;
using workload::PrimesSpec;
using workload::Result;
using workload::WorkloadKind;
using workload::WorkloadSpec;

WorkloadSpec Primes(uint64_t limit, PrimesSpec::Method method, uint64_t items = 0) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kPrimes;
  spec.primes = {limit, method};
  spec.items = items == 0 ? workload::DefaultItems(spec) : items;
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

Result Whole(const WorkloadSpec& spec) {
  auto kernel = MakeKernel(spec);
  EXPECT_TRUE(kernel.ok()) << kernel.status().ToString();
  auto result = (*kernel)->Compute({0, spec.items});
  EXPECT_TRUE(result.ok()) << result.status().ToString();
  return result.ok() ? *result : Result::Empty(WorkloadKind::kPrimes);
}

TEST(PrimesKernelTest, BelowThreeHundredThousandAreTheSeedZeroCount) {
  for (auto method : {PrimesSpec::Method::kTrial, PrimesSpec::Method::kSieve}) {
    const WorkloadSpec spec = Primes(300000, method);
    const Result result = Whole(spec);
    EXPECT_EQ(result.primes().count, 25997u);
    auto reference = ReferenceResult(spec);
    ASSERT_TRUE(reference.ok());
    EXPECT_EQ(result, *reference);
  }
}

TEST(PrimesKernelTest, SmallLimitsCountTwoOnceAndNeverOne) {
  for (uint64_t limit = 2; limit < 60; ++limit) {
    for (auto method : {PrimesSpec::Method::kTrial, PrimesSpec::Method::kSieve}) {
      SCOPED_TRACE(limit);
      const WorkloadSpec spec = Primes(limit, method);
      auto reference = ReferenceResult(spec);
      ASSERT_TRUE(reference.ok());
      EXPECT_EQ(Whole(spec), *reference);
      // One item per number (sieve) or per odd candidate (trial), computed one by one.
      const WorkloadSpec fine =
          Primes(limit, method,
                 method == PrimesSpec::Method::kSieve ? limit : workload::DefaultItems(spec));
      auto kernel = MakeKernel(fine);
      ASSERT_TRUE(kernel.ok());
      Result total = Result::Empty(WorkloadKind::kPrimes);
      for (uint64_t item = 0; item < fine.items; ++item) {
        auto part = (*kernel)->Compute({item, item + 1});
        ASSERT_TRUE(part.ok());
        ASSERT_TRUE(total.Merge(*part).ok());
      }
      EXPECT_EQ(total, *reference);
    }
  }
  EXPECT_EQ(Whole(Primes(3, PrimesSpec::Method::kTrial)), Result::Primes(1, 2));
}

TEST(PrimesKernelTest, AnySplitOnAnyThreadsGivesTheWholeJobsResult) {
  std::mt19937_64 random(PrintedSeed("AnySplitOnAnyThreadsGivesTheWholeJobsResult"));
  // Trial division costs n - 2 divisions per prime n: below 30000 (15000
  // items, up to 1501 ranges) a hundredth of the divisions below 300000,
  // whose count BelowThreeHundredThousandAreTheSeedZeroCount checks.
  const std::vector<WorkloadSpec> specs = {
      Primes(30000, PrimesSpec::Method::kTrial),
      Primes(300000, PrimesSpec::Method::kSieve, 997),
      Primes(10'000'000, PrimesSpec::Method::kSieve, 301),
  };
  for (const WorkloadSpec& spec : specs) {
    SCOPED_TRACE(workload::WorkloadToJson(spec).dump());
    auto reference = ReferenceResult(spec);
    ASSERT_TRUE(reference.ok());
    auto kernel = MakeKernel(spec);
    ASSERT_TRUE(kernel.ok());
    for (int threads : {1, 3}) {
      const auto ranges = RandomSplit(spec.items, 1 + spec.items / 10, random);
      EXPECT_EQ(ComputeAll(**kernel, WorkloadKind::kPrimes, ranges, threads), *reference);
    }
  }
}

TEST(PrimesKernelTest, SieveBelowTenToTheSevenMatchesTheReference) {
  const WorkloadSpec spec = Primes(10'000'000, PrimesSpec::Method::kSieve);
  const Result result = Whole(spec);
  EXPECT_EQ(result.primes().count, 664579u);
  auto reference = ReferenceResult(spec);
  ASSERT_TRUE(reference.ok());
  EXPECT_EQ(result, *reference);
}

TEST(PrimesKernelTest, SieveWithoutChecksumCountsAtPrimesievesOwnSpeed) {
  WorkloadSpec spec = Primes(10'000'000, PrimesSpec::Method::kSieve, 37);
  spec.primes.checksum = false;
  std::mt19937_64 random(PrintedSeed("SieveWithoutChecksum"));
  EXPECT_EQ(
      ComputeAll(**MakeKernel(spec), WorkloadKind::kPrimes, RandomSplit(spec.items, 9, random), 2),
      Result::Primes(664579, 0));
  spec.primes.method = PrimesSpec::Method::kTrial;
  spec.primes.limit = 30000;
  spec.items = workload::DefaultItems(spec);
  EXPECT_EQ(Whole(spec), Result::Primes(3245, 0));  // pi(30000)
}

TEST(PrimesKernelTest, SieveBelowTenToTheNineOnTwoThreads) {
  // The sum of the primes below 10^9 is OEIS A046731(9).
  const WorkloadSpec spec = Primes(1'000'000'000, PrimesSpec::Method::kSieve);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  std::vector<balance::Range> ranges;
  for (uint64_t begin = 0; begin < spec.items; begin += 16) {
    ranges.push_back({begin, std::min(begin + 16, spec.items)});
  }
  EXPECT_EQ(ComputeAll(**kernel, WorkloadKind::kPrimes, ranges, 2),
            Result::Primes(50847534, 24739512092254535ULL));
}

TEST(PrimesKernelTest, RangesOutsideTheJobAreInvalid) {
  const WorkloadSpec spec = Primes(100, PrimesSpec::Method::kTrial);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ((*kernel)->Compute({0, 51}).status().code(), StatusCode::kInvalid);
  EXPECT_EQ((*kernel)->Compute({10, 10}).value(), Result::Primes(0, 0));
  WorkloadSpec bad = spec;
  bad.items = 0;
  EXPECT_EQ(MakeKernel(bad).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace ballast::kernels
