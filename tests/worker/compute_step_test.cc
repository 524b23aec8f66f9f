// One step of a lease on the worker's threads (worker/compute_step.h), with
// the real primes kernel: the same result however many threads and kernel
// calls, and a step cut short stops exactly at the cut.
#include "worker/compute_step.h"

#include <gtest/gtest.h>

#include "worker/kernels/kernel.h"
#include "worker/lease_cut.h"

namespace ballast::worker {
namespace {

using balance::Range;
using workload::WorkloadKind;

workload::WorkloadSpec Primes() {
  workload::WorkloadSpec spec;
  spec.kind = WorkloadKind::kPrimes;
  spec.primes = {20000, workload::PrimesSpec::Method::kTrial};
  spec.items = workload::DefaultItems(spec);
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

class ComputeStepTest : public ::testing::Test {
 protected:
  void SetUp() override {
    auto kernel = kernels::MakeKernel(spec_);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    kernel_ = std::move(*kernel);
  }

  workload::Result OneCall(Range range) {
    auto result = kernel_->Compute(range);
    EXPECT_TRUE(result.ok()) << result.status().ToString();
    return result.ok() ? *result : workload::Result::Empty(WorkloadKind::kPrimes);
  }

  workload::WorkloadSpec spec_ = Primes();
  std::unique_ptr<kernels::Kernel> kernel_;
};

TEST_F(ComputeStepTest, AnyThreadsAndCallsGiveTheStepsResult) {
  const Range step{spec_.items / 4, spec_.items / 2};
  const workload::Result whole = OneCall(step);
  std::atomic<uint64_t> no_cut{LeaseCut::kNoEnd};
  for (unsigned threads : {1u, 2u, 3u, 7u}) {
    for (unsigned chunks : {1u, 8u, 1000u}) {
      auto computed = ComputeStep(*kernel_, step, threads, chunks, WorkloadKind::kPrimes, no_cut);
      ASSERT_TRUE(computed.ok()) << computed.status().ToString();
      EXPECT_EQ(computed->range, step) << threads << " threads, " << chunks << " calls";
      EXPECT_EQ(computed->result, whole) << threads << " threads, " << chunks << " calls";
    }
  }
}

TEST_F(ComputeStepTest, AStepCutShortStopsExactlyAtTheCut) {
  const Range step{100, 100 + 64};
  for (uint64_t cut : {100u, 101u, 130u, 131u, 163u}) {
    std::atomic<uint64_t> limit{cut};
    for (unsigned threads : {1u, 2u, 4u}) {
      auto computed = ComputeStep(*kernel_, step, threads, 8, WorkloadKind::kPrimes, limit);
      ASSERT_TRUE(computed.ok()) << computed.status().ToString();
      EXPECT_EQ(computed->range, (Range{100, cut})) << threads << " threads";
      const workload::Result expected =
          cut > 100 ? OneCall({100, cut}) : workload::Result::Empty(WorkloadKind::kPrimes);
      EXPECT_EQ(computed->result, expected) << "cut at " << cut << ", " << threads << " threads";
    }
  }
}

TEST_F(ComputeStepTest, AStepOfFewerItemsThanThreadsUsesOneThreadAnItem) {
  std::atomic<uint64_t> no_cut{LeaseCut::kNoEnd};
  auto computed = ComputeStep(*kernel_, {5, 7}, 16, 8, WorkloadKind::kPrimes, no_cut);
  ASSERT_TRUE(computed.ok());
  EXPECT_EQ(computed->range, (Range{5, 7}));
  EXPECT_EQ(computed->result, OneCall({5, 7}));
}

}  // namespace
}  // namespace ballast::worker
