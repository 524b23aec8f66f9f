// `ballast-worker slice`: computes one fixed share of a job with no
// coordinator, as a Kubernetes Indexed Job's pod does (completion index I of
// C). It exists so that benchmarks can run the same kernels as a plain
// Indexed Job beside a WeightedJob (bench/realnodes-bench); nothing in a
// WeightedJob uses it.
//
// Thread-safety: SliceOf is pure; RunSlice computes on the calling thread.
#pragma once

#include <cstdint>
#include <string>

#include "core/balance/cost_model.h"
#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/result.h"

namespace ballast::worker {

// Items [items*index/count, items*(index+1)/count): the slices of indexes
// 0..count-1 tile [0, items) in order and differ in size by at most one.
// Requires index < count and 0 < count <= kMaxSliceCount.
inline constexpr uint64_t kMaxSliceCount = uint64_t{1} << 32;
balance::Range SliceOf(uint64_t items, uint64_t index, uint64_t count);

// Items [b(index), b(index+1)) where b(i) is the last item boundary at which
// the job's cost model (its cost shape or per-item costs) has reached i/count
// of the whole: shares of equal known cost, as a user who knows the costs
// would cut an Indexed Job. They tile [0, items) in order; a share may be
// empty when single items cost more than a share.
balance::Range CostSliceOf(const balance::CostModel& model, uint64_t index, uint64_t count);

// How an Indexed Job's shares are cut: equal counts of items, or equal costs.
enum class SliceSplit { kCount, kCost };

struct SliceRequest {
  std::string spec_json;                  // a WeightedJob's spec as JSON (workload, items)
  uint64_t index = 0;                     // the completion index
  uint64_t count = 1;                     // the completions
  SliceSplit split = SliceSplit::kCount;  // SliceOf or CostSliceOf
};

// Computes the request's slice. Returns its result, or Invalid naming the
// field of a bad spec or an index out of range, or the kernel's error.
StatusOr<workload::Result> RunSlice(const SliceRequest& request);

}  // namespace ballast::worker
