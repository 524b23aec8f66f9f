// Create refusals: what the API server said when it refused a job's worker
// pods (or its token Secret), sorted by whether waiting can change it, and
// the per-job backoff of the creates that follow, as the Job controller and
// controller-runtime's rate limiter pace theirs.
//
//   HTTP      the API server's message             class                  then
//   --------  -----------------------------------  ---------------------  -----------------
//   403       ... violates PodSecurity ...         PodSecurity            fails after bound
//   403       ... no PriorityClass with name ...   PriorityClassNotFound  fails after bound
//   403       admission webhook ... denied the     AdmissionDenied        fails after bound
//             request ...
//   403       ... exceeded quota ...               QuotaExceeded          waits
//   403       anything else (RBAC, a namespace     Forbidden              waits
//             being deleted, a quota's status
//             not written yet)
//   400, 422  the pod as built is invalid          Invalid                fails at once
//   5xx, 429  timeouts, a connection error         CreateFailed           waits
//
// Every class but Invalid is backed off; "fails after bound": once the
// job's creates have been refused for fail_after.
//
// The backoff: no create for base after the first refusal, doubling with
// each refusal in a row up to cap; while refused, one pod per attempt (a
// probe: a thousand-node job sends one request, not a thousand); a create
// that succeeds, or a new generation of the job (its template edited), ends
// it. A class that only a person can change (the namespace's PodSecurity
// level, a PriorityClass, a webhook's policy) fails the job once its creates
// have been refused for fail_after: with the defaults (1 s doubling, 30 s)
// after 6 attempts.
//
// Thread-safety: values and pure functions.
#pragma once

#include <chrono>
#include <cstdint>
#include <optional>
#include <string>

#include "core/common/status.h"
#include "operator/api/weighted_job.h"

namespace ballast::controller {

using SteadyTime = std::chrono::steady_clock::time_point;

enum class RefusalClass {
  kPodSecurity,
  kPriorityClassNotFound,
  kAdmissionDenied,
  kQuotaExceeded,
  kForbidden,
  kInvalid,
  kCreateFailed,
};

// PodSecurity, PriorityClassNotFound, ...: the reason of the WorkersRefused
// condition and of the Warning event (WorkerPodRefused for Invalid).
api::Reason RefusalReason(RefusalClass refusal);

// True for the classes that fail the job after fail_after (PodSecurity,
// PriorityClassNotFound, AdmissionDenied); Invalid fails at once.
bool FailsAfterBound(RefusalClass refusal);

struct CreateRefusal {
  RefusalClass kind = RefusalClass::kCreateFailed;
  std::string message;  // the API server's, without the client's "forbidden (...): " prefix
  bool operator==(const CreateRefusal&) const = default;
};

// The class of a create's error as the Kubernetes client returns it
// (net/kube/client.h StatusFromHttp: a 403 is Unavailable, its message
// "forbidden (RBAC or a quota does not allow it): " and the API server's;
// 400 and 422 are Invalid). Requires !error.ok().
CreateRefusal ClassifyCreateRefusal(const Status& error);

struct CreateBackoffOptions {
  std::chrono::milliseconds base{1000};   // the wait after the first refusal
  std::chrono::milliseconds cap{300000};  // the longest wait
  // How long the creates of a class FailsAfterBound refuses may be refused
  // before the job fails; 0: at the first refusal.
  std::chrono::milliseconds fail_after{30000};
};

// The refusals of one job's creates in a row, kept in its memory.
struct CreateBackoff {
  uint32_t refusals = 0;   // in a row; 0: the last create succeeded (or none was refused)
  CreateRefusal last;      // the last refusal
  uint32_t of_class = 0;   // refusals in a row of last.kind
  SteadyTime since{};      // the first of those
  SteadyTime next{};       // no create before this
  int64_t generation = 0;  // of the job when last refused
  bool operator==(const CreateBackoff&) const = default;

  bool refused() const { return refusals > 0; }
};

// The wait after the `refusals`-th refusal in a row (>= 1): base * 2^(refusals - 1), at most cap.
std::chrono::milliseconds BackoffDelay(uint32_t refusals, const CreateBackoffOptions& options);

// What a refusal taken into the backoff means for the job.
struct RefusalOutcome {
  bool announce = false;  // the first in a row, or of another class than the last
  bool fail = false;      // the job fails now (Invalid, or a FailsAfterBound class past fail_after)
  std::chrono::milliseconds refused_for{0};  // since the first refusal of this class in the row
};

// Counts `refusal`, seen at `now` for generation `generation` of the job,
// into `backoff` and sets when the next create may go.
RefusalOutcome TakeRefusal(CreateBackoff& backoff, const CreateRefusal& refusal, SteadyTime now,
                           int64_t generation, const CreateBackoffOptions& options);

// How many of `missing` pods a pass may create at `now` (all when not
// refused; none before backoff.next; one, the probe, after). A new
// generation of the job ends the wait (its template may have been fixed).
size_t CreatesAllowed(const CreateBackoff& backoff, size_t missing, SteadyTime now,
                      int64_t generation);

}  // namespace ballast::controller
