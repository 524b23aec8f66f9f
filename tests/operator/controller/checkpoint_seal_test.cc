#include "operator/controller/checkpoint_seal.h"

#include <fmt/format.h>
#include <gtest/gtest.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include <cmath>
#include <string>

namespace ballast::controller {
namespace {

using nlohmann::json;
using workload::WorkloadKind;

const SealedClaims kClaims{"2026-11-27T05:00:00Z", 2, {}};

coordinator::Checkpoint ExecCheckpoint() {
  workload::UserFields fields;
  fields["bytes"].sum = 5120;
  fields["longest"].rule = workload::MergeRule::kMax;
  fields["longest"].extreme = 17.0;
  fields["longest"].count = 3;
  fields["ratio"].rule = workload::MergeRule::kMin;
  fields["ratio"].extreme = 0.1;
  fields["ratio"].count = 2;
  coordinator::Checkpoint checkpoint;
  checkpoint.completed.Add({0, 40});
  checkpoint.completed.Add({52, 60});
  checkpoint.result = workload::Result::ExecHandedBack(48, fields);
  return checkpoint;
}

// What the API server does to a status it stores: numbers decoded into
// int64 where their text is integral, floats written back in their shortest
// form, so 17.0 comes back as 17.
json AsTheApiServerStoresIt(const json& value) {
  if (value.is_object() || value.is_array()) {
    json out = value;
    for (auto& child : out) child = AsTheApiServerStoresIt(child);
    return out;
  }
  if (value.is_number_float()) {
    const double x = value.get<double>();
    if (std::trunc(x) == x && std::fabs(x) < 9.2e18) return static_cast<int64_t>(x);
  }
  return value;
}

// The seal an operator writes over `text` with `token`, computed here by hand
// (HMAC-SHA256, hex): what an earlier operator's checkpoint carries.
std::string SealOf(const std::string& text, const std::string& token) {
  unsigned char mac[EVP_MAX_MD_SIZE];
  unsigned int length = 0;
  HMAC(EVP_sha256(), token.data(), static_cast<int>(token.size()),
       reinterpret_cast<const unsigned char*>(text.data()), text.size(), mac, &length);
  std::string seal = "hmac-sha256:";
  for (unsigned int i = 0; i < length; ++i) seal += fmt::format("{:02x}", mac[i]);
  return seal;
}
TEST(CheckpointSealTest, ASealedCheckpointOpensWithItsTokenAfterTheApiServerStoredIt) {
  const auto checkpoint = ExecCheckpoint();
  const json sealed = SealedCheckpointJson(checkpoint, "token-a", "sha256:list", kClaims);
  ASSERT_TRUE(sealed.contains("seal"));
  EXPECT_EQ(sealed["seal"].get<std::string>().rfind("hmac-sha256:", 0), 0u);
  EXPECT_EQ(sealed["seal"].get<std::string>().size(), 12u + 64u);
  const json stored = json::parse(AsTheApiServerStoresIt(sealed).dump());
  ASSERT_NE(stored.dump(), sealed.dump()) << "the test must change the text: 17.0 -> 17";
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, stored, "token-a", "sha256:list");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->checkpoint.completed.size(), 48u);
  EXPECT_EQ(opened->checkpoint.result, checkpoint.result);
  EXPECT_EQ(opened->claims, kClaims);
}

TEST(CheckpointSealTest, ClaimingMoreFinishedItemsBreaksTheSeal) {
  json forged = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  forged["completed"] = json::parse("[[0, 60]]");
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, forged, "token-a", "");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("checkpoint.seal: does not match"), std::string::npos)
      << opened.status().message();
}

TEST(CheckpointSealTest, AChangedResultBreaksTheSeal) {
  json forged = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  forged["result"]["exec"]["fields"]["bytes"]["sum"] = 1;
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, forged, "token-a", "").ok());
}

TEST(CheckpointSealTest, AnotherTokenOrItemListDoesNotOpenIt) {
  const json sealed = SealedCheckpointJson(ExecCheckpoint(), "token-a", "sha256:list", kClaims);
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, sealed, "token-b", "sha256:list").ok());
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, sealed, "token-a", "sha256:other").ok());
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, sealed, "token-a", "").ok());
}

TEST(CheckpointSealTest, AnUnsealedOrMistypedSealIsRefusedSayingSo) {
  json unsealed = coordinator::CheckpointToJson(ExecCheckpoint());
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, unsealed, "token-a", "");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("checkpoint.seal: missing"), std::string::npos);
  unsealed["seal"] = 42;
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, unsealed, "token-a", "").ok());
  unsealed["seal"] = "hmac-sha256:";
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, unsealed, "token-a", "").ok());
}

