// The primes kernels: trial division (seed 000) and primesieve. This is the one
// file that calls primesieve; its exceptions are caught here.
#include <algorithm>
#include <exception>
#include <primesieve.hpp>

#include "worker/kernels/factories.h"

namespace ballast::kernels {
namespace {

using workload::Result;
using workload::WorkloadSpec;

// Seed 000's test (Zubov & Kupin, Figure 1): divide n by every d = 2, 3, ...
// below n and stop at the first divisor. A prime n costs n - 2 divisions, so
// an item's cost grows with n, as the paper's load does. 32-bit division where
// n fits, as it is several times faster than 64-bit.
template <typename Int>
bool DividesByNone(Int n) {
  for (Int d = 2; d < n; ++d) {
    if (n % d == 0) return false;
  }
  return true;
}

bool IsPrimeByTrial(uint64_t n) {
  if (n <= UINT32_MAX) return DividesByNone<uint32_t>(static_cast<uint32_t>(n));
  return DividesByNone<uint64_t>(n);
}

// The sum of [first, last) mod 2^64, in four independent lanes so that it
// keeps up with primesieve's buffer even where the compiler does not vectorize.
uint64_t Sum(const uint64_t* first, const uint64_t* last) {
  uint64_t lanes[4] = {0, 0, 0, 0};
  for (; last - first >= 4; first += 4) {
    lanes[0] += first[0];
    lanes[1] += first[1];
    lanes[2] += first[2];
    lanes[3] += first[3];
  }
  for (; first < last; ++first) lanes[0] += *first;
  return lanes[0] + lanes[1] + lanes[2] + lanes[3];
}

class PrimesTrialKernel : public Kernel {
 public:
  explicit PrimesTrialKernel(const WorkloadSpec& spec) : spec_(spec) {}

  StatusOr<Result> Compute(balance::Range items) override {
    BALLAST_RETURN_IF_ERROR(CheckRange(spec_, items));
    const balance::Range span = workload::PrimesRangeSpan(spec_, items);
    uint64_t count = 0;
    uint64_t sum = 0;
    if (span.begin <= 2 && 2 < span.end) {
      count = 1;
      sum = 2;
    }
    for (uint64_t n = std::max<uint64_t>(3, span.begin | 1); n < span.end; n += 2) {
      if (IsPrimeByTrial(n)) {
        ++count;
        sum += n;
      }
    }
    return Result::Primes(count, spec_.primes.checksum ? sum : 0);
  }

 private:
  WorkloadSpec spec_;
};

// One primesieve::iterator pass over the numbers of the whole range, counting
// and summing the primes from its buffer. Summing needs the primes themselves,
// which costs about 15 % over primesieve's popcount-based count_primes on
// ranges of 64 items; one count_primes call per item to fingerprint per-item
// counts would cost as much in per-call setup (docs/workloads.md, benchmark).
// With `checksum: false` it is one count_primes call per range instead.
class PrimesSieveKernel : public Kernel {
 public:
  explicit PrimesSieveKernel(const WorkloadSpec& spec) : spec_(spec) {}

  StatusOr<Result> Compute(balance::Range items) override {
    BALLAST_RETURN_IF_ERROR(CheckRange(spec_, items));
    const balance::Range span = workload::PrimesRangeSpan(spec_, items);
    if (span.empty()) return Result::Primes(0, 0);
    try {
      if (!spec_.primes.checksum) {
        return Result::Primes(primesieve::count_primes(span.begin, span.end - 1), 0);
      }
      primesieve::iterator primes(span.begin, span.end);
      uint64_t count = 0;
      uint64_t sum = 0;
      for (;;) {
        primes.generate_next_primes();
        const uint64_t* first = primes.primes_;
        const uint64_t* last = first + primes.size_;
        const uint64_t* stop = std::lower_bound(first, last, span.end);
        sum += Sum(first, stop);
        count += static_cast<uint64_t>(stop - first);
        if (stop != last) break;
      }
      return Result::Primes(count, sum);
    } catch (const std::exception& error) {
      return Status::Unavailable(std::string("primesieve: ") + error.what());
    }
  }

 private:
  WorkloadSpec spec_;
};

}  // namespace

std::unique_ptr<Kernel> MakePrimesTrialKernel(const WorkloadSpec& spec) {
  return std::make_unique<PrimesTrialKernel>(spec);
}

std::unique_ptr<Kernel> MakePrimesSieveKernel(const WorkloadSpec& spec) {
  // The worker's own threads are the parallelism. count_primes would
  // otherwise start a thread per core on every call, and those would fight
  // the worker's threads within the node's CPU quota.
  primesieve::set_num_threads(1);
  return std::make_unique<PrimesSieveKernel>(spec);
}

}  // namespace ballast::kernels
