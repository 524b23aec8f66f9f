// JobSession: the coordinator's checks on what workers report, without HTTP.
#include "coordinator/job_session.h"

#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>

#include "tests/coordinator/session_reports.h"
#include "tests/support/policy_spec.h"
#include "tests/support/primes_workload.h"
#include "worker/kernels/kernel.h"
#include "worker/kernels/reference.h"

namespace ballast::coordinator {
namespace {

using balance::Range;
using balance::Reply;
using protocol::ReportMessage;
using session_reports::Compute;
using session_reports::Finished;
using session_reports::Idle;
using session_reports::NewSession;
using session_reports::Reference;

// A primes job of `limit` (trial division, one item per odd candidate).
JobConfig PrimesJob(uint64_t limit, std::vector<std::string> workers,
                    std::string policy = "selfsched") {
  JobConfig config;
  config.id = "job-1";
  config.token = "secret";
  config.workload = testing::PrimesWorkload(limit);
  config.policy = testing_support::PolicyNamed(policy);
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  config.lease_seconds = 10;
  return config;
}

// An exec job of `items` that run `true`, under `policy`, on workers `a` (and
// whoever else is named), each of prior 1.
JobConfig ExecJob(uint64_t items, std::string policy, std::vector<std::string> workers = {"a"}) {
  JobConfig config;
  config.id = "job-1";
  config.token = "secret";
  config.workload.kind = workload::WorkloadKind::kExec;
  config.workload.exec.command = {"true"};
  config.workload.items = items;
  config.policy = testing_support::PolicyNamed(policy);
  for (auto& name : workers) config.workers.push_back({name, 1.0});
  config.lease_seconds = 10;
  return config;
}

// Runs the job to its end with the workers taking turns; returns the result.
workload::Result RunToEnd(JobSession& session, double now = 1) {
  std::map<std::string, Range> leases;
  for (int guard = 0; guard < 100000 && !session.Finished(); ++guard) {
    for (const auto& prior : session.config().workers) {
      auto it = leases.find(prior.name);
      ReportMessage report =
          it == leases.end() ? Idle(prior.name) : Finished(session, prior.name, it->second);
      leases.erase(prior.name);
      auto reply = session.HandleReport(report, now += 0.01);
      EXPECT_TRUE(reply.ok()) << reply.status().ToString();
      if (reply->kind == Reply::Kind::kLease) leases[prior.name] = reply->lease;
    }
  }
  return session.View().result;
}

TEST(JobSessionTest, RunsAJobToTheExactResult) {
  auto session = NewSession(PrimesJob(30000, {"a", "b", "c"}));
  const workload::Result result = RunToEnd(*session);
  EXPECT_TRUE(session->Finished());
  EXPECT_EQ(result.primes().count, 3245u);  // pi(30000)
  EXPECT_EQ(result, Reference(session->config().workload));
  EXPECT_EQ(session->View().completed, session->config().workload.items);
}

TEST(JobSessionTest, RefusesARangeNeverLeasedAndChangesNothing) {
  auto session = NewSession(PrimesJob(10000, {"a", "b"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->kind, Reply::Kind::kLease);
  // b reports a's lease as its own.
  auto refused = session->HandleReport(Finished(*session, "b", lease->lease), 2);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("never leased to worker 'b'"), std::string::npos);
  const JobView view = session->View();
  EXPECT_EQ(view.completed, 0u);
  EXPECT_EQ(view.refused_reports, 1u);
  EXPECT_EQ(view.workers[1].reports, 0u);
  // Beyond the job's end is refused too.
  auto beyond = Idle("a");
  beyond.completed.push_back({{0, session->config().workload.items + 5},
                              Compute(session->config().workload, lease->lease)});
  EXPECT_FALSE(session->HandleReport(beyond, 3).ok());
}

TEST(JobSessionTest, RefusesAResultOfAnotherWorkload) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ReportMessage report = Idle("a");
  report.completed.push_back({lease->lease, workload::Result::Matmul(1, 2, 3).ToJson()});
  auto refused = session->HandleReport(report, 2);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("completed[0].result"), std::string::npos);
  EXPECT_EQ(session->View().completed, 0u);
}

TEST(JobSessionTest, UnknownWorkerIsNotFound) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  EXPECT_EQ(session->HandleReport(Idle("mallory"), 1).status().code(), StatusCode::kNotFound);
  EXPECT_EQ(session->WorkerLost("mallory", 1).code(), StatusCode::kNotFound);
}

// A primes job on workers a and b, leases of 5 s: a is leased at t = 0,
// goes silent, and is declared lost at t = 6; its lease goes back to the pool.
std::unique_ptr<JobSession> WithALostWorker(const JobConfig& config, Range& leased) {
  auto session = NewSession(config);
  auto lease = session->HandleReport(Idle("a"), 0);
  EXPECT_EQ(lease->kind, Reply::Kind::kLease);
  leased = lease->lease;
  session->Tick(6);
  EXPECT_EQ(session->View().workers[0].lost, 1u);
  return session;
}

JobConfig TwoWorkerJob() {
  auto config = PrimesJob(20000, {"a", "b"});
  config.lease_seconds = 5;
  return config;
}

