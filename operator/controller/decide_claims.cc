// Decide's claims sealed beside the checkpoint (decide_internal.h,
// checkpoint_seal.h): the nodes released in the tail, startTime and
// failedPods, sealed with the job's token so that a restarted operator can
// tell them from a status someone else wrote; what a restart restores from
// them; and the checkpoint kept in status.
#include <fmt/format.h>

#include <utility>

#include "core/common/utf8.h"
#include "operator/api/job_status.h"
#include "operator/controller/checkpoint_seal.h"
#include "operator/controller/decide_internal.h"

namespace ballast::controller::decide {

using nlohmann::json;

std::set<std::string> ReleasedNodes(const coordinator::JobView& view) {
  std::set<std::string> nodes;
  for (const coordinator::WorkerView& worker : view.workers) {
    if (worker.released) nodes.insert(worker.name);
  }
  return nodes;
}

bool TakeReleases(const coordinator::JobView& view, NodeFaults& faults) {
  bool taken = false;
  for (const std::string& node : ReleasedNodes(view)) {
    taken |= !std::exchange(faults.nodes[node].released, true);
  }
  return taken;
}

namespace {

// What a restarted operator says the job started at, and how many of its
// pods failed, when status.checkpoint holds no claims it can trust: the
// start within [created, now] (a start before the job existed, or one still
// to come, is not one the operator wrote), the failures as written.
void BoundUntrustedClaims(const PassView& view, api::WeightedJobStatus& status, PassOut& out) {
  const auto created = ParseRfcTime(view.in.job.meta.creation_timestamp);
  const auto started = ParseRfcTime(status.start_time.value_or(""));
  if (!status.start_time) return;
  std::string bounded;
  if (!started || (created && *started < *created)) {
    bounded = view.in.job.meta.creation_timestamp;
  } else if (*started > view.in.now.wall) {
    bounded = view.in.now.rfc3339;
  }
  if (bounded.empty() || bounded == *status.start_time) return;
  out.Event(true, api::Reason::kStatusRestored,
            fmt::format("status.startTime {} is not a time this job started (it was created "
                        "at {}); it counts from {}",
                        *status.start_time, view.in.job.meta.creation_timestamp, bounded));
  status.start_time = bounded;
}

// status.startTime and status.failedPods as the operator sealed them beside
// the checkpoint: changed since (by someone with status rights), they are
// put back with a Warning, so activeDeadlineSeconds and backoffLimit count
// from what happened. The released nodes sealed go back into `faults`.
void RestoreClaims(NodeFaults& faults, api::WeightedJobStatus& status, PassOut& out,
                   const SealedClaims& claims) {
  for (const std::string& node : claims.released_nodes) faults.nodes[node].released = true;
  std::vector<std::string> changed;
  const std::string start = status.start_time.value_or("");
  if (!claims.start_time.empty() && start != claims.start_time) {
    changed.push_back(fmt::format("startTime {} (was {})", claims.start_time, start));
    status.start_time = claims.start_time;
  }
  const uint64_t failed_pods = FailedPods(status);
  if (failed_pods != claims.failed_pods) {
    changed.push_back(fmt::format("failedPods {} (was {})", claims.failed_pods, failed_pods));
    status.failed_pods = static_cast<int64_t>(claims.failed_pods);
  }
  if (changed.empty()) return;
  out.Event(true, api::Reason::kStatusRestored,
            fmt::format("status was changed since the operator wrote it; put back what it "
                        "sealed beside the checkpoint: {}",
                        fmt::join(changed, ", ")));
}

}  // namespace

// The checkpoint in status to resume from, when the operator sealed it with
// the job's token (checkpoint_seal.h), with the claims sealed beside it put
// back. One it did not (written by someone with status rights) is not
// resumed from: the job starts again from its first item, its claimed
// progress and per-node counts dropped, with a Warning saying why. Redoing
// work is safe; counting items that never ran is not.
std::optional<coordinator::Checkpoint> RestoreSealed(const PassView& view, const TokenMemory& token,
                                                     NodeFaults& faults,
                                                     api::WeightedJobStatus& status, PassOut& out) {
  if (!status.checkpoint) {
    BoundUntrustedClaims(view, status, out);
    return std::nullopt;
  }
  const auto& workload = view.spec().job.workload;
  auto record = OpenSealedCheckpoint(workload.kind, *status.checkpoint, token.value,
                                     status.items_digest.value_or(""));
  if (record.ok()) {
    if (record->claims) {
      RestoreClaims(faults, status, out, *record->claims);
    } else {
      BoundUntrustedClaims(view, status, out);
    }
    return std::move(record->checkpoint);
  }
  out.Event(true, api::Reason::kCheckpointRejected,
            fmt::format("status.checkpoint is not resumed from: {}; the job starts again from "
                        "its first item",
                        record.status().message()));
  status.checkpoint.reset();
  status.completed_items = 0;
  status.completed_cost.reset();
  status.progress = api::ProgressText(0, workload.items);
  status.result.reset();
  status.nodes.reset();
  BoundUntrustedClaims(view, status, out);
  return std::nullopt;
}

namespace {

// The last checkpoint that fit, sealed again with `claims` when they changed
// since (a pod failed), so that a restart does not take the claims in status
// for changed ones.
void ResealClaims(const PassView& view, const std::string& token, api::WeightedJobStatus& status,
                  const SealedClaims& claims) {
  if (!status.checkpoint) return;
  if (status.checkpoint->value(kCheckpointClaimsKey, json()) == ClaimsJson(claims)) return;
  const std::string digest = status.items_digest.value_or("");
  auto record =
      OpenSealedCheckpoint(view.spec().job.workload.kind, *status.checkpoint, token, digest);
  if (!record.ok() || record->claims == claims) return;
  status.checkpoint = SealedCheckpointJson(record->checkpoint, token, digest, claims);
}

// The claims sealed beside the checkpoint now.
SealedClaims ClaimsNow(const NodeFaults& faults, const api::WeightedJobStatus& status) {
  return SealedClaims{status.start_time.value_or(""), FailedPods(status), faults.ReleasedNodes()};
}

}  // namespace

void ForgetReleased(const PassView& view, const TokenMemory& token, NodeFaults& faults,
                    api::WeightedJobStatus& status) {
  for (auto& [node, fault] : faults.nodes) fault.released = false;
  faults.Prune();
  if (!status.checkpoint || token.value.empty()) return;
  const std::string digest = status.items_digest.value_or("");
  auto record =
      OpenSealedCheckpoint(view.spec().job.workload.kind, *status.checkpoint, token.value, digest);
  if (!record.ok() || !record->claims || record->claims->released_nodes.empty()) return;
  // The other claims as sealed: this operator may not have taken them yet.
  SealedClaims claims = *record->claims;
  claims.released_nodes.clear();
  status.checkpoint = SealedCheckpointJson(record->checkpoint, token.value, digest, claims);
}

void KeepCheckpoint(const PassView& view, const CheckpointSlice& seal,
                    api::WeightedJobStatus& status, PassOut& out,
                    const coordinator::Checkpoint& checkpoint) {
  const SealedClaims claims = ClaimsNow(seal.faults, status);
  json compact =
      SealedCheckpointJson(checkpoint, seal.token.value, status.items_digest.value_or(""), claims);
  const size_t bytes = DumpJson(compact).size();
  if (bytes <= api::kMaxCheckpointBytes) {
    status.checkpoint = std::move(compact);
    return;
  }
  ResealClaims(view, seal.token.value, status, claims);
  Announced& announced = seal.announced;
  if (announced.checkpoint_too_large) return;
  announced.checkpoint_too_large = true;
  out.Event(true, api::Reason::kCheckpointTooLarge,
            fmt::format("the checkpoint of {} ranges is {} KiB, over the {} KiB kept in the "
                        "status; the last one that fit stays (a resume would redo more work)",
                        checkpoint.completed.Ranges().size(), bytes >> 10,
                        api::kMaxCheckpointBytes >> 10));
}

}  // namespace ballast::controller::decide
