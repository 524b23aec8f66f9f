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

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/result.h"

namespace ballast::worker {

// Items [items*index/count, items*(index+1)/count): the slices of indexes
// 0..count-1 tile [0, items) in order and differ in size by at most one.
// Requires index < count and 0 < count <= kMaxSliceCount.
inline constexpr uint64_t kMaxSliceCount = uint64_t{1} << 32;
balance::Range SliceOf(uint64_t items, uint64_t index, uint64_t count);

struct SliceRequest {
  std::string spec_json;  // a WeightedJob's spec as JSON (workload, items)
  uint64_t index = 0;     // the completion index
  uint64_t count = 1;     // the completions
};

// Computes the request's slice. Returns its result, or Invalid naming the
// field of a bad spec or an index out of range, or the kernel's error.
StatusOr<workload::Result> RunSlice(const SliceRequest& request);

}  // namespace ballast::worker