TEST(JobSessionTest, AResultFinishedTwiceIsMergedOnce) {
  const JobConfig config = TwoWorkerJob();
  Range leased;
  auto session = WithALostWorker(config, leased);
  std::optional<Range> again;
  for (int i = 0; i < 100 && !again; ++i) {
    auto reply = session->HandleReport(Idle("b"), 7);
    ASSERT_TRUE(reply.ok());
    if (reply->kind == Reply::Kind::kLease && reply->lease.begin == leased.begin) {
      again = reply->lease;
    } else if (reply->kind == Reply::Kind::kLease) {
      ASSERT_TRUE(session->HandleReport(Finished(*session, "b", reply->lease), 7).ok());
    }
  }
  ASSERT_TRUE(again.has_value());
  // Both finish the same items: the first result counts, the second is dropped.
  ReportMessage first = Finished(*session, "a", leased);
  first.cpu_seconds = 0.09;
  ASSERT_TRUE(session->HandleReport(first, 8).ok());
  const double b_busy_before = session->View().workers[1].busy_s;
  ReportMessage second = Finished(*session, "b", *again);
  second.calc_seconds = 0.25;
  second.cpu_seconds = 0.2;
  ASSERT_TRUE(session->HandleReport(second, 9).ok());
  const JobView view = session->View();
  EXPECT_EQ(view.dropped_completions, 1u);
  // b's seconds on the dropped copy are work done twice: not the job's work,
  // and not what b's speed is measured over.
  EXPECT_DOUBLE_EQ(view.workers[1].dropped_busy_s, 0.25);
  EXPECT_DOUBLE_EQ(view.workers[1].dropped_cpu_s, 0.2);
  EXPECT_DOUBLE_EQ(view.workers[1].MergedBusySeconds(), b_busy_before);
  EXPECT_DOUBLE_EQ(view.workers[0].dropped_busy_s, 0);
  EXPECT_DOUBLE_EQ(view.workers[0].dropped_cpu_s, 0);
  RunToEnd(*session, 10);
  EXPECT_EQ(session->View().result, Reference(config.workload));
}

// A copy still under way when the job ends never reports its seconds: they
// count as work done twice from the worker's last measured report to the end
// (WorkerView::cut_short_s), and a report of that copy after the end
// replaces them with its own seconds. Worker a goes silent and is lost; b
// asks at t = 7 and is leased a's items again; a comes back, hands them in
// and computes the rest, and the job ends with b's copy under way.
TEST(JobSessionTest, ACopyStillComputingWhenTheJobEndsCountsItsSecondsAsWorkDoneTwice) {
  Range leased;
  auto session = WithALostWorker(TwoWorkerJob(), leased);
  auto copy = session->HandleReport(Idle("b"), 7);
  ASSERT_EQ(copy->kind, Reply::Kind::kLease);
  ASSERT_EQ(copy->lease.begin, leased.begin) << "the pool's front is a's lease";
  double now = 8;
  auto reply = session->HandleReport(Finished(*session, "a", leased), now);
  while (reply.ok() && reply->kind == Reply::Kind::kLease) {
    reply = session->HandleReport(Finished(*session, "a", reply->lease), now += 0.5);
  }
  ASSERT_TRUE(session->Finished());
  JobView view = session->View();
  EXPECT_DOUBLE_EQ(view.workers[1].cut_short_s, now - 7);
  EXPECT_DOUBLE_EQ(view.workers[1].DuplicateBusySeconds(), now - 7);
  EXPECT_DOUBLE_EQ(view.workers[0].cut_short_s, 0) << "the worker that ended the job";
  // b hands its copy in after the end: its own seconds count instead.
  ReportMessage late = Finished(*session, "b", copy->lease);
  late.calc_seconds = now + 1 - 7;
  ASSERT_TRUE(session->HandleReport(late, now + 1).ok());
  view = session->View();
  EXPECT_DOUBLE_EQ(view.workers[1].cut_short_s, 0);
  EXPECT_DOUBLE_EQ(view.workers[1].DuplicateBusySeconds(), view.workers[1].dropped_busy_s);
  EXPECT_GT(view.workers[1].dropped_busy_s, 0);
}

TEST(JobSessionTest, ALeavingWorkerHandsBackTheRestOfItsLease) {
  auto session = NewSession(PrimesJob(50000, {"a", "b"}, "equal"));
  auto lease = session->HandleReport(Idle("a"), 0);
  ASSERT_EQ(lease->kind, Reply::Kind::kLease);
  // a finishes the first ten items of its lease, then leaves (SIGTERM).
  const Range part{lease->lease.begin, lease->lease.begin + 10};
  ReportMessage leaving = Finished(*session, "a", part);
  leaving.idle = false;
  leaving.leaving = true;
  auto done = session->HandleReport(leaving, 1);
  ASSERT_TRUE(done.ok());
  EXPECT_EQ(done->kind, Reply::Kind::kDone);
  EXPECT_EQ(session->View().completed, 10u);
  // b alone finishes everything, the rest of a's lease included.
  RunToEnd(*session, 2);
  EXPECT_TRUE(session->Finished());
  EXPECT_EQ(session->View().result, Reference(session->config().workload));
}

// A worker that joins mid-job (its node became eligible) is taken in by the
// policy: with adaptive it steals from the worker holding everything, and
// the job ends with the exact result, every item merged once.
TEST(JobSessionTest, AWorkerJoiningMidJobTakesWorkAndTheResultIsExact) {
  for (const std::string policy : {"adaptive", "mms", "selfsched", "equal"}) {
    SCOPED_TRACE(policy);
    auto session = NewSession(PrimesJob(30000, {"a"}, policy));
    auto first = session->HandleReport(Idle("a"), 0);
    ASSERT_EQ(first->kind, Reply::Kind::kLease);
    ASSERT_TRUE(session->AddWorker({"b", 1.0}, 2.0, 1).ok());
    EXPECT_TRUE(session->HasWorker("b"));
    EXPECT_EQ(session->config().workers.size(), 2u);
    ASSERT_EQ(session->View().workers.size(), 2u);
    EXPECT_EQ(session->View().workers[1].name, "b");
    auto joined = session->HandleReport(Idle("b"), 1);
    ASSERT_TRUE(joined.ok()) << joined.status().ToString();
    if (policy == "adaptive") {
      // The lone worker held the whole job: the newcomer steals its far end.
      ASSERT_EQ(joined->kind, Reply::Kind::kLease);
      EXPECT_EQ(joined->lease.end, first->lease.end);
    }
    // a then hands in its lease as far as its new end, and both run to the end.
    const auto cut = session->SignalLease("a");
    const Range a_done = cut ? *cut : first->lease;
    ASSERT_TRUE(session->HandleReport(Finished(*session, "a", a_done), 2).ok());
    if (joined->kind == Reply::Kind::kLease) {
      ASSERT_TRUE(session->HandleReport(Finished(*session, "b", joined->lease), 2).ok());
    }
    const workload::Result result = RunToEnd(*session, 3);
    EXPECT_TRUE(session->Finished());
    EXPECT_EQ(result, Reference(session->config().workload));
    EXPECT_EQ(session->View().dropped_completions, 0u);
    // adaptive stole for it, selfsched leased it chunks of the pool (mms
    // stopped a, which in this test hands in its whole lease regardless;
    // equal gives a newcomer no share).
    if (policy == "adaptive" || policy == "selfsched") {
      EXPECT_GT(session->View().workers[1].items, 0u);
    }
  }
}

