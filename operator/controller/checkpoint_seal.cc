#include "operator/controller/checkpoint_seal.h"

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

namespace ballast::controller {
namespace {

constexpr std::string_view kSchemePrefix = "hmac-sha256:";

// What the seal covers, one field a line: a version, the item list's digest
// and the checkpoint's compact JSON (nlohmann dumps object keys sorted).
std::string SealedText(const coordinator::Checkpoint& checkpoint, std::string_view items_digest) {
  return fmt::format("ballast-checkpoint-v1\n{}\n{}", items_digest,
                     coordinator::CheckpointToJson(checkpoint).dump());
}

}  // namespace

std::string CheckpointSeal(const coordinator::Checkpoint& checkpoint, std::string_view token,
                           std::string_view items_digest) {
  const std::string text = SealedText(checkpoint, items_digest);
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  std::string seal(kSchemePrefix);
  for (unsigned int i = 0; i < length; ++i) seal += fmt::format("{:02x}", mac[i]);
  return seal;
}

nlohmann::json SealedCheckpointJson(const coordinator::Checkpoint& checkpoint,
                                    std::string_view token, std::string_view items_digest) {
  nlohmann::json json = coordinator::CheckpointToJson(checkpoint);
  json[kCheckpointSealKey] = CheckpointSeal(checkpoint, token, items_digest);
  return json;
}

StatusOr<coordinator::Checkpoint> OpenSealedCheckpoint(workload::WorkloadKind kind,
                                                       const nlohmann::json& json,
                                                       std::string_view token,
                                                       std::string_view items_digest) {
  auto checkpoint = coordinator::CheckpointFromJson(kind, json);
  if (!checkpoint.ok()) return checkpoint.status();
  const auto seal = json.find(kCheckpointSealKey);
  if (seal == json.end() || !seal->is_string()) {
    return Status::Invalid(
        "checkpoint.seal: missing (the checkpoint was not written by an operator holding the "
        "job's token)");
  }
  const std::string& given = seal->get_ref<const std::string&>();
  const std::string expected = CheckpointSeal(*checkpoint, token, items_digest);
  if (given.size() != expected.size() ||
      CRYPTO_memcmp(given.data(), expected.data(), expected.size()) != 0) {
    return Status::Invalid(
        "checkpoint.seal: does not match the checkpoint (changed since the operator wrote it)");
  }
  return checkpoint;
}

}  // namespace ballast::controller
