// Verification (coordinator/verification.h): which ranges are sampled, who
// recomputes them, how results compare; and JobSession driving it with
// honest and forging workers, without HTTP.
#include "coordinator/verification.h"

#include <gtest/gtest.h>

#include <limits>
#include <set>

#include "coordinator/job_session.h"
#include "tests/support/primes_workload.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/reference.h"

namespace ballast::coordinator {
namespace {

using balance::Range;
using balance::Reply;
using protocol::ReportMessage;
using workload::Result;

TEST(VerifyOptionsTest, OffOrAFractionInZeroOneWithTwoWorkersIsAccepted) {
  EXPECT_TRUE(CheckVerifyOptions({0, 0}, 1).ok());
  EXPECT_TRUE(CheckVerifyOptions({0.05, 7}, 2).ok());
  EXPECT_TRUE(CheckVerifyOptions({1, 7}, 5).ok());
}

TEST(VerifyOptionsTest, AFractionOutsideZeroOneIsRefusedNamingTheField) {
  for (double bad : {-0.1, 1.5, std::numeric_limits<double>::quiet_NaN(),
                     std::numeric_limits<double>::infinity()}) {
    SCOPED_TRACE(bad);
    const Status status = CheckVerifyOptions({bad, 7}, 3);
    EXPECT_EQ(status.code(), StatusCode::kInvalid);
    EXPECT_NE(status.message().find("verify.fraction"), std::string::npos) << status.message();
  }
}

TEST(VerifyOptionsTest, OneWorkerCannotVerifyAndSaysWhy) {
  const Status status = CheckVerifyOptions({0.05, 7}, 1);
  EXPECT_EQ(status.code(), StatusCode::kInvalid);
  EXPECT_NE(status.message().find("at least two workers"), std::string::npos) << status.message();
}

TEST(SampledTest, FractionOneSamplesEveryRangeAndZeroNone) {
  for (uint64_t begin = 0; begin < 1000; begin += 10) {
    EXPECT_TRUE(Sampled({1, 42}, {begin, begin + 10}));
    EXPECT_FALSE(Sampled({0, 42}, {begin, begin + 10}));
  }
}

TEST(SampledTest, SamplesAboutTheFractionAndDependsOnTheSecretSeed) {
  // 100000 ranges at 5 %: the share sampled is within a few standard
  // deviations (0.07 %) of 5 %; and another seed picks other ranges.
  constexpr uint64_t kRanges = 100000;
  std::set<uint64_t> first, second;
  for (uint64_t i = 0; i < kRanges; ++i) {
    if (Sampled({0.05, 0x1234}, {i * 8, i * 8 + 8})) first.insert(i);
    if (Sampled({0.05, 0x5678}, {i * 8, i * 8 + 8})) second.insert(i);
  }
  EXPECT_NEAR(static_cast<double>(first.size()) / kRanges, 0.05, 0.003);
  EXPECT_NEAR(static_cast<double>(second.size()) / kRanges, 0.05, 0.003);
  size_t common = 0;
  for (uint64_t i : first) common += second.count(i);
  EXPECT_LT(common, first.size() / 5);  // independent: about 5 % of them
}

TEST(SameResultTest, ComparesTotalsExactly) {
  EXPECT_TRUE(SameResult(Result::Primes(10, 99), Result::Primes(10, 99)));
  EXPECT_FALSE(SameResult(Result::Primes(10, 99), Result::Primes(11, 99)));
  EXPECT_FALSE(SameResult(Result::Primes(10, 99), Result::Primes(10, 98)));
  EXPECT_FALSE(SameResult(Result::Primes(0, 0), Result::Matmul(0, 0, 0)));
}

TEST(SameResultTest, ExecIgnoresAttemptsButNotExitCodes) {
  const Result once = Result::ExecFailed({3, 5}, 2, 1);
  EXPECT_TRUE(SameResult(once, Result::ExecFailed({3, 5}, 2, 3)));
  EXPECT_FALSE(SameResult(once, Result::ExecFailed({3, 5}, 1, 1)));
  EXPECT_FALSE(SameResult(once, Result::ExecFailed({3, 4}, 2, 1)));
  EXPECT_FALSE(SameResult(once, Result::ExecSucceeded(2)));
}

TEST(VerifierTest, ARangeIsRecomputedOnlyByAnotherWorker) {
  Verifier verifier({1, 1}, {"a", "b", "c"});
  EXPECT_TRUE(verifier.OnMerged(0, {0, 10}, Result::Primes(4, 17)));
  EXPECT_FALSE(verifier.Idle());
  EXPECT_EQ(verifier.Assign(0), std::nullopt);  // its own range
  EXPECT_EQ(verifier.Assign(2), (Range{0, 10}));
  EXPECT_EQ(verifier.Holding(2), (Range{0, 10}));
  EXPECT_EQ(verifier.Assign(1), std::nullopt);  // taken
  EXPECT_TRUE(verifier.OnRecomputed(2, {0, 10}, Result::Primes(4, 17), 5).ok());
  EXPECT_TRUE(verifier.Idle());
  const VerificationView view = verifier.View();
  EXPECT_EQ(view.ranges, 1u);
  EXPECT_EQ(view.sampled, 1u);
  EXPECT_EQ(view.checked, 1u);
  EXPECT_EQ(view.items, 10u);
  EXPECT_EQ(view.finished_at, 5);
  EXPECT_TRUE(view.failure.empty());
}

TEST(VerifierTest, AMismatchFailsNamingTheRangeAndBothWorkers) {
  Verifier verifier({1, 1}, {"honest", "liar"});
  verifier.OnMerged(1, {20, 30}, Result::Primes(1000002, 17));
  ASSERT_EQ(verifier.Assign(0), (Range{20, 30}));
  const Status status = verifier.OnRecomputed(0, {20, 30}, Result::Primes(2, 17), 1);
  EXPECT_EQ(status.code(), StatusCode::kTerminal);
  EXPECT_TRUE(verifier.failed());
  const std::string& failure = verifier.View().failure;
  EXPECT_EQ(failure, status.message());
  EXPECT_NE(failure.find("[20, 30)"), std::string::npos) << failure;
  EXPECT_NE(failure.find("'liar'"), std::string::npos) << failure;
  EXPECT_NE(failure.find("'honest'"), std::string::npos) << failure;
  EXPECT_NE(failure.find("1000002 primes"), std::string::npos) << failure;
  // Nothing more is sampled or handed out once the job failed.
  EXPECT_FALSE(verifier.OnMerged(1, {30, 40}, Result::Primes(1, 1)));
  EXPECT_EQ(verifier.Assign(0), std::nullopt);
}

// Regression: a recomputation long enough for a heartbeat came in two parts,
// matched the check in neither, and the job waited for it forever.
TEST(VerifierTest, ARecomputationHandedInPartsIsMergedBeforeComparing) {
  Verifier verifier({1, 1}, {"a", "b"});
  verifier.OnMerged(0, {0, 10}, Result::Primes(4, 17));
  ASSERT_EQ(verifier.Assign(1), (Range{0, 10}));
  EXPECT_TRUE(verifier.OnRecomputed(1, {0, 6}, Result::Primes(3, 10), 1).ok());
  EXPECT_EQ(verifier.Holding(1), (Range{0, 10}));  // not covered yet
  // Outside the check, or overlapping a part already in: refused, nothing changes.
  EXPECT_EQ(verifier.OnRecomputed(1, {8, 12}, Result::Primes(0, 0), 2).code(),
            StatusCode::kInvalid);
  EXPECT_EQ(verifier.OnRecomputed(1, {5, 7}, Result::Primes(0, 0), 2).code(), StatusCode::kInvalid);
  EXPECT_TRUE(verifier.OnRecomputed(1, {6, 10}, Result::Primes(1, 7), 3).ok());
  EXPECT_EQ(verifier.Holding(1), std::nullopt);
  EXPECT_TRUE(verifier.Idle());
  EXPECT_EQ(verifier.View().checked, 1u);
  EXPECT_FALSE(verifier.failed());
}

TEST(VerifierTest, PartsThatMergeToAnotherResultFail) {
  Verifier verifier({1, 1}, {"a", "b"});
  verifier.OnMerged(0, {0, 10}, Result::Primes(4, 17));
  ASSERT_EQ(verifier.Assign(1), (Range{0, 10}));
  EXPECT_TRUE(verifier.OnRecomputed(1, {0, 6}, Result::Primes(3, 10), 1).ok());
  EXPECT_EQ(verifier.OnRecomputed(1, {6, 10}, Result::Primes(2, 7), 3).code(),
            StatusCode::kTerminal);
  EXPECT_TRUE(verifier.failed());
}

TEST(VerifierTest, ALostRecomputationGoesBackToThePending) {
  Verifier verifier({1, 1}, {"a", "b", "c"});
  verifier.OnMerged(0, {0, 10}, Result::Primes(4, 17));
  ASSERT_EQ(verifier.Assign(1), (Range{0, 10}));
  EXPECT_TRUE(verifier.OnRecomputed(1, {0, 5}, Result::Primes(3, 10), 1).ok());
  verifier.Release(1);  // its part is forgotten: the next worker does it all
  EXPECT_EQ(verifier.Holding(1), std::nullopt);
  EXPECT_FALSE(verifier.Idle());
  EXPECT_EQ(verifier.Assign(2), (Range{0, 10}));
  EXPECT_EQ(verifier.OnRecomputed(1, {0, 10}, Result::Primes(4, 17), 1).code(),
            StatusCode::kInvalid);
  EXPECT_TRUE(verifier.OnRecomputed(2, {0, 10}, Result::Primes(4, 17), 2).ok());
  EXPECT_EQ(verifier.View().checked, 1u);
}

TEST(VerifierTest, SignalsOnlyWaitingWorkersThatCanTakeACheck) {
  Verifier verifier({1, 1}, {"a", "b", "c"});
  verifier.SetWaiting(0, true);
  verifier.SetWaiting(1, true);
  EXPECT_TRUE(verifier.TakeSignals().empty());  // nothing pending
  verifier.OnMerged(0, {0, 10}, Result::Primes(4, 17));
  // a computed it; c is not waiting: only b.
  EXPECT_EQ(verifier.TakeSignals(), std::vector<balance::WorkerId>{1});
  EXPECT_TRUE(verifier.TakeSignals().empty());  // once
}

TEST(VerifierTest, CostIsCountedPerWorker) {
  Verifier verifier({1, 1}, {"a", "b"});
  verifier.AddCost(1, 0.5, 0.6);
  verifier.AddCost(1, 0.25, 0.3);
  const VerificationView view = verifier.View();
  EXPECT_DOUBLE_EQ(view.cpu_s, 0.75);
  EXPECT_DOUBLE_EQ(view.worker_cpu_s[1], 0.75);
  EXPECT_DOUBLE_EQ(view.worker_busy_s[1], 0.9);
  EXPECT_DOUBLE_EQ(view.worker_cpu_s[0], 0);
}

// --- JobSession with verification ---

JobConfig VerifiedPrimesJob(std::vector<std::string> workers, double fraction) {
  JobConfig config;
  config.id = "job-v";
  config.token = "secret";
  config.workload = testing::PrimesWorkload(20000);
  config.policy.options = balance::SelfSchedOptions{500};
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  config.verify = {fraction, 99};
  return config;
}

// A worker's report of `range`: the true result, or a forged one: no primes
// where there are some (a count the range could hold: one it could not is
// refused before verification sees it, forged_reports_test.cc).
ReportMessage Report(const JobSession& session, const std::string& worker, Range range,
                     bool forge) {
  ReportMessage report;
  report.worker = worker;
  report.idle = true;
  report.position = range.end;
  report.calc_seconds = 0.1;
  report.cpu_seconds = 0.1;
  auto kernel = kernels::MakeKernel(session.config().workload);
  EXPECT_TRUE(kernel.ok());
  auto result = (*kernel)->Compute(range);
  EXPECT_TRUE(result.ok());
  if (forge) *result = Result::Primes(0, 0);
  report.completed.push_back({range, result->ToJson()});
  return report;
}

// Runs the job with the workers taking turns until it is finished; `liar`
// forges every result it reports.
void RunVerifiedToEnd(JobSession& session, const std::string& liar = "") {
  std::map<std::string, Range> leases;
  double now = 1;
  for (int guard = 0; guard < 10000 && !session.Finished(); ++guard) {
    for (const auto& prior : session.config().workers) {
      ReportMessage report;
      report.worker = prior.name;
      report.idle = true;
      if (auto it = leases.find(prior.name); it != leases.end()) {
        report = Report(session, prior.name, it->second, prior.name == liar);
        leases.erase(it);
      }
      auto reply = session.HandleReport(report, now += 0.01);
      ASSERT_TRUE(reply.ok()) << reply.status().ToString();
      if (reply->kind == Reply::Kind::kLease) leases[prior.name] = reply->lease;
    }
  }
}

TEST(JobSessionVerifyTest, OneWorkerIsRefused) {
  auto session = JobSession::Create(VerifiedPrimesJob({"only"}, 0.5), 0);
  EXPECT_EQ(session.status().code(), StatusCode::kInvalid);
}

TEST(JobSessionVerifyTest, HonestWorkersPassEveryCheckAndTheResultIsExact) {
  auto created = JobSession::Create(VerifiedPrimesJob({"a", "b", "c"}, 1), 0);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  JobSession& session = **created;
  RunVerifiedToEnd(session);
  ASSERT_TRUE(session.Finished());
  const JobView view = session.View();
  EXPECT_EQ(view.result, *kernels::ReferenceResult(session.config().workload));
  EXPECT_TRUE(view.verification.failure.empty()) << view.verification.failure;
  // At fraction 1 every completion is recomputed once, on another worker.
  EXPECT_EQ(view.verification.items, view.items);
  EXPECT_EQ(view.verification.checked, view.verification.sampled);
  EXPECT_EQ(view.verification.sampled, view.verification.ranges);
  EXPECT_EQ(view.verification.pending, 0u);
  EXPECT_GT(view.verification.cpu_s, 0);
  EXPECT_EQ(view.completed, view.items);
}

TEST(JobSessionVerifyTest, AForgingWorkerFailsTheJobNamingItAndTheRange) {
  auto created = JobSession::Create(VerifiedPrimesJob({"a", "liar", "c"}, 1), 0);
  ASSERT_TRUE(created.ok());
  JobSession& session = **created;
  RunVerifiedToEnd(session, "liar");
  ASSERT_TRUE(session.Finished());
  const std::string failure = session.View().verification.failure;
  EXPECT_NE(failure.find("verification failed"), std::string::npos) << failure;
  EXPECT_NE(failure.find("'liar'"), std::string::npos) << failure;
  // Every reply after the failure is "done".
  auto reply = session.HandleReport(ReportMessage{"a", 0, "", {}, 0, 0, 0, true, false}, 9);
  ASSERT_TRUE(reply.ok());
  EXPECT_EQ(reply->kind, Reply::Kind::kDone);
}

TEST(JobSessionVerifyTest, WithoutVerificationAForgedResultIsMerged) {
  // The trust model (docs/trust.md): the token does not make results true.
  auto created = JobSession::Create(VerifiedPrimesJob({"a", "liar"}, 0), 0);
  ASSERT_TRUE(created.ok());
  RunVerifiedToEnd(**created, "liar");
  const JobView view = (*created)->View();
  EXPECT_TRUE(view.done);
  EXPECT_LT(view.result.primes().count,
            kernels::ReferenceResult((*created)->config().workload)->primes().count);
  EXPECT_EQ(view.verification.sampled, 0u);
}

ReportMessage IdleReport(const std::string& worker) {
  ReportMessage report;
  report.worker = worker;
  report.idle = true;
  return report;
}

TEST(JobSessionVerifyTest, ACheckWaitsForAnotherWorkerAndSurvivesItsLoss) {
  // One chunk holds the whole job: a computes it, b and c wait.
  JobConfig config = VerifiedPrimesJob({"a", "b", "c"}, 1);
  config.policy.options = balance::SelfSchedOptions{config.workload.items};
  auto created = JobSession::Create(config, 0);
  ASSERT_TRUE(created.ok()) << created.status().ToString();
  JobSession& session = **created;
  auto lease = session.HandleReport(IdleReport("a"), 1);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->kind, Reply::Kind::kLease);
  EXPECT_EQ(session.HandleReport(IdleReport("b"), 1.1)->kind, Reply::Kind::kWait);
  // a hands the job in: every item is merged, but the job is not finished
  // until another worker has recomputed it; a itself is told to wait, not done.
  auto after = session.HandleReport(Report(session, "a", lease->lease, false), 2);
  ASSERT_TRUE(after.ok());
  EXPECT_EQ(after->kind, Reply::Kind::kWait);
  EXPECT_EQ(session.completed(), config.workload.items);
  EXPECT_FALSE(session.Finished());
  // b, waiting, is signalled to take the check; a is not (its own range).
  EXPECT_EQ(session.TakeSignals(), std::vector<std::string>{"b"});
  auto check = session.HandleReport(IdleReport("b"), 3);
  ASSERT_TRUE(check.ok());
  EXPECT_EQ(check->kind, Reply::Kind::kLease);
  EXPECT_EQ(check->lease, lease->lease);
  // b dies before handing it in: c recomputes it instead.
  ASSERT_TRUE(session.WorkerLost("b", 4).ok());
  auto again = session.HandleReport(IdleReport("c"), 5);
  ASSERT_TRUE(again.ok());
  ASSERT_EQ(again->kind, Reply::Kind::kLease);
  EXPECT_EQ(again->lease, lease->lease);
  // c hands it in in two parts, as a heartbeat would (regression: the parts
  // matched the check in neither report, and the job never finished).
  const Range whole = again->lease;
  const Range half{whole.begin, whole.begin + whole.size() / 2};
  ReportMessage heartbeat = Report(session, "c", half, false);
  heartbeat.idle = false;
  auto more = session.HandleReport(heartbeat, 5.5);
  ASSERT_TRUE(more.ok());
  EXPECT_EQ(more->kind, Reply::Kind::kContinue);
  EXPECT_EQ(more->lease, whole);
  EXPECT_FALSE(session.Finished());
  auto done = session.HandleReport(Report(session, "c", {half.end, whole.end}, false), 6);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->kind, Reply::Kind::kDone);
  EXPECT_TRUE(session.Finished());
  const VerificationView view = session.View().verification;
  EXPECT_EQ(view.checked, 1u);
  EXPECT_EQ(view.items, config.workload.items);
  EXPECT_EQ(view.finished_at, 6);
  // The check's CPU seconds are c's, not counted as the job's work elsewhere.
  EXPECT_DOUBLE_EQ(view.worker_cpu_s[2], 0.2);
}

}  // namespace
}  // namespace ballast::coordinator
