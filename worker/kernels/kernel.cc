// MakeKernel: picks the kernel of a workload (kernels/kernel.h).
#include "worker/kernels/kernel.h"

#include <new>

#include "worker/kernels/factories.h"

namespace ballast::kernels {
namespace {

std::unique_ptr<Kernel> MakeFor(const workload::WorkloadSpec& spec) {
  switch (spec.kind) {
    case workload::WorkloadKind::kPrimes:
      return spec.primes.method == workload::PrimesSpec::Method::kTrial
                 ? MakePrimesTrialKernel(spec)
                 : MakePrimesSieveKernel(spec);
    case workload::WorkloadKind::kMatmul:
      return MakeMatmulKernel(spec);
    case workload::WorkloadKind::kExec:
      return MakeExecKernel(spec);
  }
  return nullptr;
}

}  // namespace

Kernel::~Kernel() = default;

StatusOr<std::unique_ptr<Kernel>> MakeKernel(const workload::WorkloadSpec& spec) {
  BALLAST_RETURN_IF_ERROR(workload::ValidateWorkload(spec));
  try {
    return MakeFor(spec);
  } catch (const std::bad_alloc&) {
    return Status::Unavailable("not enough memory for the workload's kernel");
  }
}

}  // namespace ballast::kernels
