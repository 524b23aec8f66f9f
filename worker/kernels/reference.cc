// ReferenceResult (kernels/reference.h).
#include "worker/kernels/reference.h"

#include <fmt/format.h>

#include <vector>

namespace ballast::kernels {
namespace {

using workload::Matrix;
using workload::Result;

constexpr uint64_t kMaxReferenceLimit = 1'000'000'000;
constexpr uint32_t kMaxReferenceN = 1024;

Result PrimesBelow(uint64_t limit) {
  std::vector<bool> composite(limit, false);
  uint64_t count = 0;
  uint64_t sum = 0;
  for (uint64_t n = 2; n < limit; ++n) {
    if (composite[n]) continue;
    ++count;
    sum += n;
    for (uint64_t multiple = n * n; multiple < limit; multiple += n) composite[multiple] = true;
  }
  return Result::Primes(count, sum);
}

Result Product(const workload::MatmulSpec& spec) {
  const uint32_t n = spec.n;
  std::vector<int64_t> a(size_t{n} * n);
  std::vector<int64_t> b(size_t{n} * n);
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      a[size_t{i} * n + j] = workload::MatmulEntry(spec, Matrix::kA, i, j);
      b[size_t{i} * n + j] = workload::MatmulEntry(spec, Matrix::kB, i, j);
    }
  }
  uint64_t sum = 0;
  uint64_t checksum = 0;
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t j = 0; j < n; ++j) {
      int64_t c = 0;
      for (uint32_t k = 0; k < n; ++k) c += a[size_t{i} * n + k] * b[size_t{k} * n + j];
      sum += static_cast<uint64_t>(c);
      checksum += static_cast<uint64_t>(c) * workload::MatmulWeight(spec, i, j);
    }
  }
  const uint64_t side = workload::MatmulBlocksPerSide(spec);
  return Result::Matmul(side * side, sum, checksum);
}

}  // namespace

StatusOr<Result> ReferenceResult(const workload::WorkloadSpec& spec) {
  BALLAST_RETURN_IF_ERROR(workload::ValidateWorkload(spec));
  switch (spec.kind) {
    case workload::WorkloadKind::kPrimes:
      if (spec.primes.limit > kMaxReferenceLimit) {
        return Status::Invalid(
            fmt::format("reference: primes.limit must be at most {}", kMaxReferenceLimit));
      }
      return PrimesBelow(spec.primes.limit);
    case workload::WorkloadKind::kMatmul:
      if (spec.matmul.n > kMaxReferenceN) {
        return Status::Invalid(
            fmt::format("reference: matmul.size must be at most {}", kMaxReferenceN));
      }
      return Product(spec.matmul);
    case workload::WorkloadKind::kExec:
      break;
  }
  return Status::Invalid("reference: exec has no reference result");
}

}  // namespace ballast::kernels