TEST(JobSessionTest, AddingAWorkerAlreadyInTheJobChangesNothing) {
  auto session = NewSession(PrimesJob(10000, {"a", "b"}));
  ASSERT_TRUE(session->WorkerLost("b", 1).ok());
  ASSERT_TRUE(session->AddWorker({"b", 5.0}, std::nullopt, 2).ok());
  const JobView view = session->View();
  ASSERT_EQ(view.workers.size(), 2u);
  EXPECT_EQ(view.workers[1].prior_speed, 1.0);
  // The lost worker may report again, as before.
  EXPECT_TRUE(session->HandleReport(Idle("b"), 3).ok());
}

TEST(JobSessionTest, AJoiningWorkerWithABadPriorNameOrCoresIsRefused) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  for (const auto& [prior, cores, expected] :
       std::vector<std::tuple<balance::WorkerPrior, std::optional<double>, std::string>>{
           {{"", 1.0}, std::nullopt, "needs a name"},
           {{"b", 0.0}, std::nullopt, "worker b: speed 0"},
           {{"b", 1.0}, 0.0, "worker 'b': expected a number of cores > 0, got 0"},
           {{"b", 1.0}, std::nan(""), "expected a number of cores > 0"}}) {
    const Status status = session->AddWorker(prior, cores, 1);
    EXPECT_EQ(status.code(), StatusCode::kInvalid);
    EXPECT_NE(status.message().find(expected), std::string::npos) << status.message();
  }
  EXPECT_EQ(session->View().workers.size(), 1u);
  EXPECT_FALSE(session->HasWorker("b"));
}

// A joining worker's start timeout and the bound on its first report's
// seconds run from when it joined, not from the job's start.
TEST(JobSessionTest, AJoiningWorkersClocksStartWhenItJoins) {
  auto config = PrimesJob(10000, {"a"});
  config.start_timeout_s = 3;
  auto session = NewSession(config);
  ASSERT_TRUE(session->HandleReport(Idle("a"), 0).ok());
  ASSERT_TRUE(session->AddWorker({"late", 1.0}, std::nullopt, 100).ok());
  EXPECT_DOUBLE_EQ(session->NextDeadline(), std::min(103.0, 0 + config.lease_seconds));
  session->Tick(102);
  EXPECT_EQ(session->View().workers[1].lost, 0u);
  ReportMessage first = Idle("late");
  first.calc_seconds = 50;  // it has been in the job for 0.5 s
  ASSERT_TRUE(session->HandleReport(first, 100.5).ok());
  EXPECT_DOUBLE_EQ(session->View().workers[1].busy_s, 0.5 + kReportSlackSeconds);
  ASSERT_TRUE(session->AddWorker({"ghost", 1.0}, std::nullopt, 200).ok());
  session->Tick(202.9);
  EXPECT_EQ(session->View().workers[2].lost, 0u);
  session->Tick(203);
  EXPECT_EQ(session->View().workers[2].lost, 1u);
}

TEST(JobSessionTest, AWorkerThatNeverStartsLosesItsShare) {
  auto config = PrimesJob(30000, {"a", "ghost"}, "weighted");
  config.start_timeout_s = 3;
  auto session = NewSession(config);
  EXPECT_DOUBLE_EQ(session->NextDeadline(), 3);
  session->Tick(3);
  EXPECT_EQ(session->View().workers[1].lost, 1u);
  std::vector<std::string> one = {"a"};
  // a alone can finish: the ghost's reserved share went back to the pool.
  std::optional<Range> lease;
  for (int i = 0; i < 10000 && !session->Finished(); ++i) {
    auto reply = session->HandleReport(lease ? Finished(*session, "a", *lease) : Idle("a"), 4);
    ASSERT_TRUE(reply.ok());
    lease.reset();
    if (reply->kind == Reply::Kind::kLease) lease = reply->lease;
    ASSERT_NE(reply->kind, Reply::Kind::kWait);
  }
  EXPECT_TRUE(session->Finished());
}

// Neither a primes item (computed from its number) nor an exec one (its
// command fetches its inputs inside its run, which the worker's measured
// speed holds) has a transfer for adaptive to probe: a lease from the pool is
// sized as predicted at once, not as a slow-start probe
// (JobInfo::inputs_cross_links).
TEST(JobSessionTest, APrimesOrExecJobTakesWorkFromThePoolWithoutAProbe) {
  for (JobConfig config :
       {PrimesJob(30000, {"a", "ghost"}, "adaptive"), ExecJob(1000, "adaptive", {"a", "ghost"})}) {
    SCOPED_TRACE(workload::WorkloadKindName(config.workload.kind));
    config.start_timeout_s = 3;
    auto session = NewSession(config);
    auto own = session->HandleReport(Idle("a"), 0);
    ASSERT_EQ(own->kind, Reply::Kind::kLease);
    session->Tick(3);  // the ghost never started: its share goes to the pool
    ASSERT_EQ(session->View().workers[1].lost, 1u);
    ReportMessage done = Finished(*session, "a", own->lease);
    done.calc_seconds = 4;  // its share took it 4 s: a probe would be 0.2 s of work
    auto next = session->HandleReport(done, 4);
    ASSERT_TRUE(next.ok());
    ASSERT_EQ(next->kind, Reply::Kind::kLease);
    // Alone, it is given the whole rest of the job in one lease.
    EXPECT_EQ(next->lease.size() + own->lease.size(), session->config().workload.items);
  }
}

