#include "worker/compute_step.h"

#include <algorithm>
#include <thread>
#include <vector>

namespace ballast::worker {
namespace {

using balance::Range;

// One thread's part of a step: [slice.begin, end) computed, and its result.
struct Part {
  uint64_t end = 0;
  StatusOr<workload::Result> result = Status::Invalid("not computed");
};

// Computes `slice` in `chunks` kernel calls, none past `limit`.
Part ComputeSlice(kernels::Kernel& kernel, Range slice, unsigned chunks,
                  workload::WorkloadKind kind, const std::atomic<uint64_t>& limit) {
  workload::Result total = workload::Result::Empty(kind);
  uint64_t at = slice.begin;
  for (unsigned c = 0; c < chunks && at < slice.end; ++c) {
    const uint64_t chunk_end = slice.begin + slice.size() * (c + 1) / chunks;
    if (chunk_end <= at) continue;  // a slice of fewer items than chunks
    const uint64_t end = std::min(chunk_end, limit.load(std::memory_order_relaxed));
    if (end <= at) break;
    auto part = kernel.Compute({at, end});
    if (!part.ok()) return {at, part.status()};
    // Cannot fail: every chunk's result is of the job's kind.
    (void)total.Merge(*part);
    at = end;
  }
  return {at, std::move(total)};
}

}  // namespace

StatusOr<ComputedStep> ComputeStep(kernels::Kernel& kernel, Range step, unsigned threads,
                                   unsigned chunks, workload::WorkloadKind kind,
                                   const std::atomic<uint64_t>& limit) {
  threads = static_cast<unsigned>(std::clamp<uint64_t>(step.size(), 1, threads));
  std::vector<Range> slices;
  for (unsigned t = 0; t < threads; ++t) {
    slices.push_back(
        {step.begin + step.size() * t / threads, step.begin + step.size() * (t + 1) / threads});
  }
  std::vector<Part> parts(threads);
  if (threads == 1) {
    parts[0] = ComputeSlice(kernel, slices[0], chunks, kind, limit);
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) {
      pool.emplace_back(
          [&, t] { parts[t] = ComputeSlice(kernel, slices[t], chunks, kind, limit); });
    }
    for (auto& thread : pool) thread.join();
  }
  ComputedStep computed{{step.begin, step.begin}, workload::Result::Empty(kind)};
  for (unsigned t = 0; t < threads; ++t) {
    if (!parts[t].result.ok()) return parts[t].result.status();
    BALLAST_RETURN_IF_ERROR(computed.result.Merge(*parts[t].result));
    computed.range.end = parts[t].end;
    if (parts[t].end < slices[t].end) break;
  }
  return computed;
}

}  // namespace ballast::worker
