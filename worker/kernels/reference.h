// ReferenceResult: a whole job's Result computed in one process, naively —
// the yardstick the kernels' tests and the benchmark check against.
//
//   primes  a plain sieve of Eratosthenes below the limit (limit <= 10^9)
//   matmul  the textbook triple loop over integer entries (n <= 1024)
//
// Thread-safety: pure; safe from any thread.
#pragma once

#include "core/common/status.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::kernels {

// The Result of all of `spec`'s items. Returns Invalid for exec (its result is
// whatever the command does), for a spec that fails ValidateWorkload, or for
// inputs beyond the limits above.
StatusOr<workload::Result> ReferenceResult(const workload::WorkloadSpec& spec);

}  // namespace ballast::kernels