// After a steal the victim's lease ends nearer than it was told: a signal to
// it carries the cut lease, so that it stops there on receipt. The thief's
// signal carries the lease it was just given; a worker with no lease, or an
// unknown one, is sent none.
TEST(JobSessionTest, ASignalCarriesTheLeaseAsAStealCutIt) {
  auto session = NewSession(PrimesJob(30000, {"a", "b"}, "adaptive"));
  EXPECT_FALSE(session->SignalLease("a"));  // holds nothing yet
  auto a = session->HandleReport(Idle("a"), 0);
  auto b = session->HandleReport(Idle("b"), 0);
  ASSERT_EQ(a->kind, Reply::Kind::kLease);
  ASSERT_EQ(b->kind, Reply::Kind::kLease);
  EXPECT_EQ(session->SignalLease("b"), b->lease);  // as it was told
  // b is slow: ten items in its first second.
  ReportMessage progress = Finished(*session, "b", {b->lease.begin, b->lease.begin + 10});
  progress.idle = false;
  progress.calc_seconds = 1;
  ASSERT_EQ(session->HandleReport(progress, 1)->kind, Reply::Kind::kContinue);
  // a finished its whole share in that second and takes the end of b's.
  ReportMessage finished = Finished(*session, "a", a->lease);
  finished.calc_seconds = 1;
  auto stolen = session->HandleReport(finished, 1);
  ASSERT_EQ(stolen->kind, Reply::Kind::kLease);
  EXPECT_EQ(stolen->lease.end, b->lease.end);
  const auto cut = session->SignalLease("b");
  ASSERT_TRUE(cut.has_value());
  EXPECT_EQ(*cut, (Range{b->lease.begin, stolen->lease.begin}));
  EXPECT_EQ(session->SignalLease("a"), stolen->lease);
  EXPECT_FALSE(session->SignalLease("nobody"));
}

TEST(JobSessionTest, EveryPolicyResumesFromACheckpointWithoutRedoingFinishedItems) {
  for (const std::string& policy : balance::PolicyNames()) {
    SCOPED_TRACE(policy);
    auto first = NewSession(PrimesJob(20000, {"a", "b", "c"}, policy));
    // Everyone gets a lease; a finishes its own; then the coordinator restarts.
    std::optional<Range> lease_of_a;
    for (const std::string name : {"a", "b", "c"}) {
      auto reply = first->HandleReport(Idle(name), 1);
      ASSERT_TRUE(reply.ok());
      if (name == "a" && reply->kind == Reply::Kind::kLease) lease_of_a = reply->lease;
    }
    ASSERT_TRUE(lease_of_a.has_value());
    ASSERT_TRUE(first->HandleReport(Finished(*first, "a", *lease_of_a), 2).ok());
    const Checkpoint checkpoint = first->TakeCheckpoint();
    ASSERT_GT(checkpoint.completed.size(), 0u);
    ASSERT_LT(checkpoint.completed.size(), first->config().workload.items);
    // Through JSON, as the operator keeps it in the job's status.
    auto restored = CheckpointFromJson(workload::WorkloadKind::kPrimes,
                                       nlohmann::json::parse(CheckpointToJson(checkpoint).dump()));
    ASSERT_TRUE(restored.ok()) << restored.status().ToString();
    EXPECT_EQ(restored->completed.Ranges(), checkpoint.completed.Ranges());

    JobConfig config = first->config();
    config.resume = *restored;
    auto second = NewSession(config);
    EXPECT_EQ(second->View().completed, checkpoint.completed.size());
    RunToEnd(*second, 100);
    ASSERT_TRUE(second->Finished());
    EXPECT_EQ(second->View().result, Reference(config.workload));
    // Nothing finished before the restart was leased and computed again:
    // such a completion would overlap finished items and be dropped.
    EXPECT_EQ(second->View().dropped_completions, 0u);
    uint64_t delivered = 0;
    for (const auto& worker : second->View().workers) delivered += worker.items;
    EXPECT_EQ(delivered + checkpoint.completed.size(), config.workload.items);
  }
}

