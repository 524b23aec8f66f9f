// One factory per kernel, private to worker/kernels; MakeKernel (kernel.cc)
// picks among them. Each requires a spec that passed ValidateWorkload.
#pragma once

#include <fmt/format.h>

#include <cstddef>
#include <memory>
#include <string>

#include "worker/kernels/kernel.h"

namespace ballast::kernels {

std::unique_ptr<Kernel> MakePrimesTrialKernel(const workload::WorkloadSpec& spec);
std::unique_ptr<Kernel> MakePrimesSieveKernel(const workload::WorkloadSpec& spec);
std::unique_ptr<Kernel> MakeMatmulKernel(const workload::WorkloadSpec& spec);
std::unique_ptr<Kernel> MakeExecKernel(const workload::WorkloadSpec& spec);

// Removes the run directories (TMPDIR/ballast-run-<pid>-*) in `parent` of
// workers that are gone (killed before they removed them): only directories
// this user owns, never a symbolic link (nor anything one leads to), so a
// shared /tmp's trees of other users stay. MakeExecKernel calls it. Returns
// how many it removed.
size_t RemoveStaleRunDirs(const std::string& parent);

// Ok when `items` lies within the job's [0, spec.items); Invalid otherwise.
inline Status CheckRange(const workload::WorkloadSpec& spec, balance::Range items) {
  if (items.end < items.begin || items.end > spec.items) {
    return Status::Invalid(
        fmt::format("items {} are outside the job's [0, {})", items.ToString(), spec.items));
  }
  return Status::Ok();
}

}  // namespace ballast::kernels
