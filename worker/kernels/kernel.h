// Kernel: computes the Result of a range of a job's items — the compute half
// of a worker, with no networking.
//
//   primes (trial)  trial division of each odd candidate, as in seed 000
//   primes (sieve)  primesieve over the numbers the items stand for
//   matmul          blocks of C = A x B with OpenBLAS's cblas_dgemm
//   exec            the user's command in a child process
// The item -> work mappings are core/workload/workload.h's; the results and
// checksums are core/workload/result.h's, so a job's merged Result is the same
// whatever way its items were split (ReferenceResult computes it in one go).
//
// Thread-safety: Compute may be called concurrently from several threads on
// disjoint ranges (a worker runs one thread per core it is given).
#pragma once

#include <chrono>
#include <memory>

#include "core/balance/range.h"
#include "core/common/status.h"
#include "core/workload/result.h"
#include "core/workload/workload.h"

namespace ballast::kernels {

class Kernel {
 public:
  virtual ~Kernel();
  // The Result of `items`, exact for any range within the job's [0, items).
  // Returns Invalid for a range outside the job; Unavailable when a library
  // fails (out of memory, say). A failing exec command is not an error: it is
  // recorded in the Result.
  virtual StatusOr<workload::Result> Compute(balance::Range items) = 0;
};

// The kernel for `spec`. Returns Invalid when the spec does not pass
// workload::ValidateWorkload. For matmul this opens OpenBLAS (once per
// process, with dlopen) and sets it to one thread per call, process-wide: the
// worker parallelizes across items instead. Without OpenBLAS, the matmul
// kernel's Compute returns Unavailable naming the library.
StatusOr<std::unique_ptr<Kernel>> MakeKernel(const workload::WorkloadSpec& spec);

// Ends the exec kernel's commands, for a worker that stops: every command
// running gets SIGTERM in its process group, and SIGKILL after `grace`; from
// then on no command starts, and Compute of an exec kernel returns
// Unavailable ("stopped") for the ranges it did not finish. Returns once
// every command has ended, at most about `grace` and one second later.
// Callable from any thread; does nothing when no exec command runs.
void StopExecCommands(std::chrono::milliseconds grace);

}  // namespace ballast::kernels
