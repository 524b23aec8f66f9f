// Decide's handling of the creates the API server refuses (decide_internal.h,
// create_refusals.h).
#include <fmt/format.h>

#include <map>
#include <utility>

#include "operator/controller/decide_internal.h"

namespace ballast::controller::decide {

namespace {

using std::chrono::milliseconds;

double Seconds(milliseconds duration) { return static_cast<double>(duration.count()) / 1000; }

// The WorkersRefused condition's message: the API server's words and what
// the operator does about them.
std::string RefusedMessage(const CreateRefusal& refusal, const CreateBackoffOptions& options) {
  if (refusal.kind == RefusalClass::kQuotaExceeded) {
    return fmt::format("waiting for quota: {}; tried again with backoff (at most {:g} s apart)",
                       refusal.message, Seconds(options.cap));
  }
  if (FailsAfterBound(refusal.kind)) {
    return fmt::format(
        "{}; tried again with backoff, the job fails if its pods are still refused "
        "{:g} s after the first refusal",
        refusal.message, Seconds(options.fail_after));
  }
  return fmt::format("{}; tried again with backoff (at most {:g} s apart)", refusal.message,
                     Seconds(options.cap));
}

bool SetRefusedCondition(const PassView& view, api::WeightedJobStatus& status, bool refused,
                         api::Reason reason, const std::string& message) {
  return api::SetCondition(status,
                           Condition(api::ConditionType::kWorkersRefused, refused, reason, message),
                           view.in.job.generation, view.in.now.rfc3339);
}

}  // namespace

std::optional<std::string> TakeCreateOutcome(const PassView& view, CreateBackoff& backoff,
                                             api::WeightedJobStatus& status, PassOut& out) {
  if (!view.in.create_refusal) {
    if (!view.in.writes.pods_created || !backoff.refused()) return std::nullopt;
    const std::string message = fmt::format(
        "the API server accepted the job's worker pods after {} refused creates", backoff.refusals);
    backoff = {};
    out.write_at_once |=
        SetRefusedCondition(view, status, false, api::Reason::kWorkersCreated, message);
    out.Event(false, api::Reason::kWorkersCreated, message);
    return std::nullopt;
  }
  const CreateRefusal& refusal = *view.in.create_refusal;
  const CreateBackoffOptions& options = view.options.create_backoff;
  const RefusalOutcome outcome =
      TakeRefusal(backoff, refusal, view.in.now.steady, view.in.job.generation, options);
  if (refusal.kind == RefusalClass::kInvalid) return refusal.message;  // as built: at once
  const api::Reason reason = RefusalReason(refusal.kind);
  const std::string message = RefusedMessage(refusal, options);
  // Why the workers do not start is said at once (issue 46).
  out.write_at_once |= SetRefusedCondition(view, status, true, reason, message);
  if (outcome.announce) out.Event(true, reason, message);
  if (!outcome.fail) return std::nullopt;
  return fmt::format("{} (refused {} time{} in {:.0f} s)", refusal.message, backoff.of_class,
                     backoff.of_class == 1 ? "" : "s", Seconds(outcome.refused_for));
}

void LoseRefusedWorkers(const PassView& view, const CreateBackoff& backoff,
                        std::map<std::string, NodeFault>& nodes, PassOut& out,
                        const std::vector<std::string>& without_pods) {
  for (auto& [node, fault] : nodes) {
    if (fault.refused && view.WorkerPod(node) != nullptr) fault.refused = false;
  }
  const RefusalClass kind = backoff.last.kind;
  const bool waits = backoff.refused() && !FailsAfterBound(kind) && kind != RefusalClass::kInvalid;
  if (!waits || view.in.view->done) return;
  for (const std::string& node : without_pods) {
    NodeFault& fault = nodes[node];
    if (!std::exchange(fault.refused, true)) out.actions.push_back(WorkerLost{node});
  }
}

void GateCreates(const PassView& view, const NodeFaults& faults, PassOut& out,
                 std::vector<nlohmann::json>& missing) {
  if (missing.empty()) return;
  const CreateBackoff& backoff = faults.create_backoff;
  const SteadyTime now = view.in.now.steady;
  const size_t allowed = CreatesAllowed(backoff, missing.size(), now, view.in.job.generation);
  missing.resize(allowed);
  if (allowed > 0) return;
  // A pass when the next create may go (+1 ms: not a moment before).
  const milliseconds wait = std::chrono::ceil<milliseconds>(backoff.next - now) + milliseconds(1);
  out.WakeBy(wait);
}

}  // namespace ballast::controller::decide
