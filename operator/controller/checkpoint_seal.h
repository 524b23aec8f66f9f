// The seal on a WeightedJob's status.checkpoint: an HMAC-SHA256 of the
// checkpoint, keyed by the job's token (held in its Secret, which only the
// operator and the job's workers read), so that a checkpoint written by
// anyone with status-write rights alone is told from the operator's own and
// not resumed from. The seal covers the finished ranges, the merged result,
// the digest of the job's item list and the claims the operator makes beside
// them (status.startTime, status.failedPods and the workers released in a
// queued job's tail: a restarted operator takes these from its sealed
// record, not from what status says), as the operator
// reads them back: it is computed over the parsed checkpoint's canonical JSON,
// so the API server re-encoding numbers does not break it.
//
// Pure functions; thread-safe.
#pragma once

#include <cstdint>
#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "coordinator/job_types.h"
#include "core/common/status.h"
#include "core/workload/workload.h"

namespace ballast::controller {

// The keys of the seal and of the claims in status.checkpoint, beside
// "completed" and "result".
inline constexpr const char* kCheckpointSealKey = "seal";
inline constexpr const char* kCheckpointClaimsKey = "claims";

// What the operator says of a job beside its checkpoint, sealed with it:
// {"startTime": "...", "failedPods": N, "releasedNodes": [...]} in
// status.checkpoint.claims ("releasedNodes" only when there are some).
struct SealedClaims {
  std::string start_time;    // status.startTime as the operator set it ("" before)
  uint64_t failed_pods = 0;  // status.failedPods
  // The nodes whose worker a queued job's session released in its tail
  // (coordinator/idle_release.h), in name order, each once: a restarted
  // operator makes no pod there again and keeps them reclaimable.
  std::vector<std::string> released_nodes;
  bool operator==(const SealedClaims&) const = default;
};

// {"startTime": ..., "failedPods": ..., "releasedNodes": [...]}, as
// status.checkpoint.claims holds them; "releasedNodes" only when not empty.
nlohmann::json ClaimsJson(const SealedClaims& claims);

// A checkpoint as the operator sealed it. `claims` is empty for a seal of an
// operator from before claims were sealed (it covers the checkpoint only).
struct SealedRecord {
  coordinator::Checkpoint checkpoint;
  std::optional<SealedClaims> claims;
};

// "hmac-sha256:" and 64 lowercase hex digits over `checkpoint`, `items_digest`
// (status.itemsDigest; "" for a job without a list) and `claims`, keyed by
// `token`. Requires a non-empty token.
std::string CheckpointSeal(const coordinator::Checkpoint& checkpoint, std::string_view token,
                           std::string_view items_digest, const SealedClaims& claims);

// coordinator::CheckpointToJson(checkpoint) with its claims and its seal.
nlohmann::json SealedCheckpointJson(const coordinator::Checkpoint& checkpoint,
                                    std::string_view token, std::string_view items_digest,
                                    const SealedClaims& claims);

// The checkpoint and claims in `json` when they are well formed and sealed
// with `token` and `items_digest`; otherwise Invalid saying what is wrong: the
// field that does not parse, no seal (written by hand), or a seal that does
// not match (changed since the operator wrote it).
StatusOr<SealedRecord> OpenSealedCheckpoint(workload::WorkloadKind kind, const nlohmann::json& json,
                                            std::string_view token, std::string_view items_digest);

}  // namespace ballast::controller
