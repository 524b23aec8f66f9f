#include "operator/controller/create_refusals.h"

#include <algorithm>
#include <iterator>
#include <string_view>

namespace ballast::controller {

namespace {

// How the Kubernetes client words a 403 (net/kube/client.cc StatusFromHttp).
constexpr std::string_view kForbiddenPrefix = "forbidden (RBAC or a quota does not allow it): ";

bool Has(std::string_view text, std::string_view part) {
  return text.find(part) != std::string_view::npos;
}

// The class of a 403 from the API server's message.
RefusalClass ForbiddenClass(std::string_view message) {
  // "pods "p-a" is forbidden: violates PodSecurity "restricted:latest": ..."
  if (Has(message, "violates PodSecurity")) return RefusalClass::kPodSecurity;
  // "pods "p-a" is forbidden: no PriorityClass with name high was found"
  if (Has(message, "no PriorityClass with name")) return RefusalClass::kPriorityClassNotFound;
  // "admission webhook "policy.example.com" denied the request: ..."
  if (Has(message, "admission webhook") && Has(message, "denied the request")) {
    return RefusalClass::kAdmissionDenied;
  }
  // "pods "p-b" is forbidden: exceeded quota: pods, requested: pods=1, used: pods=1, ..."
  if (Has(message, "exceeded quota")) return RefusalClass::kQuotaExceeded;
  return RefusalClass::kForbidden;
}

// The reason of each class, in RefusalClass's order.
constexpr api::Reason kRefusalReasons[] = {
    api::Reason::kPodSecurity,     api::Reason::kPriorityClassNotFound,
    api::Reason::kAdmissionDenied, api::Reason::kQuotaExceeded,
    api::Reason::kForbidden,       api::Reason::kWorkerPodRefused,
    api::Reason::kCreateFailed,
};
static_assert(std::size(kRefusalReasons) == static_cast<size_t>(RefusalClass::kCreateFailed) + 1);

}  // namespace

api::Reason RefusalReason(RefusalClass refusal) {
  return kRefusalReasons[static_cast<size_t>(refusal)];
}

bool FailsAfterBound(RefusalClass refusal) {
  return refusal == RefusalClass::kPodSecurity || refusal == RefusalClass::kPriorityClassNotFound ||
         refusal == RefusalClass::kAdmissionDenied;
}

CreateRefusal ClassifyCreateRefusal(const Status& error) {
  const std::string& message = error.message();
  if (error.code() == StatusCode::kInvalid || error.code() == StatusCode::kTerminal) {
    return {RefusalClass::kInvalid, message};
  }
  if (error.code() == StatusCode::kUnavailable && message.starts_with(kForbiddenPrefix)) {
    std::string server = message.substr(kForbiddenPrefix.size());
    const RefusalClass kind = ForbiddenClass(server);
    return {kind, std::move(server)};
  }
  return {RefusalClass::kCreateFailed, message};
}

std::chrono::milliseconds BackoffDelay(uint32_t refusals, const CreateBackoffOptions& options) {
  std::chrono::milliseconds delay = options.base;
  for (uint32_t i = 1; i < refusals && delay < options.cap; ++i) delay *= 2;
  return std::min(delay, options.cap);
}

RefusalOutcome TakeRefusal(CreateBackoff& backoff, const CreateRefusal& refusal, SteadyTime now,
                           int64_t generation, const CreateBackoffOptions& options) {
  // A new generation starts a new row: the template may have been fixed.
  const bool new_row = !backoff.refused() || backoff.generation != generation;
  const bool new_class = new_row || backoff.last.kind != refusal.kind;
  if (new_row) backoff.refusals = 0;
  if (new_class) {
    backoff.of_class = 0;
    backoff.since = now;
  }
  ++backoff.refusals;
  ++backoff.of_class;
  backoff.last = refusal;
  backoff.generation = generation;
  backoff.next = now + BackoffDelay(backoff.refusals, options);
  RefusalOutcome outcome;
  outcome.announce = new_class;
  outcome.refused_for = std::chrono::duration_cast<std::chrono::milliseconds>(now - backoff.since);
  outcome.fail = refusal.kind == RefusalClass::kInvalid ||
                 (FailsAfterBound(refusal.kind) && outcome.refused_for >= options.fail_after);
  return outcome;
}

size_t CreatesAllowed(const CreateBackoff& backoff, size_t missing, SteadyTime now,
                      int64_t generation) {
  if (!backoff.refused() || backoff.generation != generation) return missing;
  if (now < backoff.next) return 0;
  return std::min<size_t>(missing, 1);
}

}  // namespace ballast::controller