// Regression: when the operator hosting the coordinator restarted mid-job, a
// worker's next report handed in a lease the new session had never granted;
// it was refused as bad (400) and the worker exited, failing its pod.
TEST(JobSessionTest, AReportOfALeaseFromBeforeARestartIsStaleAndChangesNothing) {
  auto config = PrimesJob(20000, {"a", "b"});
  config.session = "first";
  auto first = NewSession(config);
  auto lease_a = first->HandleReport(Idle("a"), 1);
  auto lease_b = first->HandleReport(Idle("b"), 1);
  ASSERT_EQ(lease_a->kind, Reply::Kind::kLease);
  ASSERT_EQ(lease_b->kind, Reply::Kind::kLease);
  EXPECT_EQ(lease_a->session, "first");
  // a finishes its lease and gets the next; b is still computing its own.
  ReportMessage done_a = Finished(*first, "a", lease_a->lease);
  done_a.session = "first";
  auto next_a = first->HandleReport(done_a, 2);
  ASSERT_EQ(next_a->kind, Reply::Kind::kLease);

  // The coordinator restarts; the job is added again from its checkpoint.
  JobConfig again = first->config();
  again.session = "second";
  again.resume = first->TakeCheckpoint();
  auto second = NewSession(again);
  const JobView before = second->View();
  ReportMessage stale_b = Finished(*second, "b", lease_b->lease);
  stale_b.session = "first";
  auto refused_b = second->HandleReport(stale_b, 3);
  EXPECT_EQ(refused_b.status().code(), StatusCode::kConflict);
  EXPECT_NE(refused_b.status().message().find("this coordinator has not leased " +
                                              lease_b->lease.ToString() + " to worker 'b'"),
            std::string::npos)
      << refused_b.status().message();
  EXPECT_NE(refused_b.status().message().find("restarted"), std::string::npos);
  // a's progress report, part of its lease, still computing.
  ReportMessage stale_a = Finished(*second, "a", {next_a->lease.begin, next_a->lease.begin + 10});
  stale_a.session = "first";
  stale_a.idle = false;
  EXPECT_EQ(second->HandleReport(stale_a, 3).status().code(), StatusCode::kConflict);
  const JobView after = second->View();
  EXPECT_EQ(after.completed, before.completed);
  EXPECT_EQ(after.result, before.result);
  EXPECT_EQ(after.messages, 0u);
  EXPECT_EQ(after.refused_reports, 2u);
  for (const WorkerView& worker : after.workers) {
    EXPECT_EQ(worker.reports, 0u) << worker.name;
    EXPECT_EQ(worker.leases, 0u) << worker.name;
    EXPECT_FALSE(worker.contacted) << worker.name;
  }

  // Both drop their leases and ask afresh: this session leases to them.
  ReportMessage ask_a = Idle("a");
  ask_a.session = "first";
  auto fresh_a = second->HandleReport(ask_a, 4);
  ASSERT_TRUE(fresh_a.ok()) << fresh_a.status().ToString();
  ASSERT_EQ(fresh_a->kind, Reply::Kind::kLease);
  EXPECT_EQ(fresh_a->session, "second");
  auto fresh_b = second->HandleReport(Idle("b"), 4);
  ASSERT_EQ(fresh_b->kind, Reply::Kind::kLease);
  // From now on a range a was not leased is bad, whatever session it names.
  ReportMessage wrong = Finished(*second, "a", fresh_b->lease);
  wrong.session = "first";
  EXPECT_EQ(second->HandleReport(wrong, 5).status().code(), StatusCode::kInvalid);

  RunToEnd(*second, 6);
  ASSERT_TRUE(second->Finished());
  EXPECT_EQ(second->View().result, Reference(again.workload));
  EXPECT_EQ(second->View().dropped_completions, 0u);
  uint64_t delivered = 0;
  for (const auto& worker : second->View().workers) delivered += worker.items;
  EXPECT_EQ(delivered + again.resume->completed.size(), again.workload.items);
}

