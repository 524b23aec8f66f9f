// Create refusals (operator/controller/create_refusals.h): the API server's
// refusals sorted by what waiting can change, read through the client's own
// StatusFromHttp as a real response becomes a Status, and the backoff that
// paces the creates that follow: how many requests a refused job sends, and
// when it fails.
#include "operator/controller/create_refusals.h"

#include <gtest/gtest.h>

#include "net/kube/client.h"

namespace ballast::controller {
namespace {

using std::chrono::milliseconds;
using std::chrono::seconds;

// The Status the client makes of the API server's metav1.Status answer.
Status Answer(int code, const std::string& message) {
  const nlohmann::json body = {{"kind", "Status"},   {"apiVersion", "v1"},    {"status", "Failure"},
                               {"message", message}, {"reason", "Forbidden"}, {"code", code}};
  return kube::StatusFromHttp(code, body.dump(), "POST pods");
}

TEST(CreateRefusalsTest, RefusalsAreClassifiedFromTheServersAnswer) {
  struct Case {
    int code;
    std::string message;
    RefusalClass kind;
    const char* reason;
  };
  const std::vector<Case> cases = {
      {403,
       "pods \"p-pi4b-0\" is forbidden: violates PodSecurity \"restricted:latest\": restricted "
       "volume types (volume \"host\" uses restricted volume type \"hostPath\")",
       RefusalClass::kPodSecurity, "PodSecurity"},
      {403, "pods \"p-pi4b-0\" is forbidden: no PriorityClass with name high was found",
       RefusalClass::kPriorityClassNotFound, "PriorityClassNotFound"},
      {403,
       "admission webhook \"validation.gatekeeper.sh\" denied the request: [no-privileged] "
       "privileged containers are not allowed",
       RefusalClass::kAdmissionDenied, "AdmissionDenied"},
      {403,
       "pods \"p-pi4b-1\" is forbidden: exceeded quota: pods-1, requested: pods=1, used: "
       "pods=1, limited: pods=1",
       RefusalClass::kQuotaExceeded, "QuotaExceeded"},
      {403,
       "pods is forbidden: User \"system:serviceaccount:ballast:ballast\" cannot create "
       "resource \"pods\" in API group \"\" in the namespace \"jobs\"",
       RefusalClass::kForbidden, "Forbidden"},
      {403,
       "pods \"p-a\" is forbidden: unable to create new content in namespace jobs because it "
       "is being terminated",
       RefusalClass::kForbidden, "Forbidden"},
      {422,
       "Pod \"p-a\" is invalid: spec.containers[0].resources.requests: Invalid value: \"2\": "
       "must be less than or equal to cpu limit",
       RefusalClass::kInvalid, "WorkerPodRefused"},
      {400, "the object provided is unrecognized", RefusalClass::kInvalid, "WorkerPodRefused"},
      {500, "etcdserver: request timed out", RefusalClass::kCreateFailed, "CreateFailed"},
      {429, "too many requests", RefusalClass::kCreateFailed, "CreateFailed"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.message);
    const CreateRefusal refusal = ClassifyCreateRefusal(Answer(c.code, c.message));
    EXPECT_EQ(refusal.kind, c.kind);
    EXPECT_EQ(api::ReasonName(RefusalReason(refusal.kind)), std::string(c.reason));
    // The API server's words, without the client's prefix: what the user reads.
    EXPECT_EQ(refusal.message, c.message);
  }
  const CreateRefusal unreachable =
      ClassifyCreateRefusal(Status::Unavailable("POST pods: connection refused"));
  EXPECT_EQ(unreachable.kind, RefusalClass::kCreateFailed);
  EXPECT_EQ(unreachable.message, "POST pods: connection refused");
}

TEST(CreateRefusalsTest, OnlyWhatAPersonMustChangeFailsAfterTheBound) {
  EXPECT_TRUE(FailsAfterBound(RefusalClass::kPodSecurity));
  EXPECT_TRUE(FailsAfterBound(RefusalClass::kPriorityClassNotFound));
  EXPECT_TRUE(FailsAfterBound(RefusalClass::kAdmissionDenied));
  EXPECT_FALSE(FailsAfterBound(RefusalClass::kQuotaExceeded));
  EXPECT_FALSE(FailsAfterBound(RefusalClass::kForbidden));
  EXPECT_FALSE(FailsAfterBound(RefusalClass::kCreateFailed));
  EXPECT_FALSE(FailsAfterBound(RefusalClass::kInvalid));  // it fails at once instead
}

TEST(CreateRefusalsTest, TheBackoffDoublesFromOneSecondToItsCap) {
  const CreateBackoffOptions options;
  EXPECT_EQ(BackoffDelay(1, options), seconds(1));
  EXPECT_EQ(BackoffDelay(2, options), seconds(2));
  EXPECT_EQ(BackoffDelay(9, options), seconds(256));
  EXPECT_EQ(BackoffDelay(10, options), seconds(300));
  EXPECT_EQ(BackoffDelay(4'000'000'000u, options), seconds(300));  // no overflow
}

// Refusals taken at each moment the backoff allows, until the job fails or
// `horizon` passes: the moments, in seconds from the first.
struct Row {
  std::vector<double> at;
  bool failed = false;
  int announced = 0;
};
Row RefuseUntil(RefusalClass kind, milliseconds horizon, const CreateBackoffOptions& options) {
  const SteadyTime start = SteadyTime{} + std::chrono::hours(1);
  CreateBackoff backoff;
  Row row;
  SteadyTime now = start;
  while (now - start <= horizon) {
    const RefusalOutcome outcome = TakeRefusal(backoff, {kind, "refused"}, now, 1, options);
    row.at.push_back(std::chrono::duration<double>(now - start).count());
    row.announced += outcome.announce ? 1 : 0;
    if (outcome.fail) {
      row.failed = true;
      break;
    }
    now = backoff.next;
  }
  return row;
}

// issue 46: a PodSecurity refusal made ~290 creates a second, forever.
TEST(CreateRefusalsTest, APodSecurityRefusalFailsAfterSixAttemptsInThirtyOneSeconds) {
  const Row row = RefuseUntil(RefusalClass::kPodSecurity, std::chrono::hours(1), {});
  EXPECT_TRUE(row.failed);
  EXPECT_EQ(row.at, (std::vector<double>{0, 1, 3, 7, 15, 31}));
  EXPECT_EQ(row.announced, 1) << "one Warning event for the row";
  CreateBackoffOptions at_once;
  at_once.fail_after = milliseconds(0);
  EXPECT_EQ(RefuseUntil(RefusalClass::kPriorityClassNotFound, std::chrono::hours(1), at_once).at,
            std::vector<double>{0});
}

TEST(CreateRefusalsTest, AnExceededQuotaIsWaitedForAtAboutTwentyAttemptsAnHour) {
  const Row row = RefuseUntil(RefusalClass::kQuotaExceeded, std::chrono::hours(1), {});
  EXPECT_FALSE(row.failed);
  // 1 + 2 + ... + 256 = 511 s in the first 10 attempts, then one per 300 s.
  EXPECT_EQ(row.at.size(), 20u);
  EXPECT_EQ(row.at[9], 511);
  EXPECT_EQ(row.at[10], 811);
  EXPECT_EQ(row.announced, 1);
}

TEST(CreateRefusalsTest, AnotherClassIsAnnouncedAndRestartsTheFailClockNotTheBackoff) {
  const CreateBackoffOptions options;
  const SteadyTime t0 = SteadyTime{} + std::chrono::hours(1);
  CreateBackoff backoff;
  for (int i = 0; i < 5; ++i) {
    const SteadyTime now = i == 0 ? t0 : backoff.next;
    EXPECT_EQ(
        TakeRefusal(backoff, {RefusalClass::kQuotaExceeded, "quota"}, now, 1, options).announce,
        i == 0);
  }
  EXPECT_EQ(backoff.next - t0, seconds(15 + 16));
  const SteadyTime later = backoff.next;
  const RefusalOutcome outcome =
      TakeRefusal(backoff, {RefusalClass::kPodSecurity, "psa"}, later, 1, options);
  EXPECT_TRUE(outcome.announce);
  EXPECT_FALSE(outcome.fail) << "31 s of refusals, but the PodSecurity ones only start now";
  EXPECT_EQ(outcome.refused_for, milliseconds(0));
  EXPECT_EQ(backoff.refusals, 6u);
  EXPECT_EQ(backoff.of_class, 1u);
  EXPECT_EQ(backoff.next - later, seconds(32));
}

TEST(CreateRefusalsTest, WhileRefusedOnePodProbesAfterTheWaitAndANewGenerationEndsIt) {
  const CreateBackoffOptions options;
  const SteadyTime t0 = SteadyTime{} + std::chrono::hours(1);
  CreateBackoff backoff;
  EXPECT_EQ(CreatesAllowed(backoff, 1000, t0, 1), 1000u) << "nothing refused yet";
  TakeRefusal(backoff, {RefusalClass::kQuotaExceeded, "quota"}, t0, 1, options);
  EXPECT_EQ(CreatesAllowed(backoff, 1000, t0 + milliseconds(999), 1), 0u);
  EXPECT_EQ(CreatesAllowed(backoff, 1000, t0 + seconds(1), 1), 1u);
  EXPECT_EQ(CreatesAllowed(backoff, 0, t0 + seconds(1), 1), 0u);
  // The job's template was edited: its pods go at once, all of them.
  EXPECT_EQ(CreatesAllowed(backoff, 1000, t0 + milliseconds(10), 2), 1000u);
  const RefusalOutcome again =
      TakeRefusal(backoff, {RefusalClass::kQuotaExceeded, "quota"}, t0 + seconds(2), 2, options);
  EXPECT_TRUE(again.announce) << "a new generation starts a new row";
  EXPECT_EQ(backoff.refusals, 1u);
  EXPECT_EQ(backoff.next, t0 + seconds(3));
}

}  // namespace
}  // namespace ballast::controller
