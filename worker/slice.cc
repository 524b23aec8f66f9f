#include "worker/slice.h"

#include <fmt/format.h>

#include "core/common/bounded_json.h"
#include "core/job/job_json.h"
#include "worker/kernels/kernel.h"

namespace ballast::worker {

balance::Range SliceOf(uint64_t items, uint64_t index, uint64_t count) {
  // floor(items * i / count) as q * i + floor(r * i / count), where r * i <
  // count^2 <= 2^64: no 128-bit integer (32-bit ARM has none).
  const uint64_t q = items / count, r = items % count;
  const auto bound = [&](uint64_t i) { return q * i + r * i / count; };
  return {bound(index), bound(index + 1)};
}

balance::Range CostSliceOf(const balance::CostModel& model, uint64_t index, uint64_t count) {
  const uint64_t items = model.items();
  const auto bound = [&](uint64_t i) {
    if (i >= count) return items;
    return model.Advance(
        0, items, static_cast<double>(items) * static_cast<double>(i) / static_cast<double>(count));
  };
  return {bound(index), bound(index + 1)};
}

StatusOr<workload::Result> RunSlice(const SliceRequest& request) {
  if (request.count == 0 || request.count > kMaxSliceCount || request.index >= request.count) {
    return Status::Invalid(fmt::format(
        "completion index {} is not below the completions {} (which must be in [1, 2^32])",
        request.index, request.count));
  }
  auto spec_json = ParseBoundedJson(request.spec_json, "--spec", {.max_bytes = 1 << 20});
  if (!spec_json.ok()) return spec_json.status();
  auto job = job::JobSpecFromJson(*spec_json, "slice");
  if (!job.ok()) return job.status();
  if (request.count > job->workload.items) {
    return Status::Invalid(fmt::format("{} completions for a job of {} items leave some empty",
                                       request.count, job->workload.items));
  }
  auto kernel = kernels::MakeKernel(job->workload);
  if (!kernel.ok()) return kernel.status();
  if (request.split == SliceSplit::kCount) {
    return (*kernel)->Compute(SliceOf(job->workload.items, request.index, request.count));
  }
  const balance::CostModel model(job->workload.items, job->workload.cost, job->workload.item_costs);
  return (*kernel)->Compute(CostSliceOf(model, request.index, request.count));
}

}  // namespace ballast::worker