// A session without a name (JobSession used alone) finds no report stale.
TEST(JobSessionTest, WithoutSessionNamesARangeNeverLeasedIsBad) {
  auto session = NewSession(PrimesJob(10000, {"a", "b"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ReportMessage report = Finished(*session, "b", lease->lease);
  report.session = "earlier";
  EXPECT_EQ(session->HandleReport(report, 2).status().code(), StatusCode::kInvalid);
}

TEST(JobSessionTest, ACheckpointThatDoesNotFitIsRefused) {
  EXPECT_FALSE(
      CheckpointFromJson(workload::WorkloadKind::kPrimes, {{"completed", {{5, 3}}}, {"result", {}}})
          .ok());
  EXPECT_FALSE(CheckpointFromJson(workload::WorkloadKind::kPrimes,
                                  {{"completed", {{0, 3}, {2, 9}}},
                                   {"result", workload::Result::Primes(1, 2).ToJson()}})
                   .ok());
  auto config = PrimesJob(1000, {"a"});
  config.resume = Checkpoint{balance::IntervalSet({0, 5000}), workload::Result::Primes(0, 0)};
  EXPECT_EQ(JobSession::Create(config, 0).status().code(), StatusCode::kInvalid);
}

// Issue 13: calcSeconds and cpuSeconds of 1e300 were taken as said and
// stretched the makespan; they are cut to the seconds the coordinator saw.
TEST(JobSessionTest, ReportedSecondsOf1e300AreCutToWhatTheCoordinatorSaw) {
  auto config = PrimesJob(10000, {"a"});
  config.max_worker_cores = 4;
  auto session = NewSession(config);
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ReportMessage forged = Finished(*session, "a", lease->lease);
  forged.calc_seconds = 1e300;
  forged.cpu_seconds = 1e300;
  ASSERT_TRUE(session->HandleReport(forged, 3).ok());
  JobView view = session->View();
  // Two seconds passed since its previous report, plus the slack.
  EXPECT_DOUBLE_EQ(view.workers[0].busy_s, 2 + kReportSlackSeconds);
  EXPECT_DOUBLE_EQ(view.workers[0].cpu_s, (2 + kReportSlackSeconds) * 4);
  EXPECT_EQ(view.clamped_reports, 1u);
  EXPECT_EQ(view.completed, lease->lease.size());
}

TEST(JobSessionTest, HonestSecondsAreKeptAsReported) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ReportMessage report = Finished(*session, "a", lease->lease);
  // A progress report may claim a little more than the coordinator saw.
  report.calc_seconds = 2.5;
  report.cpu_seconds = 2.4;
  ASSERT_TRUE(session->HandleReport(report, 3).ok());
  const JobView view = session->View();
  EXPECT_DOUBLE_EQ(view.workers[0].busy_s, 2.5);
  EXPECT_DOUBLE_EQ(view.workers[0].cpu_s, 2.4);
  EXPECT_EQ(view.clamped_reports, 0u);
}

// A worker in the middle of one long step (an exec item of minutes) sends
// heartbeats: progress reports without computing seconds. The step's seconds,
// reported at its end, are bounded by the time since the report before the
// step, not since the last heartbeat; a claim past that is still cut.
TEST(JobSessionTest, HeartbeatsDuringALongStepDoNotCutItsSeconds) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ReportMessage heartbeat;
  heartbeat.worker = "a";
  heartbeat.position = lease->lease.begin;
  for (double at : {2.0, 3.0, 4.0, 5.0}) {
    auto reply = session->HandleReport(heartbeat, at);
    ASSERT_TRUE(reply.ok());
    EXPECT_EQ(reply->kind, balance::Reply::Kind::kContinue);
  }
  EXPECT_EQ(session->View().workers[0].busy_s, 0);
  ReportMessage finished = Finished(*session, "a", lease->lease);
  finished.calc_seconds = 4.8;
  auto next = session->HandleReport(finished, 5.9);
  ASSERT_TRUE(next.ok());
  JobView view = session->View(/*segments=*/true);
  EXPECT_DOUBLE_EQ(view.workers[0].busy_s, 4.8);
  EXPECT_EQ(view.clamped_reports, 0u);
  ASSERT_EQ(view.workers[0].busy.size(), 1u);
  EXPECT_DOUBLE_EQ(view.workers[0].busy[0].first, 5.9 - 4.8);
  EXPECT_DOUBLE_EQ(view.workers[0].busy[0].second, 5.9);
  // The next step's window starts at that report: a heartbeat at 6.5 leaves
  // it, and 100 s claimed at 7 are cut to 7 - 5.9 plus the slack.
  ASSERT_EQ(next->kind, balance::Reply::Kind::kLease);
  heartbeat.position = next->lease.begin;
  ASSERT_TRUE(session->HandleReport(heartbeat, 6.5).ok());
  ReportMessage forged = Finished(*session, "a", next->lease);
  forged.calc_seconds = 100;
  ASSERT_TRUE(session->HandleReport(forged, 7).ok());
  EXPECT_DOUBLE_EQ(session->View().workers[0].busy_s, 4.8 + (7 - 5.9) + kReportSlackSeconds);
  EXPECT_EQ(session->View().clamped_reports, 1u);
}

// The host samples which workers share their node with another job's; what
// a sample saw holds until the next, and only the running job's time counts.
TEST(JobSessionTest, SharingSamplesAddUpTheTimeEachNodeWasShared) {
  auto session = NewSession(PrimesJob(10000, {"a", "b"}));
  session->SampleSharing({}, 1);  // the first sample starts the clock
  session->SampleSharing({"a"}, 3);
  session->SampleSharing({"a", "b"}, 4);
  session->SampleSharing({}, 8);
  session->SampleSharing({"b", "unknown"}, 9);
  JobView view = session->View();
  EXPECT_DOUBLE_EQ(view.sharing_sampled_s, 8);
  EXPECT_DOUBLE_EQ(view.workers[0].shared_s, 1 + 4);
  EXPECT_DOUBLE_EQ(view.workers[1].shared_s, 4);
  // A sample that goes back in time adds nothing.
  session->SampleSharing({"b"}, 7);
  EXPECT_DOUBLE_EQ(session->View().sharing_sampled_s, 8);
  // Once finished, samples change nothing.
  double now = 10;
  while (!session->Finished()) {
    for (const char* worker : {"a", "b"}) {
      auto reply = session->HandleReport(Idle(worker), now);
      ASSERT_TRUE(reply.ok());
      if (reply->kind == balance::Reply::Kind::kLease) {
        ASSERT_TRUE(session->HandleReport(Finished(*session, worker, reply->lease), now + 1).ok());
      }
    }
    now += 1;
    ASSERT_LT(now, 1000);
  }
  view = session->View();
  session->SampleSharing({"a", "b"}, now + 100);
  session->SampleSharing({"a", "b"}, now + 200);
  EXPECT_DOUBLE_EQ(session->View().sharing_sampled_s, view.sharing_sampled_s);
  EXPECT_DOUBLE_EQ(session->View().workers[0].shared_s, view.workers[0].shared_s);
}

// What ballast_node_speed_timestamp_seconds exports: the last report that
// carried computing time, not a later one without.
TEST(JobSessionTest, TheSpeedIsMeasuredWhenAReportCarriesComputingTime) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  EXPECT_EQ(session->View().workers[0].last_measured, 0);
  ReportMessage report = Finished(*session, "a", lease->lease);
  report.calc_seconds = 1.5;
  ASSERT_TRUE(session->HandleReport(report, 3).ok());
  EXPECT_EQ(session->View().workers[0].last_measured, 3);
  ReportMessage idle = Idle("a");
  idle.calc_seconds = 0;
  ASSERT_TRUE(session->HandleReport(idle, 5).ok());
  EXPECT_EQ(session->View().workers[0].last_measured, 3);
  EXPECT_EQ(session->View().workers[0].last_contact, 5);
}

// A failed item's declared cost was never computed: a corrupt large input
// that fails in a moment must not make its node look fast, neither in the
// view (status, history) nor to the policy.
TEST(JobSessionTest, AFailedItemsCostDoesNotCountTowardItsNodesSpeed) {
  JobConfig config = ExecJob(10, "equal");
  auto costs = std::make_shared<std::vector<double>>(10, 1.0);
  (*costs)[3] = 91;  // a tenth of... most of the work
  config.workload.item_costs = costs;
  auto session = NewSession(config);
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->lease, (Range{0, 10}));
  workload::Result result = workload::Result::ExecSucceeded(9);
  ASSERT_TRUE(result.Merge(workload::Result::ExecFailed({3, 4}, 1, 3)).ok());
  ReportMessage report = Idle("a");
  report.completed.push_back({{0, 10}, result.ToJson()});
  report.position = 10;
  report.calc_seconds = 0.9;
  ASSERT_TRUE(session->HandleReport(report, 2).ok());
  const WorkerView& view = session->View().workers[0];
  EXPECT_EQ(view.items, 10u);
  EXPECT_NEAR(view.cost, 9 * 10.0 / 100, 1e-9) << "the cost of the nine items computed";
  EXPECT_EQ(session->View().result.FailedItems(), 1u);
  EXPECT_TRUE(session->Finished());
}