TEST(CheckpointSealTest, AMalformedCheckpointNamesTheFieldBeforeTheSeal) {
  json broken = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  broken["completed"] = json::parse("[[5, 3]]");
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, broken, "token-a", "");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("checkpoint.completed[0]"), std::string::npos);
}

TEST(CheckpointSealTest, ChangedOrRemovedClaimsBreakTheSeal) {
  const json sealed = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  json earlier = sealed;
  earlier["claims"]["startTime"] = "2020-01-01T00:00:00Z";
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, earlier, "token-a", "").ok());
  json fewer = sealed;
  fewer["claims"]["failedPods"] = 0;
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, fewer, "token-a", "").ok());
  json without = sealed;
  without.erase("claims");
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, without, "token-a", "").ok())
      << "dropping the claims does not turn the seal into one without them";
  json mistyped = sealed;
  mistyped["claims"]["failedPods"] = -1;
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, mistyped, "token-a", "");
  ASSERT_FALSE(opened.ok());
  EXPECT_NE(opened.status().message().find("checkpoint.claims.failedPods"), std::string::npos);
}

// Issue 44: the workers a queued job released in its tail are claims too:
// sealed, read back in name order, and neither dropped nor added without
// breaking the seal. Without any, the claims and the seal are those an
// operator from before them wrote (v2), which still open.
TEST(CheckpointSealTest, ReleasedNodesAreSealedWithTheClaims) {
  const SealedClaims released{"2026-11-27T05:00:00Z", 2, {"pi4b-0", "pi4b-1"}};
  const json sealed = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", released);
  EXPECT_EQ(sealed["claims"]["releasedNodes"], json::array({"pi4b-0", "pi4b-1"}));
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, sealed, "token-a", "");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->claims, released);
  json fewer = sealed;
  fewer["claims"]["releasedNodes"] = json::array({"pi4b-0"});
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, fewer, "token-a", "").ok());
  json none = sealed;
  none["claims"].erase("releasedNodes");
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, none, "token-a", "").ok());
  json added = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  EXPECT_FALSE(added["claims"].contains("releasedNodes"));
  added["claims"]["releasedNodes"] = json::array({"pi4b-0"});
  EXPECT_FALSE(OpenSealedCheckpoint(WorkloadKind::kExec, added, "token-a", "").ok());
  for (const json& bad : {json::array({"b", "a"}), json::array({"a", "a"}), json::array(),
                          json::array({1}), json("a")}) {
    json malformed = sealed;
    malformed["claims"]["releasedNodes"] = bad;
    auto read = OpenSealedCheckpoint(WorkloadKind::kExec, malformed, "token-a", "");
    ASSERT_FALSE(read.ok()) << bad.dump();
    EXPECT_NE(read.status().message().find("checkpoint.claims.releasedNodes"), std::string::npos)
        << read.status().message();
  }
  // The v2 text an operator from before released nodes sealed: the same seal.
  const json v2 = SealedCheckpointJson(ExecCheckpoint(), "token-a", "", kClaims);
  const std::string text =
      fmt::format("ballast-checkpoint-v2\n\n{}\n{}\n{}", json(kClaims.start_time).dump(),
                  kClaims.failed_pods, coordinator::CheckpointToJson(ExecCheckpoint()).dump());
  const std::string seal = SealOf(text, "token-a");
  EXPECT_EQ(v2["seal"], seal);
}

// What an operator from before the claims wrote: the seal over a version
// line, the list's digest and the checkpoint. It still opens, without claims.
TEST(CheckpointSealTest, ASealWithoutClaimsFromAnEarlierOperatorStillOpens) {
  json old = coordinator::CheckpointToJson(ExecCheckpoint());
  const std::string text = "ballast-checkpoint-v1\nsha256:list\n" + old.dump();
  const std::string seal = SealOf(text, "token-a");
  old["seal"] = seal;
  auto opened = OpenSealedCheckpoint(WorkloadKind::kExec, old, "token-a", "sha256:list");
  ASSERT_TRUE(opened.ok()) << opened.status().message();
  EXPECT_EQ(opened->checkpoint.completed.size(), 48u);
  EXPECT_FALSE(opened->claims);
}

}  // namespace
}  // namespace ballast::controller
