// What a worker's result can be for the items it hands in, checked before
// anything is merged: a result that no computation of those items could give
// is refused at once, whoever sent it, instead of being merged (or, with
// verification, caught only when its range happens to be sampled).
//
//   primes  count <= PrimesCountBound of the numbers the items stand for;
//           sum 0 when there are no primes or the job has `checksum: false`;
//           otherwise, where count x the largest number fits in 64 bits, the
//           sum lies between count x the smallest and count x the largest
//           number of the span (there is no wrap-around to hide in)
//   matmul  blocks == the items of the range (one block of C per item)
//   exec    succeeded + the failed items == the items of the range; every
//           failure inside the range, disjoint from the others, with an exit
//           code a process can end with (1..255) and 1..retries+1 attempts
// Negative counts never get this far: the result's parser refuses them
// (workload::Result::FromJson).
//
// These are bounds, not proofs: a result inside them may still be wrong
// (0 primes for a range that holds some); only recomputation tells
// (verification.h, docs/trust.md).
//
// Thread-safety: pure functions.
#pragma once

#include <cstdint>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::coordinator {

// An upper bound on the primes among the numbers [lo, hi): the numbers of
// the span prime to 30 (8 of every 30), and those of 2, 3 and 5 that lie in
// it. Exact arithmetic, no overflow for any hi.
uint64_t PrimesCountBound(uint64_t lo, uint64_t hi);

// Ok when `result` is possible for the items `range` of a job of `spec`.
// Invalid otherwise, the message naming the field ("result.primes.count:
// 3000 primes among the numbers [0, 200) (items [0, 100)) is impossible: at
// most 54"). Requires result.kind() == spec.kind and range inside the job.
Status CheckResultPossible(const workload::WorkloadSpec& spec, balance::Range range,
                           const workload::Result& result);

}  // namespace ballast::coordinator
