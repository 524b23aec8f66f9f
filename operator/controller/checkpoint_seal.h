// The seal on a WeightedJob's status.checkpoint: an HMAC-SHA256 of the
// checkpoint, keyed by the job's token (held in its Secret, which only the
// operator and the job's workers read), so that a checkpoint written by
// anyone with status-write rights alone is told from the operator's own and
// not resumed from. The seal covers the finished ranges, the merged result and
// the digest of the job's item list, as the operator reads them back: it is
// computed over the parsed checkpoint's canonical JSON, so the API server
// re-encoding numbers does not break it.
//
// Pure functions; thread-safe.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

#include "coordinator/job_session.h"
#include "core/common/status.h"
#include "core/workload/workload.h"

namespace ballast::controller {

// The key of the seal in status.checkpoint, beside "completed" and "result".
inline constexpr const char* kCheckpointSealKey = "seal";

// "hmac-sha256:" and 64 lowercase hex digits over `checkpoint` and
// `items_digest` (status.itemsDigest; "" for a job without a list), keyed by
// `token`. Requires a non-empty token.
std::string CheckpointSeal(const coordinator::Checkpoint& checkpoint, std::string_view token,
                           std::string_view items_digest);

// coordinator::CheckpointToJson(checkpoint) with its seal.
nlohmann::json SealedCheckpointJson(const coordinator::Checkpoint& checkpoint,
                                    std::string_view token, std::string_view items_digest);

// The checkpoint in `json` when it is well formed and sealed with `token` and
// `items_digest`; otherwise Invalid saying what is wrong: the field that does
// not parse, no seal (written by hand, or by an operator from before seals),
// or a seal that does not match (changed since the operator wrote it).
StatusOr<coordinator::Checkpoint> OpenSealedCheckpoint(workload::WorkloadKind kind,
                                                       const nlohmann::json& json,
                                                       std::string_view token,
                                                       std::string_view items_digest);

}  // namespace ballast::controller
