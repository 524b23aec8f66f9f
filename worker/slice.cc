#include "worker/slice.h"

#include <fmt/format.h>

#include "common/bounded_json.h"
#include "job/job_json.h"
#include "kernels/kernel.h"

namespace ballast::worker {

balance::Range SliceOf(uint64_t items, uint64_t index, uint64_t count) {
  // 128-bit products: items * index overflows 64 bits for large jobs.
  const auto bound = [&](uint64_t i) {
    return static_cast<uint64_t>(static_cast<unsigned __int128>(items) * i / count);
  };
  return {bound(index), bound(index + 1)};
}

StatusOr<workload::Result> RunSlice(const SliceRequest& request) {
  if (request.count == 0 || request.index >= request.count) {
    return Status::Invalid(fmt::format("completion index {} is not below the completions {}",
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
  return (*kernel)->Compute(SliceOf(job->workload.items, request.index, request.count));
}

}  // namespace ballast::worker
