// ComputeStep: one step of a lease, computed on the worker's threads.
//
// The step is split into one slice per thread and each slice into `chunks`
// kernel calls. A reply that arrives while the step runs may cut the lease
// short (worker/lease_cut.h): every call is clipped to the cut as it reads
// it, and none starts at or past it. Threads read the cut at different
// times, so what the step returns is its longest contiguous prefix: the
// slices up to the first that stopped short, and that one's part.
//
// Thread-safety: `limit` may be lowered from any thread while it runs; the
// kernel is called from `threads` threads at once.
#pragma once

#include <atomic>
#include <cstdint>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/result.h"
#include "worker/kernels/kernel.h"

namespace ballast::worker {

// What a step computed: the range from its start to where it stopped, and
// that range's result.
struct ComputedStep {
  balance::Range range;
  workload::Result result;
};

StatusOr<ComputedStep> ComputeStep(kernels::Kernel& kernel, balance::Range step, unsigned threads,
                                   unsigned chunks, workload::WorkloadKind kind,
                                   const std::atomic<uint64_t>& limit);

}  // namespace ballast::worker
