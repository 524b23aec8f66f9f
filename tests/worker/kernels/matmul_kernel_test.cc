// Tests of the matmul kernel: its blocks merge to the checksum of the naive
// triple loop (ReferenceResult) however the blocks are split and threaded,
// and the sum of C agrees with an independent identity.
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
using workload::MatmulSpec;
using workload::Matrix;
using workload::Result;
using workload::WorkloadKind;
using workload::WorkloadSpec;

WorkloadSpec Matmul(uint32_t n, uint32_t block, uint64_t seed) {
  WorkloadSpec spec;
  spec.kind = WorkloadKind::kMatmul;
  spec.matmul = {n, block, seed};
  spec.items = workload::DefaultItems(spec);
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

// sum(C) = sum_k (column k of A summed) * (row k of B summed): a check on the
// kernel that shares nothing with the triple loop.
int64_t SumOfProduct(const MatmulSpec& spec) {
  int64_t total = 0;
  for (uint32_t k = 0; k < spec.n; ++k) {
    int64_t column = 0;
    int64_t row = 0;
    for (uint32_t i = 0; i < spec.n; ++i) {
      column += workload::MatmulEntry(spec, Matrix::kA, i, k);
      row += workload::MatmulEntry(spec, Matrix::kB, k, i);
    }
    total += column * row;
  }
  return total;
}

TEST(MatmulKernelTest, WholeJobEqualsTheNaiveReference) {
  for (const WorkloadSpec& spec : {Matmul(64, 64, 1), Matmul(96, 16, 7), Matmul(128, 32, 99)}) {
    SCOPED_TRACE(workload::WorkloadToJson(spec).dump());
    auto kernel = MakeKernel(spec);
    ASSERT_TRUE(kernel.ok()) << kernel.status().ToString();
    auto result = (*kernel)->Compute({0, spec.items});
    ASSERT_TRUE(result.ok()) << result.status().ToString();
    auto reference = ReferenceResult(spec);
    ASSERT_TRUE(reference.ok());
    EXPECT_EQ(*result, *reference);
    EXPECT_EQ(result->matmul().blocks, spec.items);
    EXPECT_EQ(static_cast<int64_t>(result->matmul().sum), SumOfProduct(spec.matmul));
    EXPECT_NE(result->matmul().checksum, 0u);
  }
}

TEST(MatmulKernelTest, AnySplitOnAnyThreadsGivesTheWholeJobsResult) {
  std::mt19937_64 random(PrintedSeed("MatmulKernelTest.AnySplit"));
  const WorkloadSpec spec = Matmul(120, 8, 3);  // 225 blocks, 15 per block row
  auto reference = ReferenceResult(spec);
  ASSERT_TRUE(reference.ok());
  for (int threads : {1, 2, 4}) {
    // A fresh kernel each time, so the lazily generated panels race afresh.
    auto kernel = MakeKernel(spec);
    ASSERT_TRUE(kernel.ok());
    const auto ranges = RandomSplit(spec.items, 40, random);  // ranges cross block rows
    EXPECT_EQ(ComputeAll(**kernel, WorkloadKind::kMatmul, ranges, threads), *reference);
  }
}

TEST(MatmulKernelTest, ChecksumSeesTheSeedAndThePlaceOfEveryBlock) {
  const WorkloadSpec spec = Matmul(32, 8, 5);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  auto first = (*kernel)->Compute({0, 1});
  auto second = (*kernel)->Compute({1, 2});
  ASSERT_TRUE(first.ok() && second.ok());
  EXPECT_NE(first->matmul().checksum, second->matmul().checksum);
  auto other = MakeKernel(Matmul(32, 8, 6));
  ASSERT_TRUE(other.ok());
  EXPECT_NE((*other)->Compute({0, 16}).value(), (*kernel)->Compute({0, 16}).value());
}

TEST(MatmulKernelTest, BadSpecsAndRangesAreInvalid) {
  WorkloadSpec spec = Matmul(32, 8, 5);
  auto kernel = MakeKernel(spec);
  ASSERT_TRUE(kernel.ok());
  EXPECT_EQ((*kernel)->Compute({3, 17}).status().code(), StatusCode::kInvalid);
  spec.matmul.block = 7;
  EXPECT_EQ(MakeKernel(spec).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace ballast::kernels
