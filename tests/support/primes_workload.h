// Test helper shared by the coordinator, worker and local-run tests: the
// workload of a primes job with its default items and cost model.
#pragma once

#include <cstdint>

#include "core/workload/workload.h"

namespace ballast::testing {

// Counting the primes below `limit` by `method` (seed 000's trial division by
// default), resolved as a job file would resolve it.
inline workload::WorkloadSpec PrimesWorkload(
    uint64_t limit, workload::PrimesSpec::Method method = workload::PrimesSpec::Method::kTrial) {
  workload::WorkloadSpec spec;
  spec.kind = workload::WorkloadKind::kPrimes;
  spec.primes.limit = limit;
  spec.primes.method = method;
  spec.items = workload::DefaultItems(spec);
  spec.cost = workload::DefaultCost(spec);
  return spec;
}

}  // namespace ballast::testing
