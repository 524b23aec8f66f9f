#include "operator/controller/checkpoint_seal.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "core/common/json_read.h"

namespace ballast::controller {
namespace {

namespace jr = json_read;

constexpr std::string_view kSchemePrefix = "hmac-sha256:";

// What the seal covers, one field a line: a version, the item list's digest,
// the claims and the checkpoint's compact JSON (nlohmann dumps object keys
// sorted). v1, without claims, is what operators before claims sealed; v2
// has startTime and failedPods; v3 the released nodes too (a JSON list), and
// only when there are some, so that a seal without them reads as before.
std::string SealedText(const coordinator::Checkpoint& checkpoint, std::string_view items_digest,
                       const std::optional<SealedClaims>& claims) {
  const std::string body = coordinator::CheckpointToJson(checkpoint).dump();
  if (!claims) return fmt::format("ballast-checkpoint-v1\n{}\n{}", items_digest, body);
  const std::string start = nlohmann::json(claims->start_time).dump();
  if (claims->released_nodes.empty()) {
    return fmt::format("ballast-checkpoint-v2\n{}\n{}\n{}\n{}", items_digest, start,
                       claims->failed_pods, body);
  }
  return fmt::format("ballast-checkpoint-v3\n{}\n{}\n{}\n{}\n{}", items_digest, start,
                     claims->failed_pods, nlohmann::json(claims->released_nodes).dump(), body);
}

std::string Mac(std::string_view token, const std::string& text) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  std::string seal(kSchemePrefix);
  for (unsigned int i = 0; i < length; ++i) seal += fmt::format("{:02x}", mac[i]);
  return seal;
}

// checkpoint.claims.releasedNodes: node names in ascending order, each once,
// none empty (as ClaimsJson writes them); Invalid otherwise.
StatusOr<std::vector<std::string>> ReleasedNames(const nlohmann::json& json) {
  const auto invalid = [] {
    return Status::Invalid(
        "checkpoint.claims.releasedNodes: expected node names in ascending order, each once");
  };
  if (!json.is_array() || json.empty()) return invalid();
  std::vector<std::string> names;
  for (const nlohmann::json& name : json) {
    if (!name.is_string() || name.get_ref<const std::string&>().empty()) return invalid();
    if (!names.empty() && !(names.back() < name.get_ref<const std::string&>())) return invalid();
    names.push_back(name.get<std::string>());
  }
  return names;
}

// The claims in status.checkpoint.claims; none when the key is absent (a v1
// seal), Invalid naming the field when present and malformed.
StatusOr<std::optional<SealedClaims>> ReadClaims(const nlohmann::json& json) {
  const nlohmann::json* claims = jr::Find(json, kCheckpointClaimsKey);
  if (!claims) return std::optional<SealedClaims>();
  constexpr std::string_view kPath = "checkpoint.claims";
  if (!claims->is_object()) return jr::Expected(kPath, "an object", *claims);
  SealedClaims read;
  BALLAST_ASSIGN_OR_RETURN(read.start_time, jr::Member(*claims, kPath, "startTime", jr::String));
  BALLAST_ASSIGN_OR_RETURN(read.failed_pods, jr::Member(*claims, kPath, "failedPods", jr::Uint));
  if (const nlohmann::json* released = jr::Find(*claims, "releasedNodes")) {
    BALLAST_ASSIGN_OR_RETURN(read.released_nodes, ReleasedNames(*released));
  }
  return std::optional<SealedClaims>(std::move(read));
}

}  // namespace

nlohmann::json ClaimsJson(const SealedClaims& claims) {
  nlohmann::json json = {{"startTime", claims.start_time}, {"failedPods", claims.failed_pods}};
  if (!claims.released_nodes.empty()) json["releasedNodes"] = claims.released_nodes;
  return json;
}

std::string CheckpointSeal(const coordinator::Checkpoint& checkpoint, std::string_view token,
                           std::string_view items_digest, const SealedClaims& claims) {
  return Mac(token, SealedText(checkpoint, items_digest, claims));
}

nlohmann::json SealedCheckpointJson(const coordinator::Checkpoint& checkpoint,
                                    std::string_view token, std::string_view items_digest,
                                    const SealedClaims& claims) {
  nlohmann::json json = coordinator::CheckpointToJson(checkpoint);
  json[kCheckpointClaimsKey] = ClaimsJson(claims);
  json[kCheckpointSealKey] = CheckpointSeal(checkpoint, token, items_digest, claims);
  return json;
}

StatusOr<SealedRecord> OpenSealedCheckpoint(workload::WorkloadKind kind, const nlohmann::json& json,
                                            std::string_view token, std::string_view items_digest) {
  auto checkpoint = coordinator::CheckpointFromJson(kind, json);
  if (!checkpoint.ok()) return checkpoint.status();
  auto claims = ReadClaims(json);
  if (!claims.ok()) return claims.status();
  const nlohmann::json* seal = jr::Find(json, kCheckpointSealKey);
  if (!seal || !seal->is_string()) {
    return Status::Invalid(
        "checkpoint.seal: missing (the checkpoint was not written by an operator holding the "
        "job's token)");
  }
  const std::string& given = seal->get_ref<const std::string&>();
  const std::string expected = Mac(token, SealedText(*checkpoint, items_digest, *claims));
  if (given.size() != expected.size() ||
      CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0) {
    return Status::Invalid(
        "checkpoint.seal: does not match the checkpoint (changed since the operator wrote it)");
  }
  return SealedRecord{std::move(*checkpoint), std::move(*claims)};
}

}  // namespace ballast::controller