// The speed samples health::MeasurementNoise reads: each report that
// hands in finished items is one, its merged cost over the computing seconds
// since the previous one (a progress report's between them included); a
// failed item's cost is not in it, and a report with nothing handed in makes
// none.
TEST(JobSessionTest, EveryHandInIsASpeedSampleOverTheSecondsSinceTheLast) {
  JobConfig config = ExecJob(4, "equal");
  config.workload.item_costs =
      std::make_shared<std::vector<double>>(std::vector<double>{3, 1, 1, 1});
  auto session = NewSession(config);
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->lease, (Range{0, 4}));
  ReportMessage progress = Idle("a");
  progress.idle = false;
  progress.position = 0;
  progress.calc_seconds = 2;
  ASSERT_TRUE(session->HandleReport(progress, 3).ok());
  EXPECT_TRUE(session->View().workers[0].speed_samples.empty());
  ReportMessage first = Idle("a");
  first.idle = false;
  first.completed.push_back({{0, 1}, workload::Result::ExecSucceeded(1).ToJson()});
  first.position = 1;
  first.calc_seconds = 1;
  ASSERT_TRUE(session->HandleReport(first, 4).ok());
  ReportMessage rest = Idle("a");
  workload::Result result = workload::Result::ExecSucceeded(2);
  ASSERT_TRUE(result.Merge(workload::Result::ExecFailed({2, 3}, 1, 3)).ok());
  rest.completed.push_back({{1, 4}, result.ToJson()});
  rest.position = 4;
  rest.calc_seconds = 1.5;
  ASSERT_TRUE(session->HandleReport(rest, 6).ok());
  const JobView view = session->View();
  const auto& samples = view.workers[0].speed_samples;
  ASSERT_EQ(samples.size(), 2u);
  // Costs in units where the job costs its 4 items: 3, 1, 1, 1 of 6.
  EXPECT_NEAR(samples[0].cost, 3 * 4.0 / 6, 1e-9);
  EXPECT_DOUBLE_EQ(samples[0].busy_seconds, 3);  // the progress report's 2 s and its own 1
  EXPECT_NEAR(samples[1].cost, 2 * 4.0 / 6, 1e-9) << "item 2 failed: its cost is not in it";
  EXPECT_DOUBLE_EQ(samples[1].busy_seconds, 1.5);
}

// Progress by cost (kubectl ballast top): the completed items' declared
// cost, where the whole job costs its item count.
TEST(JobSessionTest, TheViewCountsTheCompletedItemsCost) {
  JobConfig config = ExecJob(10, "selfsched");
  auto costs = std::make_shared<std::vector<double>>(10, 1.0);
  (*costs)[0] = 91;
  config.workload.item_costs = costs;
  auto session = NewSession(config);
  auto lease = session->HandleReport(Idle("a"), 1);
  ASSERT_TRUE(lease.ok());
  ASSERT_EQ(lease->lease.begin, 0u);
  ReportMessage report = Idle("a");
  report.completed.push_back({{0, 1}, workload::Result::ExecSucceeded(1).ToJson()});
  report.position = 1;
  report.calc_seconds = 0.9;
  ASSERT_TRUE(session->HandleReport(report, 2).ok());
  const auto view = session->View();
  EXPECT_EQ(view.completed, 1u);
  EXPECT_NEAR(view.completed_cost, 91 * 10.0 / 100, 1e-9) << "one item, most of the cost";
}

// Issue 42: an exec job's command may run again for the same range (the
// contract of docs/getting-started.md, "Your own job"), so in the endgame an
// idle fast worker computes a copy of the last worker's remaining items; the
// first result is merged, the other dropped. exec.backups: false keeps a
// command from running twice at once. (The policy's side:
// PolicyTest.AdaptiveBacksUpTheLastLease...)
// An exec job of 100 items, adaptive without slow start or rebalancing, on
// a (10 items a second) and b (1): leased [0, 90) and [90, 100).
std::unique_ptr<JobSession> TwoSpeedExecSession(bool backups, const std::string& keep_dir = "") {
  JobConfig config = ExecJob(100, "adaptive");
  config.workload.exec.backups = backups;
  if (!keep_dir.empty()) {
    config.workload.exec.result.merge = {{"n", workload::MergeRule::kSum}};
    config.workload.exec.result.keep_dir = keep_dir;
  }
  config.policy =
      testing_support::PolicyNamed("adaptive", {{"slowStart", "off"}, {"rebalance", "off"}});
  config.workers = {{"a", 10.0}, {"b", 1.0}};
  config.lease_seconds = 60;
  auto session = NewSession(config);
  EXPECT_EQ(session->HandleReport(Idle("a"), 0)->lease, (Range{0, 90}));
  EXPECT_EQ(session->HandleReport(Idle("b"), 0)->lease, (Range{90, 100}));
  return session;
}

TEST(JobSessionTest, AnExecJobsLastItemsAreBackedUpUnlessItSaysNotOrKeepsItsResultFiles) {
  const auto endgame = [](bool backups, const std::string& keep_dir = "") {
    auto session = TwoSpeedExecSession(backups, keep_dir);
    // b computes about an item a second and is at item 98 at t = 8.5.
    const auto progress = [&](const std::string& worker, Range range, double now, double calc,
                              bool idle) {
      ReportMessage report = Idle(worker);
      report.idle = idle;
      report.completed.push_back({range, workload::Result::ExecSucceeded(range.size()).ToJson()});
      report.position = range.end;
      report.calc_seconds = calc;
      auto reply = session->HandleReport(report, now);
      EXPECT_TRUE(reply.ok()) << reply.status().ToString();
      return *reply;
    };
    progress("b", {90, 91}, 1, 1, false);
    progress("b", {91, 98}, 8.5, 7.5, false);
    (void)session->TakeSignals();
    // a is done with its 90 at t = 9.1: idle, nothing worth stealing.
    const auto reply = progress("a", {0, 90}, 9.1, 9.1, true);
    return std::make_pair(std::move(session), reply);
  };
  {
    auto [session, copy] = endgame(/*backups=*/true);
    ASSERT_EQ(copy.kind, Reply::Kind::kLease);
    EXPECT_EQ(copy.lease, (Range{98, 100}));
    EXPECT_EQ(session->View().policy.backups, 1u);
    // The copy is handed in first and ends the job; b's late result is dropped.
    ReportMessage first = Idle("a");
    first.completed.push_back({{98, 100}, workload::Result::ExecSucceeded(2).ToJson()});
    first.position = 100;
    first.calc_seconds = 0.2;
    EXPECT_EQ(session->HandleReport(first, 9.3)->kind, Reply::Kind::kDone);
    EXPECT_TRUE(session->Finished());
    ReportMessage late = Idle("b");
    late.completed.push_back({{98, 100}, workload::Result::ExecSucceeded(2).ToJson()});
    late.position = 100;
    late.calc_seconds = 2.5;
    EXPECT_EQ(session->HandleReport(late, 11)->kind, Reply::Kind::kDone);
    EXPECT_EQ(session->View().result.exec().succeeded, 100u) << "every item merged once";
  }
  {
    // Without backups no copy is made: a takes b's last item whole (it ends
    // it at about t = 9.2, where b would at 10.7).
    auto [session, reply] = endgame(/*backups=*/false);
    ASSERT_EQ(reply.kind, Reply::Kind::kLease);
    EXPECT_EQ(reply.lease, (Range{99, 100}));
    EXPECT_EQ(session->View().policy.backups, 0u);
  }
  {
    // Regression (issue 61): with keepDir, both copies wrote the range's
    // file and the dropped one's replaced the merged one's (2 of 3 runs).
    // A job that keeps its result files gets no copies, as with backups
    // false: the files kept are those of the results merged.
    auto [session, reply] = endgame(/*backups=*/true, "/data/out");
    ASSERT_EQ(reply.kind, Reply::Kind::kLease);
    EXPECT_EQ(reply.lease, (Range{99, 100}));
    EXPECT_EQ(session->View().policy.backups, 0u);
  }
}

// An idle worker told to wait: the session says why, each worker the policy
// looked at by its name (what the coordinator logs at --verbose).
TEST(JobSessionTest, AnIdleWorkerToldToWaitIsToldWhyByTheOthersNames) {
  auto session = TwoSpeedExecSession(/*backups=*/false);
  EXPECT_EQ(session->WaitReason(), "");
  // b is in its last item at t = 9; a is done with its 90 at t = 9.1.
  ReportMessage b = Idle("b");
  b.idle = false;
  b.completed.push_back({{90, 99}, workload::Result::ExecSucceeded(9).ToJson()});
  b.position = 99;
  b.calc_seconds = 9;
  ASSERT_TRUE(session->HandleReport(b, 9).ok());
  ReportMessage a = Idle("a");
  a.completed.push_back({{0, 90}, workload::Result::ExecSucceeded(90).ToJson()});
  a.position = 90;
  a.calc_seconds = 9.1;
  const auto reply = session->HandleReport(a, 9.1);
  ASSERT_TRUE(reply.ok()) << reply.status().ToString();
  ASSERT_EQ(reply->kind, Reply::Kind::kWait);
  const std::string why = session->WaitReason();
  for (const char* part :
       {"b: sized (learning at ", "it may be in its last item [99, 100) by then",
        "backup: the job's items must not run twice", "b: whole item (learning at "}) {
    EXPECT_NE(why.find(part), std::string::npos) << part << " in: " << why;
  }
  EXPECT_EQ(why.find("a: "), std::string::npos) << why;
}

TEST(JobSessionTest, AFirstReportIsBoundedByTheTimeSinceTheJobStarted) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  ReportMessage first = Idle("a");
  first.calc_seconds = 500;
  ASSERT_TRUE(session->HandleReport(first, 0.5).ok());
  EXPECT_DOUBLE_EQ(session->View().workers[0].busy_s, 0.5 + kReportSlackSeconds);
}

TEST(JobSessionTest, NonFiniteOrNegativeSecondsAndAPositionPastTheEndChangeNothing) {
  auto session = NewSession(PrimesJob(10000, {"a"}));
  ASSERT_TRUE(session->HandleReport(Idle("a"), 1).ok());
  const JobView before = session->View();
  const double kNaN = std::numeric_limits<double>::quiet_NaN();
  const double kInf = std::numeric_limits<double>::infinity();
  for (double seconds : {kNaN, kInf, -kInf, -1.0}) {
    for (bool cpu : {false, true}) {
      ReportMessage report = Idle("a");
      (cpu ? report.cpu_seconds : report.calc_seconds) = seconds;
      auto refused = session->HandleReport(report, 2);
      EXPECT_EQ(refused.status().code(), StatusCode::kInvalid) << seconds;
      EXPECT_NE(refused.status().message().find(cpu ? "cpuSeconds" : "calcSeconds"),
                std::string::npos);
    }
  }
  ReportMessage past = Idle("a");
  past.position = session->config().workload.items + 1;
  auto refused = session->HandleReport(past, 2);
  EXPECT_EQ(refused.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused.status().message().find("position"), std::string::npos);
  ReportMessage run_past = Idle("a");
  run_past.running_end = session->config().workload.items + 1;
  auto refused_run = session->HandleReport(run_past, 2);
  EXPECT_EQ(refused_run.status().code(), StatusCode::kInvalid);
  EXPECT_NE(refused_run.status().message().find("runningEnd"), std::string::npos);
  const JobView after = session->View();
  EXPECT_EQ(after.messages, before.messages);
  EXPECT_EQ(after.workers[0].reports, before.workers[0].reports);
  EXPECT_EQ(after.workers[0].busy_s, before.workers[0].busy_s);
  EXPECT_EQ(after.refused_reports, before.refused_reports + 10);
}

TEST(JobSessionTest, RejectsBadConfigs) {
  auto config = PrimesJob(1000, {"a", "a"});
  EXPECT_EQ(JobSession::Create(config, 0).status().code(), StatusCode::kInvalid);
  config = PrimesJob(1000, {});
  EXPECT_EQ(JobSession::Create(config, 0).status().code(), StatusCode::kInvalid);
}

}  // namespace
}  // namespace ballast::coordinator
